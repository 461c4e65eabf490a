// Features in the embedded SQLite database: transactional batch writes and paged, streamed reads.
import type Database from 'better-sqlite3';
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery, SortValue, TagExpression } from '../../core/feature-query.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import type { BBox } from '../../geo/bbox.js';
import { hilbertIndex } from '../../geo/hilbert-curve.js';
import { vectorTileOf } from '../../geo/vector-tile.js';
import { performance } from 'node:perf_hooks';
import { PLAIN_AGGREGATE, PLAIN_COLUMNS } from './plain-texts.js';
import { spanBytes } from '../../core/namespace-cut.js';
import { keysetPages } from '../shared/keyset-pages.js';
import { afterCondition, keyColumns, sortOrder } from '../shared/sort-keyset.js';
import { checkDeadline, throwIfCancelled } from '../shared/read-bounds.js';
import { statesInOrder } from '../shared/feature-states.js';
import { planWrite, type StoredRow } from '../shared/write-diff.js';
import { StorageError } from '../storage-error.js';
import type { ChangeListener, FeatureStore, FeatureWrite, HistoryOfWrite, JobFence, OriginStates, SpaceKey, SpaceStatistics, SpaceVersions, StatisticsOptions, WritePlan, WritePlanner,
  WriteStep } from '../storage.js';
import { compileFilter, type SqlFragment } from './filter-sql.js';
import { candidateParams, INDEX_CANDIDATES, type OrderedSource, SpatialIndex, spatialBounds, type SpatialPlan } from './spatial-sql.js';
import { sortColumns } from './sort-sql.js';
import { readStatistics } from './statistics.js';
import { pauseForOtherWriters, type WriteTransactions } from './write-transactions.js';

/** Rows fetched per statement while streaming; each page is one short synchronous query. */
const PAGE_SIZE = 2000;
const STATEMENT_CACHE_SIZE = 256;
/** Features deleted per transaction by deleteMatching: a few tens of milliseconds of work between other requests. */
const DELETE_CHUNK = 1000;

/**
 * The requested ids, each looked up through `features_by_id`. CROSS JOIN fixes json_each as the outer
 * loop: with a plain JOIN the planner scans every feature of the space and the id list for each one.
 */
const BY_IDS = 'FROM json_each(?) j CROSS JOIN features f ON f.sid = ? AND f.id = j.value';
/**
 * The space right after a version (ADR 002), for reads by id: the current rows written at it or before (NULL: before
 * history began), and the superseded states that were current then. Each feature is in one part at most, under its seq.
 */
const COLUMNS = 'seq, sid, id, json, geometry_type, min_x, min_y, max_x, max_y';
const AT_VERSION = `(SELECT ${COLUMNS} FROM features WHERE sid = ? AND (version IS NULL OR version <= ?)
  UNION ALL SELECT ${COLUMNS} FROM feature_history WHERE sid = ? AND version_to > ? AND (version_from IS NULL OR version_from <= ?))`;
const atVersion = (sid: number, version: number): unknown[] => [sid, version, sid, version, version];
/** A current row shows at a version when it was written at it or before (NULL: before history began). */
const HEAD_AT_VERSION = '(f.version IS NULL OR f.version <= ?)';
/**
 * A read at a version finds the superseded states of its area through the history's R*Tree while the area holds fewer
 * entries than this (supersededSource).
 */
const HISTORY_CANDIDATES = 2000;
/** The features of a list of seqs, each looked up by primary key. */
const BY_SEQS = 'FROM json_each(?) j CROSS JOIN features f ON f.seq = j.value AND f.sid = ?';

interface ExistingRow extends StoredRow { id: string }

/** A page statement of `seq, json` rows in seq order, and its parameters for the page of `size` after a seq. */
interface PagedSource {
  sql: string;
  params(after: number, size: number): unknown[];
}

/** A feature just inserted, for its R*Tree entry. */
interface NewBounds { seq: number; bbox: BBox; along: number }
/** The bounds of a current row whose state a write supersedes. */

/** A filter with a spatial plan's exact test added: features looked up by id need no index. */
function withExact(where: SqlFragment, spatial: SpatialPlan | undefined): SqlFragment {
  return spatial ? { sql: `${spatial.exact.sql} AND ${where.sql}`, params: [...spatial.exact.params, ...where.params] } : where;
}

export class SqliteFeatureStore implements FeatureStore {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly spaceExists;
  private readonly selectExisting;
  private readonly insertFeature;
  private readonly updateFeature;
  private readonly deleteFeature;
  private readonly insertBounds;
  private readonly insertTag;
  private readonly deleteTagsOfFeature;
  private readonly updateCounters;
  private readonly selectCount;
  private readonly selectLastSeq;
  private readonly selectVersions;
  private readonly selectHistoryOf;
  private readonly keepStates;
  private readonly selectOrigins;
  private readonly countHistoryCandidates;
  private readonly setVersion;
  private readonly recordVersion;
  private readonly bumpVersion;
  private readonly spatial;
  /** The spaces the running write transaction changed: synchronous work, so no other transaction's can mix in. */
  private readonly changed = new Set<number>();
  private readonly changeListeners = new Set<ChangeListener>();

  /**
   * `deadlineMs` bounds the database time of one read. SQLite statements are synchronous and cannot be
   * interrupted from JavaScript, so it is checked as each statement ends: between the pages of a read. `fences` checks a
   * job's fence (JobFence) inside a write's transaction (sqlite/job-store.ts).
   */
  constructor(private readonly db: Database.Database, private readonly writes: WriteTransactions, private readonly deadlineMs: number,
    private readonly fences: { holds(fence: JobFence): boolean }) {
    this.spaceExists = db.prepare<[number], { sid: number }>('SELECT sid FROM spaces WHERE sid = ?');
    this.selectExisting = db.prepare<[string, number], ExistingRow>(
      `SELECT f.seq, f.id, f.json ${BY_IDS}`);
    this.insertFeature = db.prepare(
      'INSERT INTO features (sid, id, json, geometry_type, min_x, min_y, max_x, max_y, version, ns_cut) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.updateFeature = db.prepare(
      'UPDATE features SET json = ?, geometry_type = ?, min_x = ?, min_y = ?, max_x = ?, max_y = ?, version = ?, ns_cut = ? WHERE seq = ?');
    this.deleteFeature = db.prepare('DELETE FROM features WHERE seq = ?');
    this.insertBounds = db.prepare('INSERT INTO feature_bounds (seq, min_x, max_x, min_y, max_y) VALUES (?, ?, ?, ?, ?)');
    this.insertTag = db.prepare('INSERT OR IGNORE INTO feature_tags (sid, tag, seq) VALUES (?, ?, ?)');
    this.deleteTagsOfFeature = db.prepare('DELETE FROM feature_tags WHERE seq = ?');
    this.updateCounters = db.prepare(
      `UPDATE spaces SET feature_count = feature_count + ?, data_size = data_size + ?,
         revision = revision + 1, content_updated_at = ? WHERE sid = ?`);
    this.selectLastSeq = db.prepare<[number], number>('SELECT seq FROM features WHERE sid = ? ORDER BY seq DESC LIMIT 1').pluck();
    this.selectCount = db.prepare<[number], { n: number }>('SELECT feature_count AS n FROM spaces WHERE sid = ?');
    this.selectVersions = db.prepare<[number], SpaceVersions>(
      'SELECT version AS head, history_from AS historyFrom, deleted_before AS deletedBefore FROM spaces WHERE sid = ?');
    this.selectHistoryOf = db.prepare<[string, number, number], ExistingRow>(
      `SELECT h.seq, h.id, h.json FROM json_each(?) j CROSS JOIN feature_history h ON h.sid = ? AND h.id = j.value AND h.version_to > ?
        ORDER BY j.key, h.version_to`);
    // The state at ORIGIN of each feature changed after it (ADR 002, "Merges"): the history row current then, if any.
    // Without CROSS JOIN and INDEXED BY, SQLite scanned the space's rows and its history by version (4× the write's time at 1,000 ids).
    this.selectOrigins = db.prepare<[string, number], { id: string; json: string | null }>(
      `SELECT f.id, h.json FROM json_each(?) j
         CROSS JOIN features f ON f.sid = ? AND f.id = j.value ->> 0 AND f.version > j.value ->> 1
         LEFT JOIN feature_history h INDEXED BY feature_history_by_id ON h.sid = f.sid AND h.id = f.id AND h.version_to > j.value ->> 1
           AND (h.version_from IS NULL OR h.version_from <= j.value ->> 1)`);
    // One statement for every state a write supersedes, from the list of their seqs in seq order.
    this.keepStates = db.prepare<[number, string]>(`INSERT INTO feature_history (sid, version_to, seq, id, version_from, json, geometry_type, min_x, min_y, max_x, max_y)
      SELECT f.sid, ?, f.seq, f.id, f.version, f.json, f.geometry_type, f.min_x, f.min_y, f.max_x, f.max_y
        FROM json_each(?) j CROSS JOIN features f ON f.seq = j.value`);
    this.countHistoryCandidates = db.prepare<unknown[], number>(
      `SELECT count(*) FROM (SELECT 1 FROM feature_history_bounds r WHERE ${INDEX_CANDIDATES} LIMIT ?)`).pluck();
    this.setVersion = db.prepare('UPDATE spaces SET version = ? WHERE sid = ?');
    this.recordVersion = db.prepare('INSERT INTO space_versions (sid, version, author, created_at, written) VALUES (?, ?, ?, ?, ?)');
    // A version written without history is the oldest one a read can ask for until history is kept again.
    this.bumpVersion = db.prepare('UPDATE spaces SET version = version + 1, history_from = version + 1 WHERE sid = ?');
    this.spatial = new SpatialIndex(db);
  }

  /** The spatial part of a read, if it has one; its plan depends on the size of a page and of the space. */
  private spatialPlan(sid: number, query: FeatureQuery): SpatialPlan | undefined {
    if (!query.spatial) return undefined;
    const featureCount = this.selectCount.get(sid)?.n ?? 0;
    return this.spatial.plan(sid, query.spatial, Math.min(query.limit, PAGE_SIZE), featureCount);
  }

  /** The features of a read without ids in seq order: the space's, or the spatial plan's. */
  private orderedSource(sid: number, where: SqlFragment, spatial: SpatialPlan | undefined): OrderedSource {
    if (spatial) return spatial.source(where);
    return {
      sql: `FROM features f WHERE f.sid = ? AND f.seq > ? AND ${where.sql} ORDER BY f.seq`,
      params: (after) => [sid, after, ...where.params],
    };
  }

  /** Inside a write transaction: the space may have been deleted since the request looked it up. */
  private assertSpace(sid: number): void {
    if (!this.spaceExists.get(sid)) throw new StorageError('spaceGone');
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Writes a feature's row and tags; returns its seq. A new feature's R*Tree entry is left to indexBounds. */
  private storeRow(sid: number, feature: FeatureWrite, existingSeq: number | undefined, version: number | null): number {
    const [minX, minY, maxX, maxY] = feature.bbox ?? [null, null, null, null];
    let seq = existingSeq;
    if (seq === undefined) {
      seq = Number(this.insertFeature.run(sid, feature.id, feature.json, feature.geometryType, minX, minY, maxX, maxY, version, spanBytes(feature.namespaceCut)).lastInsertRowid);
    } else {
      this.updateFeature.run(feature.json, feature.geometryType, minX, minY, maxX, maxY, version, spanBytes(feature.namespaceCut), seq);
      this.deleteTagsOfFeature.run(seq);
    }
    for (const tag of feature.tags) this.insertTag.run(sid, tag, seq);
    return seq;
  }

  /**
   * The R*Tree entries of the features a write inserted, in the Hilbert order of their bounds' centres rather than in
   * the order of the request: consecutive entries then land in the same or neighbouring nodes, whose pages the
   * previous entries just read and dirtied. In request order (places in no order) each entry changed other nodes, and
   * the R*Tree's splits and reinserts rewrote scattered pages: 10.1 pages written per feature instead of 3.1 at
   * 250,000 features, 12.7 instead of 5.6 at 2,000,000 (docs/decisions.md, "SQLite ingest"). The seqs, and with them
   * the insertion order, are the request's.
   */
  private indexBounds(inserted: NewBounds[]): void {
    inserted.sort((a, b) => a.along - b.along);
    for (const { seq, bbox: [west, south, east, north] } of inserted) this.insertBounds.run(seq, west, east, south, north);
  }

  /**
   * The transaction holds the file's one write lock, so the versions of the spaces keeping history are taken at its
   * start and the others' at the end of their steps alike: no other writer can come between (ADR 002).
   */
  /** Hears the versions this process commits (SqliteStorage.watchChanges). */
  onChange(listener: ChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => { this.changeListeners.delete(listener); };
  }

  /**
   * Runs `work` in a write transaction and tells the change listeners the new HEAD of each space it changed, once
   * committed. The versions are read inside the transaction, where no other writer can have moved them.
   */
  private async announcing<T>(work: () => T): Promise<T> {
    const { result, heads } = await this.writes.run(() => {
      this.changed.clear();
      const done = work();
      return { result: done, heads: [...this.changed].map((sid) => [sid, this.selectVersions.get(sid)?.head ?? -1] as const) };
    });
    for (const [sid, head] of heads) for (const listener of this.changeListeners) listener({ sid, location: '' }, head);
    return result;
  }

  async write<T>(space: SpaceKey, ids: readonly string[], planner: WritePlanner<T>, history?: HistoryOfWrite, fence?: JobFence): Promise<T> {
    return this.announcing(() => {
      const versions = new Map<number, number>();
      for (const { sid } of history?.versioned ?? []) versions.set(sid, (this.selectVersions.get(sid)?.head ?? -1) + 1);
      const author = history?.author ?? '';
      const origins = this.originStates(history?.origins);
      const first = this.writeStep(space.sid, ids, (existing) => planner(existing, versions, origins), versions, author);
      for (let step = first.next; step;) {
        if (step.space.location !== space.location) throw new StorageError('crossDatabase', step.space.location);
        const { planner: plan } = step;
        step = this.writeStep(step.space.sid, step.ids, (existing) => plan(existing, versions), versions, author).next;
      }
      // Last, under the same write lock: a job's chunk commits only while its node holds the job's lease.
      if (fence && !this.fences.holds(fence)) throw new StorageError('leaseLost', fence.job);
      return first.result;
    });
  }

  /** Inside a write transaction, which holds the file's write lock: the states at the ORIGINs of a write's features, by space. */
  private originStates(origins: ReadonlyMap<number, ReadonlyMap<string, number>> | undefined): Map<number, OriginStates> {
    const bySpace = new Map<number, OriginStates>();
    for (const [sid, ofIds] of origins ?? []) {
      const states = new Map<string, string | null>();
      for (const row of this.selectOrigins.all(JSON.stringify([...ofIds]), sid)) states.set(row.id, row.json);
      bySpace.set(sid, { versions: this.selectVersions.get(sid) ?? { head: -1, historyFrom: 0, deletedBefore: 0 }, states });
    }
    return bySpace;
  }

  /**
   * One space's part of a write, inside its transaction: the stored rows it names, its plan, its row and counter
   * changes, and, when it changes something, its version: with history (`versions` has the space) the states it
   * supersedes are kept first and the version is recorded with its author.
   */
  private writeStep<P extends { plan: WritePlan; next?: WriteStep }>(sid: number, ids: readonly string[],
    planner: (existing: ReadonlyMap<string, string>) => P, versions: ReadonlyMap<number, number>, author: string): P {
    this.assertSpace(sid);
    const stored = new Map<string, ExistingRow>();
    for (const row of this.selectExisting.all(JSON.stringify(ids), sid)) stored.set(row.id, row);
    const { diff, planned } = planWrite(stored, planner);
    const version = versions.get(sid) ?? null;
    if (version !== null && diff.changed) {
      this.keepSuperseded(version, [...diff.updates.map(({ seq }) => seq), ...diff.deletes]);
    }
    const inserted: NewBounds[] = [];
    /** The states this write writes, as (seq, id): the version's record lists them for its changeset. */
    const written: Array<[number, string]> = [];
    for (const feature of diff.inserts) {
      const seq = this.storeRow(sid, feature, undefined, version);
      written.push([seq, feature.id]);
      const { bbox } = feature;
      if (bbox) inserted.push({ seq, bbox, along: hilbertIndex((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2) });
    }
    this.indexBounds(inserted);
    for (const { seq, feature } of diff.updates) {
      this.storeRow(sid, feature, seq, version);
      written.push([seq, feature.id]);
    }
    for (const seq of diff.deletes) {
      this.deleteTagsOfFeature.run(seq);
      this.deleteFeature.run(seq);
    }
    if (!diff.changed) return planned;
    this.updateCounters.run(diff.countDelta, diff.sizeDelta, diff.timestamp, sid);
    this.changed.add(sid);
    if (version === null) this.bumpVersion.run(sid);
    else {
      this.setVersion.run(version, sid);
      this.recordVersion.run(sid, version, author, diff.timestamp, JSON.stringify(written.sort((a, b) => a[0] - b[0])));
    }
    return planned;
  }

  /**
   * Appends the states of current rows, superseded at `version`, to the history, in one statement. Their entries in the
   * history's R*Tree come later, from the background pass (history-store.ts, `prune`): written here, even in Hilbert
   * order, they dirtied a page of the tree for most states, and a 1,000-feature PUT rewriting an edited area's features
   * took 2.2 times a plain space's (docs/decisions.md, "Versions").
   */
  private keepSuperseded(version: number, seqs: number[]): void {
    if (seqs.length > 0) this.keepStates.run(version, JSON.stringify([...seqs].sort((a, b) => a - b)));
  }

  async versions(space: SpaceKey): Promise<SpaceVersions> {
    return this.selectVersions.get(space.sid) ?? { head: -1, historyFrom: 0, deletedBefore: 0 };
  }

  async featureStates(space: SpaceKey, ids: readonly string[], oldest: number): Promise<FeatureRow[]> {
    const list = JSON.stringify(ids);
    return statesInOrder(ids, this.selectHistoryOf.all(list, space.sid, oldest), this.selectExisting.all(list, space.sid));
  }

  /**
   * Deletes in chunks of DELETE_CHUNK candidates, one transaction each, pausing between them: better-sqlite3 runs
   * on the event loop, and one transaction over a million features kept every other request waiting for half a
   * minute; the pause also lets the writes of the node's other workers in (write-transactions.ts). Each chunk commits with its counters, so a crash leaves some
   * matching features deleted and the counters right; repeating the delete finishes it. Only features
   * that existed when the delete began are candidates.
   */
  async deleteMatching(space: SpaceKey, filter: FeatureFilter): Promise<number> {
    const { sid } = space;
    const candidates = this.deleteCandidates(filter.tags ?? []);
    const where = compileFilter({ properties: filter.properties });
    const victimsAmong = this.statement(`SELECT f.seq, length(f.json) AS size ${BY_SEQS} WHERE ${where.sql}`);
    const deleteChunk = (after: number, last: number) => {
      const chunk = candidates(sid, after, last);
      const victims = victimsAmong.all(JSON.stringify(chunk), sid, ...where.params) as Array<{ seq: number; size: number }>;
      let size = 0;
      for (const victim of victims) {
        this.deleteTagsOfFeature.run(victim.seq);
        this.deleteFeature.run(victim.seq);
        size += victim.size;
      }
      if (victims.length > 0) {
        this.updateCounters.run(-victims.length, -size, Date.now(), sid);
        this.bumpVersion.run(sid);
        this.changed.add(sid);
      }
      return { deleted: victims.length, candidates: chunk.length, lastCandidate: chunk[chunk.length - 1] };
    };
    this.assertSpace(sid);
    const last = this.selectLastSeq.get(sid) ?? 0;
    let deleted = 0;
    let after = 0;
    for (;;) {
      const chunk = await this.announcing(() => deleteChunk(after, last));
      deleted += chunk.deleted;
      if (chunk.candidates < DELETE_CHUNK) return deleted;
      after = chunk.lastCandidate;
      await pauseForOtherWriters();
      // A space deleted in the meantime took its remaining features with it.
      if (!this.spaceExists.get(sid)) return deleted;
    }
  }

  /**
   * The next DELETE_CHUNK features after a seq that carry the tags (API.md tag expression: groups ORed,
   * the tags of a group ANDed), read in seq order from the `feature_tags` primary key, so every chunk costs
   * the same. The read filter (filter-sql.ts) builds the list of all features with a tag first, which is
   * right for one read but would make each chunk cost as much as the whole delete.
   */
  private deleteCandidates(tags: TagExpression): (sid: number, after: number, last: number) => number[] {
    if (tags.length === 0) {
      const all = this.statement(`SELECT seq FROM features WHERE sid = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ${DELETE_CHUNK}`).pluck();
      return (sid, after, last) => all.all(sid, after, last) as number[];
    }
    const groups = tags.map((group) => {
      const others = group.slice(1).map(() => 'AND EXISTS (SELECT 1 FROM feature_tags u WHERE u.sid = t.sid AND u.tag = ? AND u.seq = t.seq)');
      return `SELECT seq FROM (SELECT t.seq FROM feature_tags t WHERE t.sid = ? AND t.tag = ? AND t.seq > ? AND t.seq <= ? ${others.join(' ')}
                ORDER BY t.seq LIMIT ${DELETE_CHUNK})`;
    });
    const tagged = this.statement(`${groups.join(' UNION ')} ORDER BY seq LIMIT ${DELETE_CHUNK}`).pluck();
    return (sid, after, last) => tagged.all(...tags.flatMap(([first, ...others]) => [sid, first, after, last, ...others])) as number[];
  }

  /**
   * Feature rows of a `SELECT f.seq, f.json …` statement. better-sqlite3 builds arrays much faster than
   * objects with named members, so rows come raw and become FeatureRows here: about a fifth off every read.
   */
  private rows(sql: string, params: unknown[]): FeatureRow[] {
    const raw = this.statement(sql).raw(true).all(...params) as Array<[number, string]>;
    const rows = new Array<FeatureRow>(raw.length);
    for (let i = 0; i < raw.length; i++) rows[i] = { seq: raw[i][0], json: raw[i][1] };
    return rows;
  }

  async *query(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]> {
    if (query.version !== undefined) {
      yield* this.queryAt(space.sid, query, query.version, signal);
      return;
    }
    const { sid } = space;
    const spatial = this.spatialPlan(sid, query);
    const run = <T>(statement: () => T): T => spatial ? spatial.during(statement) : statement();
    if (query.ids) {
      const where = withExact(compileFilter(query), spatial);
      const sql = `SELECT f.seq, f.json ${BY_IDS} WHERE ${where.sql} ORDER BY j.key LIMIT ?`;
      yield run(() => this.rows(sql, [JSON.stringify(query.ids), sid, ...where.params, query.limit]));
      return;
    }
    const source = this.orderedSource(sid, compileFilter(query), spatial);
    const sql = `SELECT f.seq, f.json ${source.sql} LIMIT ?`;
    yield* keysetPages(query.limit, query.afterSeq ?? 0, PAGE_SIZE, (after, size) => run(() => this.rows(sql, [...source.params(after), size])),
      (rows) => ({ count: rows.length, lastSeq: rows[rows.length - 1]?.seq ?? 0 }), { deadlineMs: this.deadlineMs, signal });
  }

  /**
   * SQLite joins the page and hands it over as one UTF-8 blob: no string per feature, nothing to encode for the socket.
   * The page comes from a subquery with ORDER BY and LIMIT, which SQLite runs as a co-routine delivering its rows in
   * that order, and the aggregate joins them as delivered. An ORDER BY inside string_agg would sort the page a second
   * time with every feature's text: it doubled the time of a 2,000-feature page. SQLite is bundled by better-sqlite3 at
   * a locked version, and the storage conformance suite compares these texts with the rows of `query` in order.
   */
  private textPage(sql: string, params: unknown[]): FeatureTextPage {
    const [text, count, lastSeq, cut] = this.statement(sql).raw(true).get(...params) as [Buffer | null, number, number | null, number | undefined];
    return { text: text ?? Buffer.alloc(0), count, lastSeq: lastSeq ?? 0, ...(cut === undefined ? {} : { cut }) };
  }

  /**
   * The features of a read at a version without ids, in seq order after a seq, a page of at most `size`: the current
   * rows written at it or before, through the same plan as a HEAD read (the spatial index, the tag index), and the
   * states superseded after it (supersededSource), tested by their bounds and text (their tags are not in the tag
   * index). Each part is limited to the page before the two are merged by seq.
   */
  private versionedPage(sid: number, query: Omit<FeatureQuery, 'ids'>, version: number, spatial: SpatialPlan | undefined): PagedSource {
    const current = compileFilter(query);
    const head = this.orderedSource(sid, { sql: `${HEAD_AT_VERSION} AND ${current.sql}`, params: [version, ...current.params] }, spatial);
    const superseded = withExact(compileFilter(query, true), spatial);
    const past = this.supersededSource(sid, version, query.spatial);
    return {
      sql: `SELECT seq, json FROM (SELECT f.seq AS seq, f.json AS json ${head.sql} LIMIT ?)
            UNION ALL
            SELECT seq, json FROM (SELECT f.seq AS seq, f.json AS json ${past.sql}
              AND (f.version_from IS NULL OR f.version_from <= ?) AND f.seq > ? AND ${superseded.sql} ORDER BY f.seq LIMIT ?)
            ORDER BY seq LIMIT ?`,
      params: (after, size) => [...head.params(after), size, ...past.params, version, after, ...superseded.params, size, size],
    };
  }

  /**
   * `FROM … f WHERE …` of the states superseded after `version`: through (sid, version_to), which reads every change since
   * the version, or for a small area through the history's R*Tree, which reads the states of the area in every space and
   * version. The R*Tree is taken while it holds fewer than HISTORY_CANDIDATES entries in the area: past that, a read
   * reaching that far back reads about as many rows either way. The states the background pass has not entered in the
   * R*Tree yet (after the space's `history_indexed_*` position) are read through the primary key beside it; the pass
   * moves the position in the transaction that enters them, so each state is in exactly one part.
   */
  private supersededSource(sid: number, version: number, spatial: FeatureQuery['spatial']): SqlFragment {
    const bounds = spatial && candidateParams(spatialBounds(spatial));
    const byPlace = bounds !== undefined && this.countHistoryCandidates.get(...bounds, HISTORY_CANDIDATES)! < HISTORY_CANDIDATES;
    if (!byPlace) return { sql: 'FROM feature_history f WHERE f.sid = ? AND f.version_to > ?', params: [sid, version] };
    return {
      sql: `FROM (SELECT f.* FROM feature_history_bounds r CROSS JOIN feature_history f ON f.sid = r.sid AND f.version_to = r.version_to AND f.seq = r.seq
                  WHERE ${INDEX_CANDIDATES} AND r.sid = ? AND r.version_to > ?
                UNION ALL
                SELECT f.* FROM spaces s CROSS JOIN feature_history f ON f.sid = s.sid AND (f.version_to, f.seq) >
                    (max(s.history_indexed_version, ?), iif(s.history_indexed_version > ?, s.history_indexed_seq, ${Number.MAX_SAFE_INTEGER}))
                  WHERE s.sid = ? AND ${INDEX_CANDIDATES.replaceAll('r.', 'f.')}) f WHERE true`,
      params: [...bounds, sid, version, version, version, sid, ...bounds],
    };
  }

  /** A read at a version: the current rows and the superseded states (versionedPage, AT_VERSION for ids). */
  private async *queryAt(sid: number, query: FeatureQuery, version: number, signal?: AbortSignal): AsyncIterable<FeatureRow[]> {
    const spatial = this.spatialPlan(sid, query);
    const run = <T>(statement: () => T): T => spatial ? spatial.during(statement) : statement();
    if (query.ids) {
      const where = withExact(compileFilter(query, true), spatial);
      yield run(() => this.rows(`SELECT f.seq, f.json FROM json_each(?) j CROSS JOIN ${AT_VERSION} f ON f.id = j.value WHERE ${where.sql} ORDER BY j.key LIMIT ?`,
        [JSON.stringify(query.ids), ...atVersion(sid, version), ...where.params, query.limit]));
      return;
    }
    const page = this.versionedPage(sid, query, version, spatial);
    yield* keysetPages(query.limit, query.afterSeq ?? 0, PAGE_SIZE, (after, size) => run(() => this.rows(page.sql, page.params(after, size))),
      (rows) => ({ count: rows.length, lastSeq: rows[rows.length - 1]?.seq ?? 0 }), { deadlineMs: this.deadlineMs, signal });
  }

  async *queryText(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal, plain = false): AsyncIterable<FeatureTextPage> {
    if (query.version !== undefined) {
      for await (const rows of this.queryAt(space.sid, query, query.version, signal)) {
        yield { text: rows.map((row) => row.json).join(','), count: rows.length, lastSeq: rows[rows.length - 1]?.seq ?? 0 };
      }
      return;
    }
    const { sid } = space;
    const spatial = this.spatialPlan(sid, query);
    const run = <T>(statement: () => T): T => spatial ? spatial.during(statement) : statement();
    const aggregate = plain ? PLAIN_AGGREGATE : "SELECT CAST(string_agg(json, ',') AS BLOB), count(*), max(seq)";
    const columns = plain ? PLAIN_COLUMNS : 'f.seq, f.json';
    if (query.ids) {
      const where = withExact(compileFilter(query), spatial);
      const page = run(() => this.textPage(`${aggregate} FROM (SELECT ${columns} ${BY_IDS}
        WHERE ${where.sql} ORDER BY j.key LIMIT ?)`, [JSON.stringify(query.ids), sid, ...where.params, query.limit]));
      if (page.count > 0) yield page;
      return;
    }
    const source = this.orderedSource(sid, compileFilter(query), spatial);
    const sql = `${aggregate} FROM (SELECT ${columns} ${source.sql} LIMIT ?)`;
    yield* keysetPages(query.limit, query.afterSeq ?? 0, PAGE_SIZE,
      (after, size) => run(() => this.textPage(sql, [...source.params(after), size])), (page) => page, { deadlineMs: this.deadlineMs, signal });
  }

  async countUpTo(space: SpaceKey, query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number> {
    const { sid } = space;
    const spatial = this.spatialPlan(sid, query);
    throwIfCancelled(signal);
    const start = performance.now();
    let count: () => number;
    if (query.version === undefined) {
      const source = this.orderedSource(sid, compileFilter(query), spatial);
      const statement = this.statement(`SELECT count(*) FROM (SELECT 1 ${source.sql} LIMIT ?)`).pluck();
      count = () => statement.get(...source.params(query.afterSeq ?? 0), query.limit) as number;
    } else {
      const page = this.versionedPage(sid, query, query.version, spatial);
      const statement = this.statement(`SELECT count(*) FROM (${page.sql})`).pluck();
      count = () => statement.get(...page.params(query.afterSeq ?? 0, query.limit)) as number;
    }
    const counted = spatial ? spatial.during(count) : count();
    checkDeadline(performance.now() - start, { deadlineMs: this.deadlineMs });
    return counted;
  }

  /**
   * The matches at HEAD or at a version (AT_VERSION: its superseded states tested by their text, as reads by id at a
   * version are), each with its sort keys, sorted by SQLite after the keyset condition.
   */
  async sortedPage(space: SpaceKey, query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    throwIfCancelled(signal);
    const { sid } = space;
    const spatial = this.spatialPlan(sid, { spatial: query.spatial, limit: query.limit });
    const at = query.version;
    const where = withExact(compileFilter(query, at !== undefined), spatial);
    const [from, fromParams] = at === undefined ? ['features f WHERE f.sid = ? AND', [sid]] : [`${AT_VERSION} f WHERE`, atVersion(sid, at)];
    const afterParams: unknown[] = [];
    const after = query.after ? afterCondition(query.sort, query.after, (value) => { afterParams.push(value); return '?'; }) : 'true';
    const columnNames = query.sort.flatMap((_, index) => keyColumns(index)).join(', ');
    const sql = `SELECT s.json, ${columnNames} FROM (SELECT f.json AS json, ${sortColumns(query.sort)} FROM ${from} ${where.sql}) s
      WHERE ${after} ORDER BY ${sortOrder(query.sort)} LIMIT ?`;
    const start = performance.now();
    const run = () => this.statement(sql).raw(true).all(...fromParams, ...where.params, ...afterParams, query.limit) as unknown[][];
    const rows = spatial ? spatial.during(run) : run();
    checkDeadline(performance.now() - start, { deadlineMs: this.deadlineMs, signal });
    const keys = rows.map((row) => query.sort.map((_, index): SortValue => [Number(row[1 + 3 * index]), Number(row[2 + 3 * index]), String(row[3 + 3 * index])]));
    const last = keys[keys.length - 1];
    return { texts: rows.map((row) => row[0] as string), keys, ...(last ? { last } : {}) };
  }

  async count(space: SpaceKey, filter: FeatureFilter, signal?: AbortSignal): Promise<number> {
    const { sid } = space;
    const where = compileFilter(filter);
    if (where.params.length === 0) return this.selectCount.get(sid)?.n ?? 0;
    throwIfCancelled(signal);
    const start = performance.now();
    const row = this.statement(`SELECT count(*) AS n FROM features f WHERE f.sid = ? AND ${where.sql}`)
      .get(sid, ...where.params) as { n: number };
    checkDeadline(performance.now() - start, { deadlineMs: this.deadlineMs });
    return row.n;
  }

  /** The features of `query` encoded in Node (geojson-vt and vt-pbf): SQLite has no MVT encoder. */
  async vectorTile(space: SpaceKey, query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer> {
    return vectorTileOf(this.query(space, query, signal), tile);
  }

  async statistics(space: SpaceKey, options: StatisticsOptions): Promise<SpaceStatistics> {
    return readStatistics(this.db, space.sid, options);
  }
}

