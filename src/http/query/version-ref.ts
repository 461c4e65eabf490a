// The version a read asks for (`version` or `versionRef`, ADR 002).
import { hubError } from '../../core/errors.js';
import { isTagId, type PointRef, type VersionRef } from '../../hub/versions/space-versions.js';
import type { RawQuery } from './raw-query.js';

export const VERSION_PARAMETERS = ['version', 'versionRef'] as const;

/** A point in history as a parameter names it: a version number, HEAD or a tag id; 400 for anything else. */
export function pointRefOf(name: string, given: string): PointRef {
  if (given === 'HEAD') return 'HEAD';
  if (/^\d{1,15}$/.test(given)) return Number(given);
  if (isTagId(given)) return { tag: given };
  throw hubError('invalidParameter', { name, problem: `expected a version number, HEAD or a tag id; got "${given.slice(0, 40)}"` });
}

/** HEAD when neither is given; a version number, HEAD, a tag id or `*`. */
export function versionRefOf(query: RawQuery): VersionRef {
  const given = query.first('version') ?? query.first('versionRef');
  if (given === undefined || given === '') return 'HEAD';
  return given === '*' ? '*' : pointRefOf('version', given);
}
