// The version a read asks for (`version` or `versionRef`, ADR 002).
import { hubError } from '../../core/errors.js';
import type { VersionRef } from '../../hub/versions/space-versions.js';
import type { RawQuery } from './raw-query.js';

export const VERSION_PARAMETERS = ['version', 'versionRef'] as const;

/** HEAD when neither is given; a version number, HEAD or `*`. Tags naming versions come with the tags API. */
export function versionRefOf(query: RawQuery): VersionRef {
  const given = query.first('version') ?? query.first('versionRef');
  if (given === undefined || given === '' || given === 'HEAD') return 'HEAD';
  if (given === '*') return '*';
  if (!/^\d{1,15}$/.test(given)) {
    throw hubError('invalidParameter', { name: 'version', problem: `expected a version number, HEAD or *; got "${given.slice(0, 40)}"` });
  }
  return Number(given);
}
