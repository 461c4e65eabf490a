// The client-settable members of a space (API.md 3.1): how each one is validated and normalized.
import { MAX_ID_LENGTH } from '../../core/id-limits.js';
import { isObject, ownMember } from '../../core/json.js';
import { hubError } from '../../core/errors.js';
import { normalizeLogListener } from '../activity-log/log-listener.js';
import { compileProcessors } from '../processors/space-processors.js';
import { VIRTUAL_STORAGE, virtualSpec } from '../layers/space-layout.js';

const LICENSES = new Set(('AFL-3.0 Apache-2.0 Artistic-2.0 BSL-1.0 BSD-2-Clause BSD-3-Clause BSD-3-Clause-Clear CC0-1.0 ' +
  'CC-BY-4.0 CC-BY-SA-4.0 WTFPL ECL-1.0 ECL-2.0 EUPL-1.1 AGPL-3.0-only GPL-2.0-only GPL-3.0-only LGPL-2.1-only ' +
  'LGPL-3.0-only ISC LPPL-1.3c MS-PL MIT MPL-2.0 OSL-3.0 PostgreSQL OFL-1.1 NCSA Unlicense Zlib ODbL-1.0').split(' '));

const MAX_CLIENT_BYTES = 1024;
const SEARCHABLE_TYPES = new Set(['object', 'array', 'string', 'number', 'boolean']);

type FieldNormalizer = (value: unknown, name: string) => unknown;

function invalid(name: string, expected: string): never {
  throw hubError('spaceValidation', { problem: `The property '${name}' must be ${expected}.` });
}

const text: FieldNormalizer = (value, name) => (typeof value === 'string' ? value : invalid(name, 'a string'));

/** The Python client sends `"shared": "true"`; booleans always come back as real booleans. */
const boolean: FieldNormalizer = (value, name) => {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return invalid(name, 'a boolean');
};

const integer = (min: number): FieldNormalizer => (value, name) =>
  Number.isSafeInteger(value) && (value as number) >= min ? value : invalid(name, `an integer of at least ${min}`);

const stringList: FieldNormalizer = (value, name) =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : invalid(name, 'an array of strings');

export function emptyTitle(): never {
  throw hubError('spaceValidation', { problem: "The property 'title' cannot be empty." });
}

const title: FieldNormalizer = (value) => (typeof value === 'string' && value.trim() !== '' ? value : emptyTitle());

const license: FieldNormalizer = (value, name) =>
  typeof value === 'string' && LICENSES.has(value) ? value : invalid(name, `one of ${[...LICENSES].join(', ')}`);

const copyright: FieldNormalizer = (value, name) => {
  if (!Array.isArray(value)) return invalid(name, 'an array of {label, alt} objects');
  return value.map((entry, index) => {
    if (!isObject(entry) || typeof entry.label !== 'string') invalid(`${name}[${index}].label`, 'a string');
    const kept: Record<string, unknown> = { label: entry.label };
    if (entry.alt !== undefined && entry.alt !== null) kept.alt = text(entry.alt, `${name}[${index}].alt`);
    if (entry.scopes !== undefined && entry.scopes !== null) kept.scopes = stringList(entry.scopes, `${name}[${index}].scopes`);
    return kept;
  });
};

const client: FieldNormalizer = (value, name) => {
  if (!isObject(value)) return invalid(name, 'an object');
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_CLIENT_BYTES) {
    throw hubError('spaceValidation', { problem: `The property client is over the allowed limit of ${MAX_CLIENT_BYTES} bytes.` });
  }
  return value;
};

const storage: FieldNormalizer = (value, name) => {
  if (!isObject(value) || typeof value.id !== 'string') return invalid(name, 'an object {id, params}');
  if (value.params !== undefined && value.params !== null && !isObject(value.params)) invalid(`${name}.params`, 'an object');
  if (value.id === VIRTUAL_STORAGE) virtualSpec(value.params);
  return value.params ? { id: value.id, params: value.params } : { id: value.id };
};

/**
 * Connectors come as a map (id → [{eventTypes, params, order}]) or as a list of {id, …}; they are kept as the map.
 * None at all (`[]` or `{}`) is null, so that a PATCH with either removes every connector (API.md 1.9).
 */
const connectors: FieldNormalizer = (value, name) => {
  if (Array.isArray(value)) {
    // A Map, not an object: `byId[id] ??= []` for an id `__proto__` or `constructor` found Object.prototype's member (500).
    const byId = new Map<string, unknown[]>();
    value.forEach((entry, index) => {
      if (!isObject(entry) || typeof entry.id !== 'string') invalid(`${name}[${index}].id`, 'a string');
      const { id, ...config } = entry;
      const configs = byId.get(id as string);
      if (configs) configs.push(config);
      else byId.set(id as string, [config]);
    });
    return value.length === 0 ? null : Object.fromEntries(byId);
  }
  if (!isObject(value)) return invalid(name, 'an object of connector id → configurations, or an array of {id, params}');
  for (const [id, configs] of Object.entries(value)) {
    // null removes that connector in a PATCH.
    if (configs === null) continue;
    if (!Array.isArray(configs) || !configs.every(isObject)) invalid(`${name}.${id}`, 'an array of configuration objects');
  }
  return Object.keys(value).length === 0 ? null : value;
};

/** Processors as connectors; the hub's own (schema-validator, rule-tagger) must compile, so a bad one is refused here. */
const processors: FieldNormalizer = (value, name) => {
  const byId = connectors(value, name);
  compileProcessors(byId, true);
  return byId;
};

/** Listeners as connectors; the hub's own activity log is checked and stored in its returned form (`activity-log-writer`). */
const listeners: FieldNormalizer = (value, name) => normalizeLogListener(connectors(value, name) as Record<string, unknown> | null);

const searchableProperties: FieldNormalizer = (value, name) => {
  if (!isObject(value)) return invalid(name, 'an object of property path → boolean');
  for (const [path, flag] of Object.entries(value)) {
    const type = path.split('::')[1];
    if (type !== undefined && !SEARCHABLE_TYPES.has(type)) invalid(`${name}.${path}`, `typed as one of ${[...SEARCHABLE_TYPES].join(', ')}`);
    if (typeof flag !== 'boolean') invalid(`${name}.${path}`, 'a boolean');
  }
  return value;
};

const sortableProperties: FieldNormalizer = (value, name) =>
  Array.isArray(value) && value.every(Array.isArray) ? value : invalid(name, 'an array of arrays');

const extendsSpace: FieldNormalizer = (value, name) =>
  isObject(value) && typeof value.spaceId === 'string' && value.spaceId !== '' && value.spaceId.length <= MAX_ID_LENGTH
    ? { spaceId: value.spaceId } : invalid(name, `an object {spaceId} naming a space id of 1 to ${MAX_ID_LENGTH} characters`);

export const spaceFields: Record<string, FieldNormalizer> = {
  title, description: text, owner: text, cid: text,
  shared: boolean, readOnly: boolean, enableUUID: boolean, enableHistory: boolean, enableGlobalVersioning: boolean,
  copyright, license, client, packages: stringList, tags: stringList, storage,
  listeners, processors, searchableProperties, sortableProperties, extends: extendsSpace,
  maxVersionCount: integer(-1), versionsToKeep: integer(1), cacheTTL: integer(0),
};

/** Members holding connector configurations: a PATCH that sends one in the list form replaces the stored map wholesale. */
export const CONNECTOR_MEMBERS = ['listeners', 'processors'] as const;

/** Members that may only be set when the space is created (API.md 3.4). */
export const CREATION_ONLY = ['enableUUID', 'enableHistory', 'enableGlobalVersioning'] as const;

/** Validates and normalizes every known member present in `input`; unknown members are dropped. */
export function normalizeSpaceInput(input: Record<string, unknown>): Record<string, unknown> {
  const normalized: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    const normalize = ownMember(spaceFields, name);
    if (!normalize) continue;
    normalized[name] = value === null ? null : normalize(value, name);
  }
  return normalized;
}
