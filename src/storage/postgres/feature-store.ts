// Features in PostgreSQL: one transaction per write, bulk statements, counters kept as change rows, keyset-paged streamed reads.
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery, SortValue } from '../../core/feature-query.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import { keysetPages } from '../shared/keyset-pages.js';
import { afterCondition, keyColumns, sortOrder } from '../shared/sort-keyset.js';
import { type StateRow, statesInOrder } from '../shared/feature-states.js';
import { planWrite, type StoredRow } from '../shared/write-diff.js';
import { StorageError } from '../storage-error.js';
import type { FeatureStore, FeatureWrite, HistoryOfWrite, JobFence, OriginStates, SpaceKey, SpaceStatistics, SpaceVersions, StatisticsOptions, WritePlan, WritePlanner,
  WriteStep } from '../storage.js';
import { type Client, type Database, type Prepared, queryAndCommit } from './database.js';
import { holdsLease } from './job-store.js';
import { compileFilter, isEmptyFilter, SqlParams } from './filter-sql.js';
import type { Locations } from './locations.js';
import { copyNewRows, insertParameters, insertRowsSql, UPDATE_ROWS, updateParameters } from './feature-rows.js';
import { NOTIFY_CHANGE } from './change-listener.js';
import { cannotExist } from './nul-stand-in.js';
import { DENSE, PROBE, PROBED, prepared, probes } from './probed-area.js';
import { PLAIN_COLUMNS, plainPage } from './plain-texts.js';
import { sortColumns } from './sort-sql.js';
import { compileSpatial, degenerate } from './spatial-sql.js';
import { vectorTileSql } from './vector-tile-sql.js';
import { readStatistics } from './statistics.js';
import { TileBatches } from './tile-batches.js';

/** Rows fetched per statement while streaming. */
const PAGE_SIZE = 1000;
/**
 * Rows per statement of a read with a spatial condition once its first page came back full. Each keyset page
 * runs the whole index search again (every candidate of the area, its `ST_Intersects` and a sort by seq, to
 * keep the page's share), so a 10,000-feature box read in pages of 1,000 searched the box eleven times; now
 * twice. The first page keeps the small size, so small areas keep the plans a small LIMIT gets. A page's text
 * is a few MiB, which the answer holds anyway (its ETag hashes the whole body).
 */
const SPATIAL_PAGES = { first: PAGE_SIZE, next: 10_000 };
/**
 * Probed area reads (probed-area.ts) have one plan whatever the page size, so they start at the large size: a
 * 10,000-feature box is then one probe of up to 20,001 features instead of a dense first page of 1,000.
 */
const PROBED_PAGES = { first: 10_000, next: 10_000 };
/** Bounds of one bulk statement: large writes become a few big statements, never one per feature. */
const CHUNK_ROWS = 10_000;
const CHUNK_CHARS = 16 * 1024 * 1024;

/**
 * A write records what it changed in the space's counters as a row of its own instead of updating the
 * counters row: concurrent writers to one space would queue on that row's lock until each commits.
 * Readers add the change rows to the counters (the view `space_counters`); every change row counts one
 * revision, so the revision grows with every committed write.
 */
const RECORD_CHANGE: Prepared = {
  name: 'record_change',
  text: `INSERT INTO space_changes (sid, feature_delta, size_delta, changed_at) VALUES ($1, $2, $3, $4) RETURNING change`,
};
/**
 * RECORD_CHANGE with the step's new rows of a space without history (insertRowsSql, parameters from $5), instead of a
 * COPY before it: a COPY is a round trip more, and a single-feature PUT into a plain space cost the hub more CPU
 * than one into a versioned space, which already sent its rows so (docs/decisions.md, "Cheaper single writes, second round").
 */
const RECORD_CHANGE_WITH_INSERTS: Prepared = {
  name: 'record_change_with_inserts',
  text: `WITH inserted AS (${insertRowsSql('$1::bigint', 5, 'NULL::bigint')})
         INSERT INTO space_changes (sid, feature_delta, size_delta, changed_at) VALUES ($1, $2, $3, $4) RETURNING change`,
};
/** Writers fold the change rows of a space into its counters every this many changes, so readers add few rows. */
const FOLD_EVERY = 16;
/**
 * Folding moves change rows into the counters in one transaction: readers see the sum before or after,
 * never half of it. Concurrent folds each move only the rows they deleted.
 */
const FOLD_CHANGES: Prepared = {
  name: 'fold_changes',
  text: `WITH folded AS (DELETE FROM space_changes WHERE sid = $1 RETURNING feature_delta, size_delta, changed_at),
              total AS (SELECT count(*) AS n, coalesce(sum(feature_delta), 0) AS features, coalesce(sum(size_delta), 0) AS size,
                               max(changed_at) AS changed_at FROM folded)
         UPDATE space_contents c
            SET revision = c.revision + t.n, feature_count = c.feature_count + t.features, data_size = c.data_size + t.size,
                content_updated_at = greatest(c.content_updated_at, t.changed_at)
           FROM total t
          WHERE c.sid = $1
         RETURNING c.feature_count, t.features::bigint AS folded`,
};
/**
 * A shared lock on the space's counters row for the rest of the write: many writers hold it at once, and a
 * concurrent delete of the space waits for them (or they find the space gone).
 */
const HOLD_SPACE: Prepared = { name: 'hold_space', text: 'SELECT 1 FROM space_contents WHERE sid = $1 FOR KEY SHARE' };
/**
 * The stored rows a write names, locked: one probe of `(sid, id)` per id, whatever the statistics say. As
 * `sid = $1 AND id = ANY($2)` the planner took only `sid` as the index condition and `id` as a filter while the
 * statistics did not know the space yet (a new space, until its first ANALYZE at 10,000 to 16,000 features): each
 * write read every row of the space, 5,000 rows in 1.5 ms, growing with the space, where the probes of 1,000 new
 * ids take 1.2 ms at any size. The subquery (its LIMIT keeps it from being merged into a join) makes it a probe per id.
 * The space is compared with `(SELECT $1::bigint)`, a value the planner cannot see: for a space the statistics do not
 * know it estimated one row for `sid = $1`, and a scan of the primary key `(sid, seq)` filtered by id then cost no more
 * than the probe of `(sid, id)`, or less where that index is deeper (long ids): each id read the whole space, 7.3 s for
 * 1,000 ids in a space of 5,000 (docs/decisions.md, "PostgreSQL ingest", fifth round). Unseen, the space is estimated at
 * the average space's rows, and the probe of `(sid, id)` wins (test/storage/postgres-lock-plan.test.ts).
 */
export const LOCK_STORED: Prepared = {
  name: 'lock_stored',
  text: `SELECT f.seq, f.id, f.feature FROM unnest($2::text[]) AS u(id)
          CROSS JOIN LATERAL (SELECT seq, id, feature FROM features WHERE sid = (SELECT $1::bigint) AND id = u.id LIMIT 1 FOR UPDATE) f`,
};
const COUNT: Prepared = { name: 'count_features', text: 'SELECT feature_count AS n FROM space_counters WHERE sid = $1' };

/**
 * The version lock of a space keeping history (ADR 002), taken before the write plans: its writers take turns from
 * here to their commit, so each plans with the next version and versions commit in order. It does not conflict with
 * the KEY SHARE lock of HOLD_SPACE that writers of spaces without history hold.
 */
const LOCK_VERSION: Prepared = { name: 'lock_version', text: 'SELECT version FROM space_contents WHERE sid = $1 FOR NO KEY UPDATE' };
/**
 * A write whose one space keeping history is the space it names first takes that space's version lock, reads its versions
 * and locks the stored rows it names in one statement: each statement under the lock is a round trip that the space's other
 * writers wait for (docs/decisions.md, "Versions", "What holds the version lock"). The rows are locked through a LATERAL
 * subquery of the locked counters row, so the version lock comes first, as in separate statements (a writer holding the
 * version lock may wait for these rows; one waiting for it must hold none of them). A space row that is gone returns no row.
 * The probes compare the space as LOCK_STORED's do, with a value the planner cannot see.
 */
export const LOCK_VERSION_AND_STORED: Prepared = {
  name: 'lock_version_and_stored',
  text: `SELECT v.version, v.history_from, v.deleted_before, f.seq, f.id, f.feature
           FROM (SELECT version, history_from, deleted_before FROM space_contents WHERE sid = $1 FOR NO KEY UPDATE) v
           LEFT JOIN LATERAL (SELECT s.seq, s.id, s.feature FROM unnest($2::text[]) AS u(id)
             CROSS JOIN LATERAL (SELECT seq, id, feature FROM features
                                  WHERE sid = (SELECT $1::bigint) AND id = u.id AND v.version IS NOT NULL LIMIT 1 FOR UPDATE) s) f ON true`,
};
/**
 * A space without history takes its version as the transaction's last statement: its writers run in parallel and
 * queue only for this row from here to their commit. Such a version is the oldest a read can ask for.
 */
const NEXT_VERSION: Prepared = {
  name: 'next_version', text: `UPDATE space_contents SET version = version + 1, history_from = version + 1 WHERE sid = $1 RETURNING ${NOTIFY_CHANGE}`,
};
/**
 * The last statement of a versioned space's step, under its version lock: its counter change, its version as HEAD (with the
 * notification, sent at commit) and the version's record, in one round trip instead of three; with `inserts`, also the
 * step's new rows (insertRowsSql, parameters from $7), instead of a COPY before it.
 */
function recordVersionedChange(inserts: boolean): Prepared {
  return {
    name: inserts ? 'record_versioned_inserts' : 'record_versioned_change',
    text: `WITH ${inserts ? `inserted AS (${insertRowsSql('$1::bigint', 7, '$2::bigint')}),` : ''}
                change AS (INSERT INTO space_changes (sid, feature_delta, size_delta, changed_at) VALUES ($1, $3, $4, $5) RETURNING change),
                head AS (UPDATE space_contents SET version = $2 WHERE sid = $1 RETURNING ${NOTIFY_CHANGE}),
                record AS (INSERT INTO space_versions (sid, version, author, created_at) VALUES ($1, $2, $6, $5))
           SELECT change.change FROM change CROSS JOIN head`,
  };
}
const RECORD_VERSIONED_CHANGE = recordVersionedChange(false);
const RECORD_VERSIONED_INSERTS = recordVersionedChange(true);
/** A step inserting at most this many rows sends them with its last statement (RECORD_VERSIONED_INSERTS, RECORD_CHANGE_WITH_INSERTS), more by COPY. */
const INLINE_INSERTS = 100;

/** The states a write at version $2 supersedes, appended to the history before the rows change. */
const KEEP_STATES: Prepared = {
  name: 'keep_states',
  text: `INSERT INTO feature_history (sid, version_to, seq, id, version_from, feature, properties, geom, geometry_type, tags)
         SELECT sid, $2, seq, id, version, feature, properties, geom, geometry_type, tags FROM features WHERE sid = $1 AND seq = ANY($3::bigint[])`,
};
const VERSIONS: Prepared = {
  name: 'space_versions', text: 'SELECT version AS head, history_from AS "historyFrom", deleted_before AS "deletedBefore" FROM space_contents WHERE sid = $1',
};
/** The state at ORIGIN of each feature changed after it (ADR 002, "Merges"): the history row current then, if any. */
const ORIGIN_STATES: Prepared = {
  name: 'origin_states',
  text: `SELECT f.id, h.feature AS json FROM unnest($2::text[], $3::bigint[]) AS u(id, origin)
           JOIN features f ON f.sid = (SELECT $1::bigint) AND f.id = u.id AND f.version > u.origin
           LEFT JOIN feature_history h ON h.sid = $1 AND h.id = u.id AND h.version_to > u.origin
             AND (h.version_from IS NULL OR h.version_from <= u.origin)`,
};
const HISTORY_OF: Prepared = {
  name: 'history_of',
  text: `SELECT h.seq, h.id, h.feature AS json FROM unnest($2::text[]) WITH ORDINALITY AS u(id, ord)
           JOIN feature_history h ON h.sid = $1 AND h.id = u.id AND h.version_to > $3 ORDER BY u.ord, h.version_to`,
};
/** The space compared through an initplan, as in LOCK_STORED: a space the statistics do not know must not get the primary key's scan. */
export const CURRENT_OF: Prepared = {
  name: 'current_of', text: 'SELECT seq, id, feature AS json FROM features WHERE sid = (SELECT $1::bigint) AND id = ANY($2::text[])',
};

/**
 * The space right after a version (ADR 002), with the columns reads filter on: the current rows written at it or before
 * (NULL: before history began), and the superseded states that were current then, found by `(sid, version_to)`. The
 * read's conditions are pushed into both parts, so the current part keeps the plans of a HEAD read (the GiST index for
 * a small area).
 */
function atVersion(sid: string, version: string): string {
  const columns = 'seq, sid, id, feature, properties, geom, geometry_type, tags';
  return `(SELECT ${columns} FROM features WHERE sid = ${sid} AND (version IS NULL OR version <= ${version}::bigint)
           UNION ALL SELECT ${columns} FROM feature_history
            WHERE sid = ${sid} AND version_to > ${version}::bigint AND (version_from IS NULL OR version_from <= ${version}::bigint))`;
}

/**
 * One keyset page of the space right after a version: `atVersion` with the page's order and limit taken into each of
 * its two parts. Over `atVersion`, PostgreSQL 15 planned no ordered merge of the parts (they stayed subquery scans,
 * planned without the page's order), so every page read and sorted all the rows after its handle: about a whole space
 * per page (docs/adr-002-history.md, "Reading a large space at an old version").
 * Here the current part is the primary-key scan of a HEAD page and the superseded part sorts only its own rows.
 */
export function pageAtVersion(columns: string, where: string, version: string): string {
  const all = 'f.seq, f.sid, f.id, f.feature, f.properties, f.geom, f.geometry_type, f.tags';
  return `SELECT ${columns} FROM (
            (SELECT ${all} FROM features f WHERE f.sid = $1 AND f.seq > $2 AND (f.version IS NULL OR f.version <= ${version}::bigint)
              AND ${where} ORDER BY f.seq LIMIT $3)
            UNION ALL
            (SELECT ${all} FROM feature_history f WHERE f.sid = $1 AND f.seq > $2 AND f.version_to > ${version}::bigint
              AND (f.version_from IS NULL OR f.version_from <= ${version}::bigint) AND ${where} ORDER BY f.seq LIMIT $3)) f
          ORDER BY f.seq LIMIT $3`;
}

/**
 * The planner knows how many rows a space has only from the table statistics. A space that grew far
 * beyond them looks small, and keyset pages get a bitmap scan plus a sort of everything after the
 * handle instead of the ordered primary-key scan: quadratic over an iterate. So the statistics are
 * refreshed when a space reaches 10,000 features and each time it doubles from there (autovacuum
 * alone waits for 10% of the whole table to change). Only `sid` and `seq`, the columns those pages are
 * planned on, are analyzed: every column costs its own sort of the 30,000 sampled rows, and the whole
 * table's (the feature texts, jsonb properties, geometries, tags) took 500-600 ms of the database's CPU
 * at 40,000 rows against 100-150 ms for these two. Autovacuum's own ANALYZE keeps the other columns'
 * statistics as before.
 */
const ANALYZE_FROM = 10_000;

function growthLevel(count: number): number {
  return count < ANALYZE_FROM ? -1 : Math.floor(Math.log2(count / ANALYZE_FROM));
}

/** Consecutive slices of at most CHUNK_ROWS rows and about CHUNK_CHARS characters of feature text. */
function chunks<T>(rows: T[], textOf: (row: T) => string): T[][] {
  const result: T[][] = [];
  let current: T[] = [];
  let chars = 0;
  for (const row of rows) {
    if (current.length > 0 && (current.length >= CHUNK_ROWS || chars >= CHUNK_CHARS)) {
      result.push(current);
      current = [];
      chars = 0;
    }
    current.push(row);
    chars += textOf(row).length;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** The WHERE conditions of a read: its filter and, when it has one, its spatial condition. */
export function compileQuery(query: FeatureQuery, params: SqlParams): string {
  const where = compileFilter(query, params);
  return query.spatial ? `${where} AND ${compileSpatial(query.spatial, params)}` : where;
}

async function holdSpace(client: Client, sid: number): Promise<void> {
  const { rowCount } = await client.query({ ...HOLD_SPACE, values: [sid] });
  if (rowCount === 0) throw new StorageError('spaceGone');
}

/** Records a write's counter changes, with `inserts` (new rows of a space without history) if given; returns the change number. */
async function recordChange(client: Client, sid: number, features: number, size: number, at: number, inserts?: readonly FeatureWrite[]): Promise<number> {
  const values = [sid, features, size, at];
  const { rows: [row] } = await client.query<{ change: number }>(inserts
    ? { ...RECORD_CHANGE_WITH_INSERTS, values: [...values, ...insertParameters(inserts)] }
    : { ...RECORD_CHANGE, values });
  return row.change;
}

/** What the steps of one write share: the versions taken first, the author, and the counter changes and plain spaces changed. */
interface WriteState {
  versions: Map<number, number>;
  author: string;
  changes: Map<number, number>;
  /** The spaces without history the write changed: each takes its version at the end. */
  unversioned: Set<number>;
  /** A job's fence (JobFence), not yet checked: it runs once, right before the statement that commits. */
  fence?: () => Promise<void>;
}

/** Checks the write's fence, if it has one left: from here to the commit the job's row is locked. */
async function checkFence(state: WriteState): Promise<void> {
  const fence = state.fence;
  state.fence = undefined;
  await fence?.();
}

/**
 * One space's part of a write, inside its transaction: the stored rows it names (locked), its plan, its row
 * changes and its counter change, whose number goes into `changes` by space. With history (`versions` has the
 * space) the states it supersedes are kept first and its version is recorded with the author.
 */
async function writeStep<P extends { plan: WritePlan; next?: WriteStep }>(client: Client, sid: number, ids: readonly string[],
  planner: (existing: ReadonlyMap<string, string>) => P, state: WriteState, locked?: Map<string, StoredRow>): Promise<P> {
  const stored = locked ?? await lockStored(client, sid, ids);
  const { diff, planned } = planWrite(stored, planner);
  const version = state.versions.get(sid) ?? null;
  const superseded = [...diff.updates.map((update) => update.seq), ...diff.deletes];
  if (version !== null && superseded.length > 0) await client.query({ ...KEEP_STATES, values: [sid, version, superseded] });
  // A step's few new rows go with its last statement: COPY is a round trip more (under the version lock, if versioned).
  const inline = diff.inserts.length > 0 && diff.inserts.length <= INLINE_INSERTS;
  if (diff.inserts.length > 0 && !inline) await copyNewRows(client, sid, diff.inserts, version);
  for (const chunk of chunks(diff.updates, (update) => update.feature.json)) {
    await client.query(UPDATE_ROWS, [sid, ...updateParameters(chunk, version)]);
  }
  if (diff.deletes.length > 0) await client.query('DELETE FROM features WHERE sid = $1 AND seq = ANY($2::bigint[])', [sid, diff.deletes]);
  if (!diff.changed) return planned;
  if (version === null) {
    state.changes.set(sid, await recordChange(client, sid, diff.countDelta, diff.sizeDelta, diff.timestamp, inline ? diff.inserts : undefined));
    state.unversioned.add(sid);
  } else {
    const values = [sid, version, diff.countDelta, diff.sizeDelta, diff.timestamp, state.author];
    const statement = inline
      ? { ...RECORD_VERSIONED_INSERTS, values: [...values, ...insertParameters(diff.inserts)] }
      : { ...RECORD_VERSIONED_CHANGE, values };
    // A write's last step whose space keeps history ends the transaction here (no space without history takes a version after it).
    const last = !planned.next && state.unversioned.size === 0;
    if (last) await checkFence(state);
    const { rows: [row] } = last ? await queryAndCommit<{ change: number }>(client, statement) : await client.query<{ change: number }>(statement);
    state.changes.set(sid, row.change);
  }
  return planned;
}

/** Holds the space (see HOLD_SPACE) and locks the stored rows the write names. */
async function lockStored(client: Client, sid: number, ids: readonly string[]): Promise<Map<string, StoredRow>> {
  await holdSpace(client, sid);
  const stored = new Map<string, StoredRow>();
  const lookup = ids.filter((id) => !cannotExist(id));
  if (lookup.length > 0) {
    const { rows } = await client.query<[number, string, string]>({ ...LOCK_STORED, values: [sid, lookup], rowMode: 'array' });
    for (const [seq, id, json] of rows) stored.set(id, { seq, json });
  }
  return stored;
}

/**
 * LOCK_VERSION_AND_STORED: the version lock of the write's one space keeping history, which is the space it names first,
 * with that space's versions and its stored rows the write names.
 */
async function lockVersionAndStored(client: Client, sid: number, ids: readonly string[]): Promise<{ versions: SpaceVersions; stored: Map<string, StoredRow> }> {
  const lookup = ids.filter((id) => !cannotExist(id));
  const { rows } = await client.query<[string, string, string, number | null, string | null, string | null]>({
    ...LOCK_VERSION_AND_STORED, values: [sid, lookup], rowMode: 'array',
  });
  if (rows.length === 0) throw new StorageError('spaceGone');
  const [head, historyFrom, deletedBefore] = rows[0];
  const stored = new Map<string, StoredRow>();
  for (const [, , , seq, id, json] of rows) if (seq !== null && id !== null && json !== null) stored.set(id, { seq, json });
  return { versions: { head: Number(head), historyFrom: Number(historyFrom), deletedBefore: Number(deletedBefore) }, stored };
}

/** The next version of each space keeping history, under its version lock, taken in sid order so that two writes cannot deadlock. */
async function lockVersions(client: Client, spaces: readonly SpaceKey[]): Promise<Map<number, number>> {
  const versions = new Map<number, number>();
  for (const sid of [...new Set(spaces.map((space) => space.sid))].sort((a, b) => a - b)) {
    const { rows } = await client.query<{ version: string }>({ ...LOCK_VERSION, values: [sid] });
    if (rows.length === 0) throw new StorageError('spaceGone');
    versions.set(sid, Number(rows[0].version) + 1);
  }
  return versions;
}

/** Under the version locks of the write's spaces keeping history: the states at the ORIGINs of their features, and their versions before the write. */
async function originStates(client: Client, origins: ReadonlyMap<number, ReadonlyMap<string, number>> | undefined,
  known: ReadonlyMap<number, SpaceVersions> = new Map()): Promise<Map<number, OriginStates>> {
  const bySpace = new Map<number, OriginStates>();
  for (const [sid, ofIds] of origins ?? []) {
    const ids = [...ofIds.keys()].filter((id) => !cannotExist(id));
    const { rows } = await client.query<{ id: string; json: string | null }>({ ...ORIGIN_STATES, values: [sid, ids, ids.map((id) => ofIds.get(id))] });
    bySpace.set(sid, { versions: known.get(sid) ?? await versionsIn(client, sid), states: new Map(rows.map((state) => [state.id, state.json])) });
  }
  return bySpace;
}

/** The versions of a space whose version lock the write holds. */
async function versionsIn(client: Client, sid: number): Promise<SpaceVersions> {
  const [row] = (await client.query<{ head: string; historyFrom: string; deletedBefore: string }>({ ...VERSIONS, values: [sid] })).rows;
  return row ? { head: Number(row.head), historyFrom: Number(row.historyFrom), deletedBefore: Number(row.deletedBefore) } : { head: -1, historyFrom: 0, deletedBefore: 0 };
}

/**
 * The last statements of a write: each space without history it changed takes its next version, in sid order. The last
 * of them goes with COMMIT: nothing of the transaction follows it.
 */
async function takeVersionsAndCommit(client: Client, sids: Iterable<number>): Promise<void> {
  const ordered = [...sids].sort((a, b) => a - b);
  for (const [n, sid] of ordered.entries()) {
    if (n === ordered.length - 1) await queryAndCommit(client, { ...NEXT_VERSION, values: [sid] });
    else await client.query({ ...NEXT_VERSION, values: [sid] });
  }
}

export class PostgresFeatureStore implements FeatureStore {
  /** `deadlineMs` bounds the database time of one paged read in all; the server bounds each statement by itself. */
  constructor(private readonly locations: Locations, private readonly deadlineMs: number) {}

  /** The batches of unfiltered tiles, one per database. */
  private readonly tileBatches = new Map<Database, TileBatches>();

  private batchesOf(db: Database): TileBatches {
    let batches = this.tileBatches.get(db);
    if (!batches) {
      batches = new TileBatches(db);
      this.tileBatches.set(db, batches);
    }
    return batches;
  }

  /**
   * With a fence, a space in the catalog database (which holds the jobs) checks it in the write's transaction; a space in
   * another database checks it in a catalog transaction around the write's, committed after it: the job's row stays locked
   * from the check to the write's commit. A failure in between (the catalog connection lost) is the one gap: the write
   * may then commit after the lease moved on.
   */
  async write<T>(space: SpaceKey, ids: readonly string[], planner: WritePlanner<T>, history?: HistoryOfWrite, fence?: JobFence): Promise<T> {
    const db = this.locations.byId(space.location);
    const catalog = this.locations.catalog;
    if (!fence) return this.writeIn(db, space, ids, planner, history);
    const fenceIn = (client: Client) => async () => {
      if (!(await holdsLease(client, fence))) throw new StorageError('leaseLost', fence.job);
    };
    if (db === catalog) return this.writeIn(db, space, ids, planner, history, fenceIn);
    return catalog.transaction((catalogClient) => this.writeIn(db, space, ids, planner, history, () => fenceIn(catalogClient)));
  }

  /** The write in one transaction of the space's database; `fenceOf` gives the fence's check for that transaction's connection. */
  private async writeIn<T>(db: Database, space: SpaceKey, ids: readonly string[], planner: WritePlanner<T>, history: HistoryOfWrite | undefined,
    fenceOf?: (client: Client) => () => Promise<void>): Promise<T> {
    const changes = new Map<number, number>();
    const outcome = await db.transaction(async (client) => {
      changes.clear();
      const versioned = history?.versioned ?? [];
      let versions: Map<number, number>;
      let origins: Map<number, OriginStates>;
      let locked: Map<string, StoredRow> | undefined;
      if (versioned.length > 0 && versioned.every((layer) => layer.sid === space.sid)) {
        const taken = await lockVersionAndStored(client, space.sid, ids);
        versions = new Map([[space.sid, taken.versions.head + 1]]);
        origins = await originStates(client, history?.origins, new Map([[space.sid, taken.versions]]));
        locked = taken.stored;
      } else {
        versions = await lockVersions(client, versioned);
        origins = await originStates(client, history?.origins);
      }
      const state: WriteState = { versions, author: history?.author ?? '', changes, unversioned: new Set(), fence: fenceOf?.(client) };
      const first = await writeStep(client, space.sid, ids, (existing) => planner(existing, versions, origins), state, locked);
      for (let step = first.next; step;) {
        if (step.space.location !== space.location) throw new StorageError('crossDatabase', step.space.location);
        const { planner: plan } = step;
        step = (await writeStep(client, step.space.sid, step.ids, (existing) => plan(existing, versions), state)).next;
      }
      await checkFence(state);
      await takeVersionsAndCommit(client, state.unversioned);
      return first.result;
    });
    for (const [sid, change] of changes) await this.afterChange(db, sid, change);
    return outcome;
  }

  async versions(space: SpaceKey): Promise<SpaceVersions> {
    const [row] = await this.locations.byId(space.location).query<{ head: string; historyFrom: string; deletedBefore: string }>(VERSIONS, [space.sid]);
    return row ? { head: Number(row.head), historyFrom: Number(row.historyFrom), deletedBefore: Number(row.deletedBefore) }
      : { head: -1, historyFrom: 0, deletedBefore: 0 };
  }

  async featureStates(space: SpaceKey, ids: readonly string[], oldest: number): Promise<FeatureRow[]> {
    const db = this.locations.byId(space.location);
    const lookup = ids.filter((id) => !cannotExist(id));
    const history = await db.query<StateRow>(HISTORY_OF, [space.sid, lookup, oldest]);
    const current = await db.query<StateRow>(CURRENT_OF, [space.sid, lookup]);
    return statesInOrder(ids, history, current);
  }

  async deleteMatching(space: SpaceKey, filter: FeatureFilter): Promise<number> {
    const { sid } = space;
    const db = this.locations.byId(space.location);
    let change = 0;
    const deleted = await db.transaction(async (client) => {
      await holdSpace(client, sid);
      const params = new SqlParams();
      params.add(sid);
      const where = compileFilter(filter, params);
      // char_length counts characters as SQLite's length() does for the same counter.
      const { rows: [victims] } = await client.query<{ count: number; size: number }>(
        `WITH victims AS (DELETE FROM features f WHERE f.sid = $1 AND ${where} RETURNING char_length(f.feature) AS size)
         SELECT count(*) AS count, coalesce(sum(size), 0)::bigint AS size FROM victims`, params.values);
      if (victims.count > 0) {
        change = await recordChange(client, sid, -victims.count, -victims.size, Date.now());
        await takeVersionsAndCommit(client, [sid]);
      }
      return victims.count;
    });
    await this.afterChange(db, sid, change);
    return deleted;
  }

  /** After the commit: every FOLD_EVERY changes fold the change rows, and refresh the statistics of a grown space. */
  private async afterChange(db: Database, sid: number, change: number): Promise<void> {
    if (change === 0 || change % FOLD_EVERY !== 0) return;
    const [counters] = await db.query<{ feature_count: number; folded: number }>(FOLD_CHANGES, [sid]);
    // ANALYZE only samples, but takes a moment on a big table: it runs without anyone waiting for it.
    if (counters && growthLevel(counters.feature_count) > growthLevel(counters.feature_count - counters.folded)) {
      db.query('ANALYZE features (sid, seq)').catch(() => {});
    }
  }

  async *query(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]> {
    const shape = (rows: unknown[][]): FeatureRow[] => (rows as Array<[number, string]>).map(([seq, json]) => ({ seq, json }));
    const measure = (rows: FeatureRow[]) => ({ count: rows.length, lastSeq: rows[rows.length - 1]?.seq ?? 0 });
    yield* this.read(space, query, signal, { name: 'features_by_id', outer: (inner) => inner, shape, measure });
  }

  /**
   * PostgreSQL joins each page with string_agg, so Node receives one string per page instead of one per
   * feature. The aggregate takes the rows in the order of its sorted subquery, as the PostgreSQL manual
   * describes for aggregates ("supplying the input values from a sorted subquery"); an ORDER BY inside
   * string_agg would sort every page a second time (PostgreSQL 15 does not skip presorted input). The
   * insertion-order tests of both engines hold this to account.
   */
  async *queryText(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal, plain = false): AsyncIterable<FeatureTextPage> {
    // Reads at a version read history rows, which keep no span: they give stored texts, which the hub scans.
    if (plain && query.version === undefined) {
      const shape = ([row]: unknown[][]): FeatureTextPage => ({
        text: (row?.[0] as string | null) ?? '', count: Number(row?.[1] ?? 0), lastSeq: Number(row?.[2] ?? 0), cut: Number(row?.[3] ?? 0),
      });
      yield* this.read(space, query, signal, {
        name: 'plain_text_by_id',
        columns: PLAIN_COLUMNS,
        outer: plainPage,
        shape,
        measure: (page) => page,
      });
      return;
    }
    const shape = ([row]: unknown[][]): FeatureTextPage => ({
      text: (row?.[0] as string | null) ?? '', count: Number(row?.[1] ?? 0), lastSeq: Number(row?.[2] ?? 0),
    });
    yield* this.read(space, query, signal, {
      name: 'feature_text_by_id',
      outer: (inner) => `SELECT string_agg(p.feature, ','), count(*)::int, max(p.seq) FROM (${inner}) p`,
      probed: (from, where) => `WITH probe AS MATERIALIZED (
                            SELECT f.seq, f.feature FROM ${from} f WHERE f.sid = $1 AND f.seq > $2 AND ${where} LIMIT ${PROBE('$3')})
                          SELECT string_agg(p.feature, ','), count(*)::int, max(p.seq), ${DENSE('$3')} FROM (${PROBED('$3')}) p`,
      shape,
      measure: (page) => page,
    });
  }

  /**
   * The by-id lookup, or keyset pages over insertion order with the next page fetched while the current
   * one streams. The inner SELECT yields `seq, feature` in result order; `outer` may
   * wrap it, and `shape` turns the rows of one statement into a page. `probed`, given the rows read (the features, or the
   * space at a version) and the WHERE conditions, is the same page as a probed area read (probed-area.ts), whose last
   * column says the area was dense.
   */
  private async *read<T>(space: SpaceKey, query: FeatureQuery, signal: AbortSignal | undefined, how: {
    name: string;
    /** What the inner SELECT yields, `f.seq, f.feature` unless given. */
    columns?: string;
    outer: (inner: string) => string;
    probed?: (from: string, where: string) => string;
    shape: (rows: unknown[][]) => T;
    measure: (page: T) => { count: number; lastSeq: number };
  }): AsyncIterable<T> {
    const db = this.locations.byId(space.location);
    const params = new SqlParams();
    params.add(space.sid);
    if (query.ids) {
      params.add(query.ids.filter((id) => !cannotExist(id)));
      params.add(query.limit);
      const where = compileQuery(query, params);
      const from = query.version === undefined ? 'features' : atVersion('$1', params.add(query.version));
      const sql = how.outer(`SELECT ${how.columns ?? 'f.seq, f.feature'} FROM unnest($2::text[]) WITH ORDINALITY AS u(id, ord)
                     JOIN ${from} f ON f.sid = (SELECT $1::bigint) AND f.id = u.id
                    WHERE ${where} ORDER BY u.ord LIMIT $3`);
      // Looking ids up one by one is the right plan whatever the values, so without a filter it is prepared once.
      const prepare = isEmptyFilter(query) && !query.spatial && query.version === undefined;
      const page = how.shape(await db.queryArrays(prepare ? { name: how.name, text: sql } : sql, params.values, signal));
      if (how.measure(page).count > 0) yield page;
      return;
    }
    params.add(0);
    params.add(0);
    const where = compileQuery(query, params);
    const version = query.version === undefined ? undefined : params.add(query.version);
    const from = version === undefined ? 'features' : atVersion('$1', version);
    const columns = how.columns ?? 'f.seq, f.feature';
    const sql = how.outer(version === undefined
      ? `SELECT ${columns} FROM features f WHERE f.sid = $1 AND f.seq > $2 AND ${where} ORDER BY f.seq LIMIT $3`
      : pageAtVersion(columns, where, version));
    let probe = how.probed && probes(query) ? prepared(how.probed(from, where)) : undefined;
    const pageSize = probe ? PROBED_PAGES : query.spatial ? SPATIAL_PAGES : PAGE_SIZE;
    const fetchPage = async (after: number, size: number): Promise<T> => {
      const values = [...params.values];
      values[1] = after;
      values[2] = size;
      if (probe) {
        const rows = await db.queryArrays(probe, values, signal);
        if (rows[0]?.[3] !== true) return how.shape(rows);
        // Dense: this read goes on with statements planned for their values.
        probe = undefined;
      }
      return how.shape(await db.queryArrays(sql, values, signal));
    };
    yield* keysetPages(query.limit, query.afterSeq ?? 0, pageSize, fetchPage, how.measure, { deadlineMs: this.deadlineMs, signal });
  }

  async count(space: SpaceKey, filter: FeatureFilter, signal?: AbortSignal): Promise<number> {
    const { sid } = space;
    const db = this.locations.byId(space.location);
    if (isEmptyFilter(filter)) {
      const [row] = await db.query<{ n: number }>(COUNT, [sid]);
      return row?.n ?? 0;
    }
    const params = new SqlParams();
    params.add(sid);
    const where = compileFilter(filter, params);
    const [row] = await db.query<{ n: number }>(`SELECT count(*) AS n FROM features f WHERE f.sid = $1 AND ${where}`, params.values, signal);
    return row.n;
  }

  async countUpTo(space: SpaceKey, query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number> {
    const db = this.locations.byId(space.location);
    const params = new SqlParams();
    const sid = params.add(space.sid);
    const where = [`f.sid = ${sid}`, `f.seq > ${params.add(query.afterSeq ?? 0)}`, compileQuery(query, params)].join(' AND ');
    const from = query.version === undefined ? 'features' : atVersion(sid, params.add(query.version));
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from} f WHERE ${where} LIMIT ${params.add(query.limit)}) c`, params.values, signal);
    return row.n;
  }

  async sortedPage(space: SpaceKey, query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    const db = this.locations.byId(space.location);
    const params = new SqlParams();
    const sid = params.add(space.sid);
    const from = query.version === undefined ? 'features' : atVersion(sid, params.add(query.version));
    const where = compileQuery(query, params);
    const columns = sortColumns(query.sort, params);
    const casts = { integer: 'int', number: 'float8', text: 'text COLLATE "C"' };
    const after = query.after ? afterCondition(query.sort, query.after, (value, kind) => `${params.add(value)}::${casts[kind]}`) : 'true';
    const columnNames = query.sort.flatMap((_, index) => keyColumns(index)).join(', ');
    const rows = await db.queryArrays<unknown[]>(
      `SELECT s.feature, ${columnNames} FROM (SELECT f.feature, ${columns} FROM ${from} f WHERE f.sid = ${sid} AND ${where}) s
        WHERE ${after} ORDER BY ${sortOrder(query.sort)} LIMIT ${params.add(query.limit)}`, params.values, signal);
    const keys = rows.map((row) => query.sort.map((_, index): SortValue => [Number(row[1 + 3 * index]), Number(row[2 + 3 * index]), String(row[3 + 3 * index])]));
    const last = keys[keys.length - 1];
    return { texts: rows.map((row) => row[0] as string), keys, ...(last ? { last } : {}) };
  }

  /**
   * The database selects, clips and encodes; a tile holds at most `query.limit` features. Unfiltered tiles are probed
   * area reads (probed-area.ts), batched with the other tiles asked for at the same time (tile-batches.ts); a dense
   * one, and a filtered one, is read with the statement planned for its values.
   */
  async vectorTile(space: SpaceKey, query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer> {
    const db = this.locations.byId(space.location);
    if (query.spatial?.kind === 'box' && probes(query) && query.version === undefined && !degenerate(query.spatial.box)) {
      const outcome = await this.batchesOf(db).load({ sid: space.sid, after: query.afterSeq ?? 0, limit: query.limit, box: query.spatial.box, request: tile });
      if ('tile' in outcome) return outcome.tile;
    }
    const params = new SqlParams();
    const sid = params.add(space.sid);
    const clauses = [`f.sid = ${sid}`, `f.seq > ${params.add(query.afterSeq ?? 0)}`, compileQuery(query, params)];
    if (query.ids) clauses.push(`f.id = ANY(${params.add(query.ids.filter((id) => !cannotExist(id)))}::text[])`);
    const from = query.version === undefined ? 'features' : atVersion(sid, params.add(query.version));
    const sql = vectorTileSql(tile, clauses.join(' AND '), params.add(query.limit), params, from);
    const [row] = await db.queryArrays<[Buffer | null]>(sql, params.values, signal);
    return row?.[0] ?? Buffer.alloc(0);
  }

  async statistics(space: SpaceKey, options: StatisticsOptions): Promise<SpaceStatistics> {
    return readStatistics(this.locations.byId(space.location), space.sid, options);
  }
}
