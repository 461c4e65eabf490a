// The attributes of a space's vector tiles with their types, as TileJSON and OGC API Tiles describe them.
import type { Collection } from './ogc-service.js';

export type TileFieldType = 'String' | 'Number' | 'Boolean' | 'Mixed';

const NAMESPACE = '@ns:com:here:xyz';

/** Objects and arrays are attributes as their JSON text (docs/decisions.md, vector tiles). */
const FIELD_TYPES: Record<string, TileFieldType> = { string: 'String', number: 'Number', boolean: 'Boolean', array: 'String', object: 'String' };

/**
 * Every top-level property the collection's statistics found (sampled on large spaces), typed where one type was
 * seen and `Mixed` otherwise, then the feature id and the namespace (as JSON text), which every feature's tile holds.
 */
export function tileFields(collection: Collection): Record<string, TileFieldType> {
  const fields: Record<string, TileFieldType> = {};
  for (const queryable of collection.queryables) {
    if (queryable.path.length === 2 && queryable.path[0] === 'properties') fields[queryable.name] = (queryable.type && FIELD_TYPES[queryable.type]) || 'Mixed';
  }
  return { ...fields, [NAMESPACE]: 'String', id: 'String' };
}
