// What a project holds (API.md 10): the checks of a client's members and the stored project the hub builds from them.
import { FORBIDDEN_ID_CHARACTERS, idRule, MAX_ID_LENGTH } from '../../core/id-limits.js';
import { hubError } from '../../core/errors.js';
import type { ProjectRecord } from '../../storage/storage.js';

const STATUSES = ['UNPUBLISHED', 'PUBLISHED'];
const DEFAULT_STATUS = 'UNPUBLISHED';

/**
 * Members the hub sets itself. A client's values for them are ignored rather than refused: clients send back
 * the project they read, and `owner` must not be forgeable.
 */
const HUB_MEMBERS = new Set(['id', 'owner', 'created_at', 'last_update']);

/** The largest project as stored, in bytes of its JSON text: bounds a stored row and, per page, the memory of a list. */
export const MAX_PROJECT_BYTES = 1024 * 1024;

export function isProjectId(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && id.length <= MAX_ID_LENGTH && !FORBIDDEN_ID_CHARACTERS.test(id);
}

export function checkProjectId(id: unknown): string {
  if (!isProjectId(id)) throw hubError('projectValidation', { problem: idRule('id') });
  return id;
}

/** A body's `id` must be absent, null or the id of the path. */
export function checkSameId(input: Record<string, unknown>, id: string): void {
  if (input.id !== undefined && input.id !== null && input.id !== id) throw hubError('projectIdMismatch');
}

/** The members a client may set, `status` checked; `null` stays, to mean "remove" to PATCH. */
export function clientMembers(input: Record<string, unknown>): Record<string, unknown> {
  const members = Object.fromEntries(Object.entries(input).filter(([name]) => !HUB_MEMBERS.has(name)));
  const status = members.status;
  if (status !== undefined && status !== null && !STATUSES.includes(status as string)) {
    throw hubError('projectValidation', { problem: `The property 'status' must be ${STATUSES.join(' or ')}; got ${JSON.stringify(status).slice(0, 60)}.` });
  }
  return members;
}

/** The hub members of a stored project, split from the client's. */
export function splitStored(json: string): { createdAt: number; members: Record<string, unknown> } {
  const { id: _id, owner: _owner, created_at: createdAt, last_update: _lastUpdate, ...members } = JSON.parse(json) as Record<string, unknown>;
  return { createdAt: createdAt as number, members };
}

/**
 * The project as stored and sent: `id` first, the client's members as given, then `status` (where the client put
 * it, UNPUBLISHED when it is absent or null) and the hub's members.
 */
export function projectRecord(id: string, members: Record<string, unknown>, owner: string, createdAt: number, lastUpdate: number): ProjectRecord {
  const status = typeof members.status === 'string' ? members.status : DEFAULT_STATUS;
  const json = JSON.stringify({ id, ...members, status, owner, created_at: createdAt, last_update: lastUpdate });
  const size = Buffer.byteLength(json);
  if (size > MAX_PROJECT_BYTES) throw hubError('projectTooLarge', { size, limit: MAX_PROJECT_BYTES });
  return { id, owner, published: status === 'PUBLISHED', json };
}
