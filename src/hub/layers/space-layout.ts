// What a space reads from: its own features, the upstreams of a virtual space, or the layers of a composite (`extends`) space.
import { hubError } from '../../core/errors.js';
import { MAX_ID_LENGTH } from '../../core/id-limits.js';
import { isObject } from '../../core/json.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { StoredSpace } from '../../storage/storage.js';

/** How a virtual space combines its upstreams (API.md 3.7). */
export type VirtualOperation = 'group' | 'merge' | 'override' | 'custom';

const OPERATIONS: readonly VirtualOperation[] = ['group', 'merge', 'override', 'custom'];

/** At most this many upstreams: each is one query per page read through the virtual space. */
export const MAX_UPSTREAMS = 16;

/** A composite space extends a space that may extend one more, as the original hub allows: three layers at most. */
export const MAX_EXTENDS_DEPTH = 2;

export interface VirtualSpec { operation: VirtualOperation; upstreams: string[] }

/** The storage id that marks a virtual space. */
export const VIRTUAL_STORAGE = 'virtualspace';

/**
 * The virtual-space configuration of a definition, undefined for any other space; `storage.params.virtualspace`
 * holds exactly one operation with its list of space ids (checked by `virtualSpec` when the space is written).
 */
export function virtualSpecOf(definition: SpaceDefinition): VirtualSpec | undefined {
  const storage = definition.storage;
  if (!isObject(storage) || storage.id !== VIRTUAL_STORAGE) return undefined;
  return virtualSpec(storage.params);
}

/** The space a composite space extends, undefined for any other space. */
export function baseOf(definition: SpaceDefinition): string | undefined {
  const extended = definition.extends;
  return isObject(extended) && typeof extended.spaceId === 'string' ? extended.spaceId : undefined;
}

const invalid = (member: string, expected: string): never => {
  throw hubError('spaceValidation', { problem: `The property ${member} must be ${expected}.` });
};

/** Validates the params of a `virtualspace` storage: `{"virtualspace": {"<operation>": ["spaceA", …]}}`. */
export function virtualSpec(params: unknown): VirtualSpec {
  const member = 'storage.params.virtualspace';
  const spec = isObject(params) ? params.virtualspace : undefined;
  if (!isObject(spec)) return invalid(member, `an object {"<operation>": [space ids]} with an operation of ${OPERATIONS.join(', ')}`);
  const entries = Object.entries(spec);
  if (entries.length !== 1) return invalid(member, `an object with exactly one operation of ${OPERATIONS.join(', ')}`);
  const [[operation, upstreams]] = entries;
  if (!OPERATIONS.includes(operation as VirtualOperation)) return invalid(member, `an object with one operation of ${OPERATIONS.join(', ')}, not "${operation.slice(0, 40)}"`);
  if (!Array.isArray(upstreams) || upstreams.length === 0 || upstreams.length > MAX_UPSTREAMS
    || !upstreams.every((id) => typeof id === 'string' && id !== '' && id.length <= MAX_ID_LENGTH)) {
    return invalid(`${member}.${operation}`, `an array of 1 to ${MAX_UPSTREAMS} space ids (each of 1 to ${MAX_ID_LENGTH} characters)`);
  }
  if (new Set(upstreams).size !== upstreams.length) return invalid(`${member}.${operation}`, 'a list of different space ids');
  return { operation: operation as VirtualOperation, upstreams: upstreams as string[] };
}

/** Whether the space reads other spaces (virtual or composite). */
export function isLayered(definition: SpaceDefinition): boolean {
  return virtualSpecOf(definition) !== undefined || baseOf(definition) !== undefined;
}

/** The spaces below a space and the space itself, in reading order, plus how they combine. */
export type Layering =
  | { kind: 'plain' }
  | { kind: 'virtual'; combination: 'group' | 'merge' | 'override'; layers: StoredSpace[] }
  | { kind: 'composite'; layers: StoredSpace[] };
