// OGC API Features Part 4 bodies in the hub's form: the columns OGC items show for the namespace go back into it, or are the hub's to set.
import { isObject } from '../../core/json.js';
import { NS } from '../namespace.js';

const isTagList = (value: unknown): value is string[] => Array.isArray(value) && value.every((tag) => typeof tag === 'string');

/**
 * A feature (or a merge patch of one) as an OGC client sends it, for the hub's write pipeline:
 * - a namespace object in the properties is ignored: OGC items never show one, and its uuid or version would
 *   otherwise take part in conflict checks and merges (API.md 4.6) the client knows nothing of;
 * - `createdAt` and `updatedAt` are the hub's: a client such as QGIS sends back every column it read, and storing
 *   them as properties would show stale times for ever after (a property of that name wins on reads);
 * - `tags`, a list of strings as OGC items show it, sets the feature's tags; any other `tags` value stays a property.
 */
export function ogcInputFeature(feature: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(feature.properties)) return feature;
  const { [NS]: _namespace, createdAt: _createdAt, updatedAt: _updatedAt, tags, ...own } = feature.properties;
  if (!isTagList(tags)) return { ...feature, properties: tags === undefined ? own : { ...own, tags } };
  return { ...feature, properties: { ...own, [NS]: { tags } } };
}
