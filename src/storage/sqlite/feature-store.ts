// Features in the embedded SQLite database: transactional batch writes and paged, streamed reads.
import type Database from 'better-sqlite3';
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage } from '../../core/feature-query.js';
import { performance } from 'node:perf_hooks';
import { keysetPages } from '../shared/keyset-pages.js';
import { checkDeadline, throwIfCancelled } from '../shared/read-bounds.js';
import { planWrite, type StoredRow } from '../shared/write-diff.js';
import { StorageError } from '../storage-error.js';
import type { FeatureStore, FeatureWrite, SpaceKey, SpaceStatistics, WritePlanner } from '../storage.js';
import { compileFilter } from './filter-sql.js';
import { readStatistics } from './statistics.js';

/** Rows fetched per statement while streaming; each page is one short synchronous query. */
const PAGE_SIZE = 2000;
const STATEMENT_CACHE_SIZE = 256;

/**
 * The requested ids, each looked up through `features_by_id`. CROSS JOIN fixes json_each as the outer
 * loop: with a plain JOIN the planner scans every feature of the space and the id list for each one.
 */
const BY_IDS = 'FROM json_each(?) j CROSS JOIN features f ON f.sid = ? AND f.id = j.value';

interface ExistingRow extends StoredRow { id: string }

export class SqliteFeatureStore implements FeatureStore {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly spaceExists;
  private readonly selectExisting;
  private readonly insertFeature;
  private readonly updateFeature;
  private readonly deleteFeature;
  private readonly insertTag;
  private readonly deleteTagsOfFeature;
  private readonly updateCounters;
  private readonly selectCount;

  /**
   * `deadlineMs` bounds the database time of one read. SQLite statements are synchronous and cannot be
   * interrupted from JavaScript, so it is checked as each statement ends: between the pages of a read.
   */
  constructor(private readonly db: Database.Database, private readonly deadlineMs: number) {
    this.spaceExists = db.prepare<[number], { sid: number }>('SELECT sid FROM spaces WHERE sid = ?');
    this.selectExisting = db.prepare<[string, number], ExistingRow>(
      `SELECT f.seq, f.id, f.json ${BY_IDS}`);
    this.insertFeature = db.prepare(
      'INSERT INTO features (sid, id, json, geometry_type, min_x, min_y, max_x, max_y) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this.updateFeature = db.prepare(
      'UPDATE features SET json = ?, geometry_type = ?, min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE seq = ?');
    this.deleteFeature = db.prepare('DELETE FROM features WHERE seq = ?');
    this.insertTag = db.prepare('INSERT OR IGNORE INTO feature_tags (sid, tag, seq) VALUES (?, ?, ?)');
    this.deleteTagsOfFeature = db.prepare('DELETE FROM feature_tags WHERE seq = ?');
    this.updateCounters = db.prepare(
      `UPDATE spaces SET feature_count = feature_count + ?, data_size = data_size + ?,
         revision = revision + 1, content_updated_at = ? WHERE sid = ?`);
    this.selectCount = db.prepare<[number], { n: number }>('SELECT feature_count AS n FROM spaces WHERE sid = ?');
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

  private storeRow(sid: number, feature: FeatureWrite, existingSeq: number | undefined): void {
    const [minX, minY, maxX, maxY] = feature.bbox ?? [null, null, null, null];
    let seq = existingSeq;
    if (seq === undefined) {
      seq = Number(this.insertFeature.run(sid, feature.id, feature.json, feature.geometryType, minX, minY, maxX, maxY).lastInsertRowid);
    } else {
      this.updateFeature.run(feature.json, feature.geometryType, minX, minY, maxX, maxY, seq);
      this.deleteTagsOfFeature.run(seq);
    }
    for (const tag of feature.tags) this.insertTag.run(sid, tag, seq);
  }

  async write<T>(space: SpaceKey, ids: readonly string[], planner: WritePlanner<T>): Promise<T> {
    const { sid } = space;
    return this.db.transaction(() => {
      this.assertSpace(sid);
      const stored = new Map<string, ExistingRow>();
      for (const row of this.selectExisting.all(JSON.stringify(ids), sid)) stored.set(row.id, row);
      const { diff, result } = planWrite(stored, planner);
      for (const feature of diff.inserts) this.storeRow(sid, feature, undefined);
      for (const { seq, feature } of diff.updates) this.storeRow(sid, feature, seq);
      for (const seq of diff.deletes) {
        this.deleteTagsOfFeature.run(seq);
        this.deleteFeature.run(seq);
      }
      if (diff.changed) this.updateCounters.run(diff.countDelta, diff.sizeDelta, diff.timestamp, sid);
      return result;
    }).immediate();
  }

  async deleteMatching(space: SpaceKey, filter: FeatureFilter): Promise<number> {
    const { sid } = space;
    return this.db.transaction(() => {
      this.assertSpace(sid);
      const where = compileFilter(filter);
      const victims = this.statement(`SELECT f.seq, length(f.json) AS size FROM features f WHERE f.sid = ? AND ${where.sql}`)
        .all(sid, ...where.params) as Array<{ seq: number; size: number }>;
      let size = 0;
      for (const victim of victims) {
        this.deleteTagsOfFeature.run(victim.seq);
        this.deleteFeature.run(victim.seq);
        size += victim.size;
      }
      if (victims.length > 0) this.updateCounters.run(-victims.length, -size, Date.now(), sid);
      return victims.length;
    }).immediate();
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
    const { sid } = space;
    const where = compileFilter(query);
    if (query.ids) {
      const sql = `SELECT f.seq, f.json ${BY_IDS} WHERE ${where.sql} ORDER BY j.key LIMIT ?`;
      yield this.rows(sql, [JSON.stringify(query.ids), sid, ...where.params, query.limit]);
      return;
    }
    const sql = `SELECT f.seq, f.json FROM features f WHERE f.sid = ? AND f.seq > ? AND ${where.sql} ORDER BY f.seq LIMIT ?`;
    yield* keysetPages(query.limit, query.afterSeq ?? 0, PAGE_SIZE, (after, size) => this.rows(sql, [sid, after, ...where.params, size]),
      (rows) => ({ count: rows.length, lastSeq: rows[rows.length - 1]?.seq ?? 0 }), { deadlineMs: this.deadlineMs, signal });
  }

  /** SQLite joins the page and hands it over as one UTF-8 blob: no string per feature, nothing to encode for the socket. */
  private textPage(sql: string, params: unknown[]): FeatureTextPage {
    const [text, count, lastSeq] = this.statement(sql).raw(true).get(...params) as [Buffer | null, number, number | null];
    return { text: text ?? Buffer.alloc(0), count, lastSeq: lastSeq ?? 0 };
  }

  async *queryText(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureTextPage> {
    const { sid } = space;
    const where = compileFilter(query);
    const aggregate = (order: string) => `SELECT CAST(string_agg(json, ',' ORDER BY ${order}) AS BLOB), count(*), max(seq)`;
    if (query.ids) {
      const page = this.textPage(`${aggregate('ord')} FROM (SELECT f.seq, f.json, j.key AS ord ${BY_IDS}
        WHERE ${where.sql} ORDER BY j.key LIMIT ?)`, [JSON.stringify(query.ids), sid, ...where.params, query.limit]);
      if (page.count > 0) yield page;
      return;
    }
    const sql = `${aggregate('seq')} FROM (SELECT f.seq, f.json FROM features f
      WHERE f.sid = ? AND f.seq > ? AND ${where.sql} ORDER BY f.seq LIMIT ?)`;
    yield* keysetPages(query.limit, query.afterSeq ?? 0, PAGE_SIZE, (after, size) => this.textPage(sql, [sid, after, ...where.params, size]),
      (page) => page, { deadlineMs: this.deadlineMs, signal });
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

  async statistics(space: SpaceKey): Promise<SpaceStatistics> {
    return readStatistics(this.db, space.sid);
  }
}
