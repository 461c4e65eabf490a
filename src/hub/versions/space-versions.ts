// Which versions of a space a read may ask for, and who a write's versions are recorded for (ADR 002, API.md 12).
import { hubError } from '../../core/errors.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { Claims } from '../access/claims.js';
import type { SpaceVersions } from '../../storage/storage.js';

/** A read's version as the request names it: HEAD, a number, or every kept state of a feature (`*`). */
export type VersionRef = 'HEAD' | '*' | number;

export const versionsKept = (definition: SpaceDefinition): number => definition.versionsToKeep ?? 1;

/** Spaces keeping one version store no history and carry no version in their features (API.md 4.1). */
export const keepsHistory = (definition: SpaceDefinition): boolean => versionsKept(definition) > 1;

/**
 * The author recorded for a write: the caller's account, which owns what it writes and is what a person recognises;
 * the token's `cid` (the application it was made for) only when a token names no account.
 */
export const authorOf = (caller: Claims): string => caller.aid || caller.cid;

/** The oldest version a read can ask for: versionsToKeep back from HEAD, but never before history last began. */
export function oldestReadable(definition: SpaceDefinition, versions: SpaceVersions): number {
  return Math.max(versions.head - versionsKept(definition) + 1, versions.historyFrom, 0);
}

/** `version` as a read of the space may ask for it, else a 400 naming the oldest version it can ask for. */
export function checkReadable(definition: SpaceDefinition, versions: SpaceVersions, version: number): void {
  if (versions.head < 0) throw hubError('versionNotReadable');
  const oldest = oldestReadable(definition, versions);
  if (version > versions.head) throw hubError('versionNotYet', { version, head: versions.head, oldest });
  if (version < oldest) throw hubError('versionTooOld', { version, oldest });
}
