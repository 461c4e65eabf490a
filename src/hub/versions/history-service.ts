// A space's history as the API serves it (ADR 002, "Changesets and tags"): changesets by range or by version, and removing history before a version.
import { hubError } from '../../core/errors.js';
import type { Storage, VersionRange } from '../../storage/storage.js';
import type { Claims } from '../access/claims.js';
import type { FeatureSource } from '../feature-source.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import { changedTiles, type TileGrid } from './changed-tiles.js';
import { ChangesetStream, positionOf } from './changeset-stream.js';
import type { Pruning } from './pruning.js';
import { checkReadable, keepsHistory, oldestReadable, type PointRef, versionNumber } from './space-versions.js';

export interface ChangedTilesQuery extends TileGrid {
  /** The version the tiles changed since (exclusive). */
  start: PointRef;
  /** The last version of the changes (inclusive); default HEAD. */
  end?: PointRef;
}

/** The reference hub's default page: 10,000 states. */
export const DEFAULT_CHANGESET_LIMIT = 10_000;

export interface ChangesetQuery {
  /** The first version (inclusive, or exclusive with `startExclusive`: `versionRef=a..b`); default the oldest kept. */
  start?: PointRef;
  startExclusive?: boolean;
  /** The last version (inclusive); default HEAD. */
  end?: PointRef;
  author?: string;
  /** ms since the epoch, inclusive. */
  startTime?: number;
  endTime?: number;
  /** The most states in the page. */
  limit: number;
  pageToken?: string;
}

/** A JSON answer as text chunks, made as they are sent; its first chunk fails with the answer's 4xx when nothing matches. */
export type JsonTextStream = AsyncIterable<string>;

export class HistoryService {
  constructor(private readonly storage: Storage, private readonly spaces: SpaceResolver, private readonly pruning: Pruning) {}

  /** The space's history once the caller may read it (or change it), refused for a space that keeps none (and, by the scope, for a layered one). */
  async history(caller: Claims, spaceId: string, change: boolean): Promise<FeatureSource> {
    const source = (await this.spaces.open(caller, spaceId)).history(change);
    if (!keepsHistory(source.space.definition)) throw hubError('noHistory');
    return source;
  }

  /**
   * The changesets of a range (API.md 12): both ends inclusive, `a..b` after a up to b. A start before the oldest kept
   * version is moved to it and an end past HEAD to HEAD; an end before the oldest kept version is a 400 naming it, and
   * a range holding no version (or none by the author, in the times) a 404, as the reference hub answers.
   */
  async changesets(caller: Claims, spaceId: string, query: ChangesetQuery): Promise<JsonTextStream> {
    const source = await this.history(caller, spaceId, false);
    const versions = await source.versions();
    const oldest = oldestReadable(source.space.definition, versions);
    const asked = query.start === undefined ? undefined : (await versionNumber(source, query.start, versions)) + (query.startExclusive ? 1 : 0);
    const end = query.end === undefined ? versions.head : await versionNumber(source, query.end, versions);
    if (asked !== undefined && query.end !== undefined && asked > end) {
      throw hubError('invalidParameter', { name: 'startVersion', problem: `the range starts at ${asked}, after its end ${end}` });
    }
    if (versions.head >= 0 && end < oldest) throw hubError('versionTooOld', { version: end, oldest });
    const position = query.pageToken === undefined ? undefined : positionOf(query.pageToken);
    const from = Math.max(asked ?? oldest, oldest);
    // A page whose versions were removed since the previous one.
    if (position && position.version < oldest) throw hubError('versionTooOld', { version: position.version, oldest });
    if (position && (position.version < from || position.version > end)) throw hubError('invalidPageToken', { token: query.pageToken ?? '' });
    const range: VersionRange = { from: position?.version ?? from, to: Math.min(end, versions.head), author: query.author, startTime: query.startTime,
      endTime: query.endTime };
    const stream = new ChangesetStream(this.storage.history, source.space.key, range, query.limit, position);
    return stream.collection(query.author === undefined ? 'in the range' : 'in the range by that author');
  }

  /**
   * The tiles whose content changed after `start` up to `end` (docs/cache-and-changed-tiles.md). Both must be
   * readable, as a read at them is (a tag names a version too); an end past HEAD is moved to HEAD, as for changesets.
   */
  async changedTiles(caller: Claims, spaceId: string, query: ChangedTilesQuery): Promise<JsonTextStream> {
    const source = await this.history(caller, spaceId, false);
    const versions = await source.versions();
    const { definition } = source.space;
    const start = await versionNumber(source, query.start, versions);
    checkReadable(definition, versions, start, typeof query.start === 'object');
    const end = query.end === undefined ? versions.head : Math.min(await versionNumber(source, query.end, versions), versions.head);
    if (start > end) throw hubError('invalidParameter', { name: 'startVersion', problem: `the range starts at ${start}, after its end ${end}` });
    checkReadable(definition, versions, end, typeof query.end === 'object');
    return changedTiles(this.storage.history, source, { from: start, to: end }, query);
  }

  /** One version's changeset, paged like a range. A version the space no longer keeps (or not yet) is a 400 naming the oldest kept. */
  async changeset(caller: Claims, spaceId: string, ref: PointRef, limit: number, pageToken?: string): Promise<JsonTextStream> {
    const source = await this.history(caller, spaceId, false);
    const versions = await source.versions();
    const version = await versionNumber(source, ref, versions);
    checkReadable(source.space.definition, versions, version);
    const position = pageToken === undefined ? undefined : positionOf(pageToken);
    if (position && position.version !== version) throw hubError('invalidPageToken', { token: pageToken ?? '' });
    return new ChangesetStream(this.storage.history, source.space.key, { from: version, to: version }, limit, position).changeset();
  }

  /**
   * `DELETE /changesets?version=lt=N`: the versions before N are no longer kept (reads of them answer 400 naming N)
   * and pruning removes their rows in the background. N is at most HEAD: the space's current state stays.
   */
  async deleteBefore(caller: Claims, spaceId: string, version: number): Promise<void> {
    const source = await this.history(caller, spaceId, true);
    const versions = await source.versions();
    if (version > versions.head) {
      throw hubError('invalidParameter', { name: 'version', problem: `lt=${version} would remove HEAD (${versions.head}): give at most lt=${versions.head}` });
    }
    await this.storage.history.deleteBefore(source.space.key, version);
    this.pruning.schedule(spaceId);
  }
}
