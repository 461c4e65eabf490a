// The history beside a space's features in SQLite (ADR 002): version records, changes by version, tags and pruning.
import type Database from 'better-sqlite3';
import type { ChangeRow, HistoryStore, SpaceKey, StateKind, TagRecord, VersionRange, VersionRecord } from '../storage.js';
import { hilbertIndex } from '../../geo/hilbert-curve.js';
import type { WriteTransactions } from './write-transactions.js';

/**
 * The states written at versions @from … @to after the position (@from, @seq), from each version's record, which lists
 * what it wrote as (seq, id) in seq order: the current row while it is still the state written then, else the
 * superseded state that version started (found by id, `feature_history_by_id`). Rows come in the order of the records'
 * primary key and of each list (json_each walks an array in order): an ORDER BY on the seq as well made SQLite sort
 * every row of the range before the first page.
 */
const written = (condition: string) => `SELECT v.version, j.value ->> 0 AS seq, coalesce(f.json,
    (SELECT h.json FROM feature_history h INDEXED BY feature_history_by_id
      WHERE h.sid = v.sid AND h.id = j.value ->> 1 AND h.version_to > v.version AND h.version_from = v.version LIMIT 1)) AS json
  FROM space_versions v CROSS JOIN json_each(v.written) j
  LEFT JOIN features f ON f.seq = j.value ->> 0 AND f.version = v.version
  WHERE v.sid = @sid AND v.version BETWEEN @from AND @to AND (v.version, j.value ->> 0) > (@from, @seq)
    AND ${condition} (SELECT 1 FROM feature_history e WHERE e.sid = @sid AND e.version_to = v.version AND e.seq = j.value ->> 0)
  ORDER BY v.version LIMIT @limit`;

/**
 * A state that ended at its version: with a state of the same feature written at it (replaced) or without (deleted). The
 * state written at it is the current row, or the history's state of that id that began at the version.
 */
const ENDED = (successor: 'EXISTS' | 'NOT EXISTS', join: 'AND' | 'OR') => `SELECT e.version_to AS version, e.seq, e.json FROM feature_history e
    WHERE e.sid = @sid AND e.version_to BETWEEN @from AND @to AND (e.version_to, e.seq) > (@from, @seq)
      AND (${successor} (SELECT 1 FROM features f WHERE f.seq = e.seq AND f.version = e.version_to)
        ${join} ${successor} (SELECT 1 FROM feature_history h INDEXED BY feature_history_by_id
          WHERE h.sid = @sid AND h.id = e.id AND h.version_to > e.version_to AND h.version_from = e.version_to))
    ORDER BY e.version_to, e.seq LIMIT @limit`;

const CHANGES: Record<StateKind, string> = {
  // A state written at a version over one that ended at it is an update: an update keeps the row's seq (ADR 002).
  inserted: written('NOT EXISTS'),
  updated: written('EXISTS'),
  deleted: ENDED('NOT EXISTS', 'AND'),
  replaced: ENDED('EXISTS', 'OR'),
};

interface PendingState { versionTo: number; seq: number; minX: number | null; minY: number; maxX: number; maxY: number }

interface TagRow { id: string; version: number; author: string; description: string | null; createdAt: number }

const tagOf = (row: TagRow): TagRecord => ({
  id: row.id, version: row.version, author: row.author, createdAt: row.createdAt, ...(row.description === null ? {} : { description: row.description }),
});

const TAG_COLUMNS = 'tag AS id, version, author, description, created_at AS createdAt';

export class SqliteHistoryStore implements HistoryStore {
  private readonly changeStatements;
  private readonly selectTags;
  private readonly selectTag;
  private readonly insertTag;
  private readonly changeTag;
  private readonly removeTag;
  private readonly raiseDeletedBefore;
  private readonly pruneStates;
  private readonly pruneVersions;
  private readonly selectPending;
  private readonly enterBounds;
  private readonly linkBounds;
  private readonly moveIndexed;

  constructor(private readonly db: Database.Database, private readonly writes: WriteTransactions) {
    this.changeStatements = Object.fromEntries(Object.entries(CHANGES).map(([kind, sql]) => [kind, db.prepare(sql)])) as Record<StateKind, Database.Statement>;
    this.selectTags = db.prepare<[number], TagRow>(`SELECT ${TAG_COLUMNS} FROM space_tags WHERE sid = ? ORDER BY tag`);
    this.selectTag = db.prepare<[number, string], TagRow>(`SELECT ${TAG_COLUMNS} FROM space_tags WHERE sid = ? AND tag = ?`);
    this.insertTag = db.prepare('INSERT OR IGNORE INTO space_tags (sid, tag, version, author, description, created_at) VALUES (?, ?, ?, ?, ?, ?)');
    this.changeTag = db.prepare('UPDATE space_tags SET version = ?, description = ? WHERE sid = ? AND tag = ?');
    this.removeTag = db.prepare<[number, string], TagRow>(`DELETE FROM space_tags WHERE sid = ? AND tag = ? RETURNING ${TAG_COLUMNS}`);
    this.raiseDeletedBefore = db.prepare('UPDATE spaces SET deleted_before = max(deleted_before, ?) WHERE sid = ?');
    // The oldest rows first, each batch one range of the primary key; a state a tag's version shows stays while the tag
    // can be read (it cannot once a write without history came after it).
    this.pruneStates = db.prepare(`DELETE FROM feature_history WHERE sid = @sid AND (version_to, seq) IN (
      SELECT h.version_to, h.seq FROM feature_history h WHERE h.sid = @sid AND h.version_to < @oldest
         AND NOT EXISTS (SELECT 1 FROM space_tags t WHERE t.sid = @sid AND t.version >= coalesce(h.version_from, -1) AND t.version < h.version_to
           AND t.version >= (SELECT history_from FROM spaces WHERE sid = @sid))
       ORDER BY h.version_to, h.seq LIMIT @limit)`);
    this.pruneVersions = db.prepare(`DELETE FROM space_versions WHERE sid = @sid AND version IN (
      SELECT version FROM space_versions WHERE sid = @sid AND version < @oldest ORDER BY version LIMIT @limit)`);
    this.selectPending = db.prepare<[number, number], PendingState>(`SELECT f.version_to AS versionTo, f.seq, f.min_x AS minX, f.min_y AS minY, f.max_x AS maxX, f.max_y AS maxY
      FROM spaces s CROSS JOIN feature_history f ON f.sid = s.sid AND (f.version_to, f.seq) > (s.history_indexed_version, s.history_indexed_seq)
     WHERE s.sid = ? ORDER BY f.version_to, f.seq LIMIT ?`);
    this.enterBounds = db.prepare<[number, number, number, number, number, number, number]>(
      'INSERT INTO feature_history_bounds (min_x, max_x, min_y, max_y, sid, version_to, seq) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.linkBounds = db.prepare<[number, number, number, number]>('UPDATE feature_history SET bounds_id = ? WHERE sid = ? AND version_to = ? AND seq = ?');
    this.moveIndexed = db.prepare<[number, number, number]>('UPDATE spaces SET history_indexed_version = ?, history_indexed_seq = ? WHERE sid = ?');
  }

  async versionsIn(space: SpaceKey, range: VersionRange, limit: number): Promise<VersionRecord[]> {
    const narrowing = ([['author = ?', range.author], ['created_at >= ?', range.startTime], ['created_at <= ?', range.endTime]] as const)
      .filter(([, value]) => value !== undefined);
    const where = ['sid = ? AND version BETWEEN ? AND ?', ...narrowing.map(([condition]) => condition)].join(' AND ');
    return this.db.prepare(`SELECT version, author, created_at AS createdAt FROM space_versions WHERE ${where} ORDER BY version LIMIT ?`)
      .all(space.sid, range.from, range.to, ...narrowing.map(([, value]) => value), limit) as VersionRecord[];
  }

  async changes(space: SpaceKey, kind: StateKind, after: { version: number; seq: number }, to: number, limit: number): Promise<ChangeRow[]> {
    return this.changeStatements[kind].all({ sid: space.sid, from: after.version, to, seq: after.seq, limit }) as ChangeRow[];
  }

  async deleteBefore(space: SpaceKey, version: number): Promise<void> {
    await this.writes.run(() => this.raiseDeletedBefore.run(version, space.sid));
  }

  async tags(space: SpaceKey): Promise<TagRecord[]> {
    return this.selectTags.all(space.sid).map(tagOf);
  }

  async tag(space: SpaceKey, id: string): Promise<TagRecord | undefined> {
    const row = this.selectTag.get(space.sid, id);
    return row && tagOf(row);
  }

  async createTag(space: SpaceKey, tag: TagRecord): Promise<boolean> {
    return this.writes.run(() => this.insertTag.run(space.sid, tag.id, tag.version, tag.author, tag.description ?? null, tag.createdAt).changes === 1);
  }

  async updateTag(space: SpaceKey, tag: TagRecord): Promise<boolean> {
    return this.writes.run(() => this.changeTag.run(tag.version, tag.description ?? null, space.sid, tag.id).changes === 1);
  }

  async deleteTag(space: SpaceKey, id: string): Promise<TagRecord | undefined> {
    const row = await this.writes.run(() => this.removeTag.get(space.sid, id));
    return row && tagOf(row);
  }

  /**
   * First enters at most `limit` states that have no entry in the history's R*Tree yet, in the Hilbert order of their
   * places: batched here, a batch dirties each page of the tree once where the writes, entering their own states, dirtied
   * one for most states (docs/decisions.md, "Versions"). Once none is left, prunes. Counts both.
   */
  async prune(space: SpaceKey, oldest: number, limit: number): Promise<number> {
    const entered = await this.writes.run(() => this.enterPending(space.sid, limit));
    if (entered === limit) return entered;
    const params = { sid: space.sid, oldest, limit };
    return entered + await this.writes.run(() => this.pruneStates.run(params).changes + this.pruneVersions.run(params).changes);
  }

  private enterPending(sid: number, limit: number): number {
    const pending = this.selectPending.all(sid, limit);
    if (pending.length === 0) return 0;
    const placed = pending.filter((state): state is PendingState & { minX: number } => state.minX !== null)
      .map((state) => ({ state, along: hilbertIndex((state.minX + state.maxX) / 2, (state.minY + state.maxY) / 2) }))
      .sort((a, b) => a.along - b.along);
    for (const { state: { versionTo, seq, minX, minY, maxX, maxY } } of placed) {
      const entry = Number(this.enterBounds.run(minX, maxX, minY, maxY, sid, versionTo, seq).lastInsertRowid);
      this.linkBounds.run(entry, sid, versionTo, seq);
    }
    const last = pending[pending.length - 1];
    this.moveIndexed.run(last.versionTo, last.seq, sid);
    return pending.length;
  }
}
