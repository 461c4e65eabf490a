// Validates and normalizes one input feature (API.md 4.2) before anything is written.
import { MAX_ID_LENGTH } from '../../core/id-limits.js';
import { isObject } from '../../core/json.js';
import { checkJsonValue } from '../../core/json-limits.js';
import type { Geometry } from '../../geo/geometry.js';
import { validateGeometry } from '../../geo/geometry-validation.js';
import { roundPositions } from '../../geo/coordinates.js';
import { hubError } from '../../core/errors.js';
import { newFeatureId } from '../ids.js';
import { normalizeTagList, NUL } from '../tags.js';
import { NS, readNamespace } from '../namespace.js';

/** One input feature after normalization; `undefined` members were not given by the client. */
export interface FeatureInput {
  position: number;
  id: string;
  /** `null` removes the geometry in a patch; undefined leaves it. */
  geometry: Geometry | null | undefined;
  /** User properties without the namespace; undefined when `properties` was absent. */
  properties: Record<string, unknown> | undefined;
  /** Normalized namespace tags when the client sent a tag list. */
  tags: string[] | undefined;
  /** The namespace uuid the client based its edit on (conflict detection, API.md 4.6). */
  uuid: string | undefined;
  /** The namespace version: the version the client read the feature at, its ORIGIN for merges (ADR 002, "Merges"). */
  version: number | undefined;
  /** The namespace space: the space that version is of (a feature copied from another space carries that one's). */
  versionOf: string | undefined;
  extra: Record<string, unknown>;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `"${value}"` : typeof value;
}

/**
 * `prefixId` applies to given and generated ids alike; `pathId` (single-feature routes) wins over the body id.
 * `valuesChecked`: the body's text already showed the feature within the JSON limits (json-limits.ts `checkJsonText`).
 */
export function normalizeFeature(raw: unknown, position: number, prefixId = '', pathId?: string, valuesChecked = false): FeatureInput {
  if (!isObject(raw)) {
    throw hubError('invalidFeature', { position, problem: `is ${describe(raw)}, expected a Feature object` });
  }
  // Before anything else reads it: no stored feature may make a later read or serialization fail.
  if (!valuesChecked) checkJsonValue(raw, `feature at position ${position}`);
  const { type, id: rawId, geometry, properties, bbox: _bbox, ...extra } = raw;
  if (type !== undefined && type !== 'Feature') {
    throw hubError('invalidFeatureType', { position, found: describe(type) });
  }
  let id: string;
  if (pathId !== undefined) id = pathId;
  else if (typeof rawId === 'number' && Number.isFinite(rawId)) id = String(rawId);
  else if (typeof rawId === 'string') id = rawId;
  else id = newFeatureId();
  if (id === '') throw hubError('emptyFeatureId', { position });
  if (id.includes(NUL)) throw hubError('nulInFeatureId', { position });
  id = prefixId + id;
  if (id.length > MAX_ID_LENGTH) {
    throw hubError('invalidFeature', { position, problem: `has an id of ${id.length} characters; at most ${MAX_ID_LENGTH} fit into a URL path` });
  }

  if (geometry !== undefined && geometry !== null) {
    const problem = validateGeometry(geometry);
    if (problem) throw hubError('invalidGeometry', { position, id, problem });
  }
  if (properties !== undefined && properties !== null && !isObject(properties)) {
    throw hubError('invalidFeature', { position, problem: `has properties of type ${describe(properties)}, expected an object` });
  }
  const namespace = readNamespace(properties);
  const { [NS]: _namespace, ...userProperties } = properties ?? {};
  const tags = namespace?.tags;
  if (tags !== undefined && tags !== null && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string'))) {
    throw hubError('invalidFeature', { position, problem: `has namespace tags that are not an array of strings` });
  }
  if (Array.isArray(tags) && tags.some((tag) => (tag as string).includes(NUL))) {
    throw hubError('invalidFeature', { position, problem: 'has a tag containing the NUL character (U+0000), which tags cannot hold' });
  }
  const version = namespace?.version;
  if (version !== undefined && version !== null && !(typeof version === 'number' && Number.isSafeInteger(version) && version >= 0)) {
    throw hubError('invalidFeature', { position, problem: `has a namespace version of ${describe(version)}, expected the non-negative integer version it was read at` });
  }
  return {
    position,
    id,
    geometry: geometry === undefined || geometry === null ? geometry : roundPositions(geometry as Geometry),
    properties: properties === undefined || properties === null ? undefined : userProperties,
    tags: Array.isArray(tags) ? normalizeTagList(tags as string[]) : undefined,
    uuid: typeof namespace?.uuid === 'string' ? namespace.uuid : undefined,
    version: typeof version === 'number' ? version : undefined,
    versionOf: typeof namespace?.space === 'string' ? namespace.space : undefined,
    extra,
  };
}
