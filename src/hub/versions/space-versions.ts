// Which versions of a space a read may ask for, how a version reference resolves to one, and who a write's versions are recorded for (ADR 002, API.md 12).
import { hubError } from '../../core/errors.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { Claims } from '../access/claims.js';
import type { SpaceVersions, StoredSpace, TagRecord } from '../../storage/storage.js';

/** A tag's name where a version is asked for (`version=`, `versionRef=`, a changeset range). */
export interface TagRef {
  tag: string;
}

/** A point in a space's history as a request names it: HEAD, a number or a tag. */
export type PointRef = 'HEAD' | number | TagRef;

/** A read's version as the request names it: a point, or every kept state of a feature (`*`). */
export type VersionRef = PointRef | '*';

/** What resolving a reference needs of a space: its definition, its version numbers and its tags. */
export interface VersionedSpace {
  readonly space: StoredSpace;
  versions(): Promise<SpaceVersions>;
  tag(id: string): Promise<TagRecord | undefined>;
  tags(): Promise<TagRecord[]>;
}

/**
 * A tag id (the reference hub's rule): no digit first, no whitespace or colon, at most 50 characters; not HEAD, main or
 * `*`, which name other things, and without `..`, which separates the ends of a range (`versionRef=a..b`).
 */
export function isTagId(id: string): boolean {
  // No control characters: PostgreSQL's text cannot hold NUL (a tag id or versionRef with one answered 500 there).
  return /^[^0-9\s\p{Cc}][^\s:\p{Cc}]{0,49}$/u.test(id) && !['HEAD', 'main', '*'].includes(id) && !id.includes('..');
}

export const versionsKept = (definition: SpaceDefinition): number => definition.versionsToKeep ?? 1;

/** Spaces keeping one version store no history and carry no version in their features (API.md 4.1). */
export const keepsHistory = (definition: SpaceDefinition): boolean => versionsKept(definition) > 1;

/**
 * The author recorded for a write: the caller's account, which owns what it writes and is what a person recognises;
 * the token's `cid` (the application it was made for) only when a token names no account.
 */
export const authorOf = (caller: Claims): string => caller.aid || caller.cid;

/**
 * The oldest version a read can ask for: versionsToKeep back from HEAD, but never before history last began nor
 * before a `DELETE /changesets` point.
 */
export function oldestReadable(definition: SpaceDefinition, versions: SpaceVersions): number {
  return Math.max(versions.head - versionsKept(definition) + 1, versions.historyFrom, versions.deletedBefore, 0);
}

/**
 * `version` as a read of the space may ask for it, else a 400 naming the oldest version it can ask for. A tagged
 * version stays readable while the history can rebuild it: pruning keeps the states it shows.
 */
export function checkReadable(definition: SpaceDefinition, versions: SpaceVersions, version: number, tagged = false): void {
  if (versions.head < 0) throw hubError('versionNotReadable');
  const oldest = oldestReadable(definition, versions);
  if (version > versions.head) throw hubError('versionNotYet', { version, head: versions.head, oldest });
  if (version < oldest && !(tagged && version >= versions.historyFrom)) throw hubError('versionTooOld', { version, oldest });
}

/** The number a point names, without checking that it can be read: HEAD's, the number itself, or the version of the space's tag. */
export async function versionNumber(space: VersionedSpace, ref: PointRef, versions: SpaceVersions): Promise<number> {
  if (ref === 'HEAD') return versions.head;
  if (typeof ref === 'number') return ref;
  const tag = await space.tag(ref.tag);
  if (!tag) throw hubError('unknownVersionTag', { tag: ref.tag.slice(0, 50) });
  return tag.version;
}

/**
 * The one resolution of a read's version reference (ADR 002): undefined for HEAD, which reads the current rows alone;
 * otherwise the version a number or a tag names, checked against what the space keeps.
 */
export async function readVersion(space: VersionedSpace, ref: VersionRef): Promise<number | undefined> {
  if (ref === 'HEAD') return undefined;
  if (ref === '*') throw hubError('invalidParameter', { name: 'version', problem: '* (every version) is served by id only: /features/{featureId} and /features?id=' });
  const versions = await space.versions();
  const version = await versionNumber(space, ref, versions);
  const { definition } = space.space;
  // The tags are looked at only for a version past what versionsToKeep keeps.
  const tagged = typeof ref === 'object' || (version < oldestReadable(definition, versions) && (await space.tags()).some((tag) => tag.version === version));
  checkReadable(definition, versions, version, tagged);
  return version;
}
