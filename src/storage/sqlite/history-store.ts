// The history beside a space's features in SQLite (ADR 002): version records, changes by version, tags and pruning.
import type Database from 'better-sqlite3';
import type { ChangeRow, HistoryStore, SpaceKey, StateKind, TagRecord, VersionRange, VersionRecord } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

/**
 * The states written at versions @from … @to after the position (@from, @seq): current rows carry the version that wrote them,
 * superseded ones `version_from`. Each part is an index range (`features_by_version`, `feature_history_by_from`).
 */
const WRITTEN = `SELECT version, seq, json FROM features WHERE sid = @sid AND version BETWEEN @from AND @to AND (version, seq) > (@from, @seq)
  UNION ALL SELECT version_from, seq, json FROM feature_history WHERE sid = @sid AND version_from BETWEEN @from AND @to AND (version_from, seq) > (@from, @seq)`;
/** A state written at a version over one that ended at it: an update keeps the row's seq (ADR 002). */
const REPLACED = 'EXISTS (SELECT 1 FROM feature_history e WHERE e.sid = @sid AND e.version_to = w.version AND e.seq = w.seq)';

/** A state that ended at its version: with a state of the same row written at it (replaced) or without (deleted). */
const ENDED = (successor: 'EXISTS' | 'NOT EXISTS', join: 'AND' | 'OR') => `SELECT e.version_to AS version, e.seq, e.json FROM feature_history e
    WHERE e.sid = @sid AND e.version_to BETWEEN @from AND @to AND (e.version_to, e.seq) > (@from, @seq)
      AND (${successor} (SELECT 1 FROM features f WHERE f.seq = e.seq AND f.version = e.version_to)
        ${join} ${successor} (SELECT 1 FROM feature_history h WHERE h.sid = @sid AND h.version_from = e.version_to AND h.seq = e.seq))
    ORDER BY e.version_to, e.seq LIMIT @limit`;

const CHANGES: Record<StateKind, string> = {
  inserted: `SELECT version, seq, json FROM (${WRITTEN}) w WHERE NOT ${REPLACED} ORDER BY version, seq LIMIT @limit`,
  updated: `SELECT version, seq, json FROM (${WRITTEN}) w WHERE ${REPLACED} ORDER BY version, seq LIMIT @limit`,
  deleted: ENDED('NOT EXISTS', 'AND'),
  replaced: ENDED('EXISTS', 'OR'),
};

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

  async prune(space: SpaceKey, oldest: number, limit: number): Promise<number> {
    const params = { sid: space.sid, oldest, limit };
    return this.writes.run(() => this.pruneStates.run(params).changes + this.pruneVersions.run(params).changes);
  }
}
