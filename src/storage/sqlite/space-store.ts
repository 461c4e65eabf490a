// Spaces in the embedded SQLite database.
import type Database from 'better-sqlite3';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { SpaceListFilter, TimeCondition } from '../../core/space-query.js';
import { StorageError } from '../storage-error.js';
import type { SpaceStore, SpaceWithFeature, StoredSpace } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

interface SpaceRow {
  sid: number;
  id: string;
  definition: string;
  content_updated_at: number;
  revision: number;
}

const columns = 'sid, id, definition, content_updated_at, revision';

interface Condition {
  sql: string;
  params: unknown[];
}

/**
 * OR-ed comparisons with several values as one: `>`/`>=` with the smallest, `<`/`<=` with the largest,
 * `=` with the list; `!=` with two different values holds for every space.
 */
function contentCondition({ op, values }: TimeCondition): Condition | undefined {
  const column = 'content_updated_at';
  switch (op) {
    case '=': return { sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] };
    case '>': case '>=': return { sql: `${column} ${op} ?`, params: [values.reduce((a, b) => Math.min(a, b))] };
    case '<': case '<=': return { sql: `${column} ${op} ?`, params: [values.reduce((a, b) => Math.max(a, b))] };
    case '!=': return new Set(values).size > 1 ? undefined : { sql: `${column} <> ?`, params: [values[0]] };
  }
}

/** The list filter as conditions on the generated columns owner and shared (see migrations.ts) and the counters. */
function listConditions(filter: SpaceListFilter): Condition[] {
  const conditions: Condition[] = [];
  if (filter.owner && 'is' in filter.owner) conditions.push({ sql: 'owner = ?', params: [filter.owner.is] });
  if (filter.owner && 'isNot' in filter.owner) conditions.push({ sql: 'owner IS NOT ?', params: [filter.owner.isNot] });
  const content = filter.contentUpdatedAt && contentCondition(filter.contentUpdatedAt);
  if (content) conditions.push(content);
  if (filter.sharedOrOwnedBy) {
    conditions.push({ sql: '(shared OR owner IN (SELECT value FROM json_each(?)))', params: [JSON.stringify(filter.sharedOrOwnedBy)] });
  }
  return conditions;
}

function toSpace(row: SpaceRow): StoredSpace {
  return {
    id: row.id,
    key: { sid: row.sid, location: '' },
    definition: JSON.parse(row.definition) as SpaceDefinition,
    contentUpdatedAt: row.content_updated_at,
    revision: row.revision,
  };
}

export class SqliteSpaceStore implements SpaceStore {
  private readonly insert;
  private readonly selectOne;
  private readonly selectFeature;
  private readonly updateDefinition;
  private readonly deleteSpace;
  private readonly deleteFeatures;
  private readonly deleteTags;
  private readonly deleteHistory;

  constructor(private readonly db: Database.Database, private readonly writes: WriteTransactions) {
    this.insert = db.prepare<[string, string, number], { sid: number }>(
      'INSERT INTO spaces (id, definition, content_updated_at) VALUES (?, ?, ?) RETURNING sid');
    this.selectOne = db.prepare<[string], SpaceRow>(`SELECT ${columns} FROM spaces WHERE id = ?`);
    this.selectFeature = db.prepare<[number, string], string>('SELECT json FROM features WHERE sid = ? AND id = ?').pluck();
    this.updateDefinition = db.prepare('UPDATE spaces SET definition = ? WHERE sid = ?');
    this.deleteSpace = db.prepare('DELETE FROM spaces WHERE sid = ?');
    this.deleteFeatures = db.prepare('DELETE FROM features WHERE sid = ?');
    this.deleteTags = db.prepare('DELETE FROM feature_tags WHERE sid = ?');
    this.deleteHistory = [db.prepare('DELETE FROM feature_history WHERE sid = ?'), db.prepare('DELETE FROM space_versions WHERE sid = ?'),
      db.prepare('DELETE FROM space_tags WHERE sid = ?'), db.prepare('DELETE FROM subscriptions WHERE sid = ?')];
  }

  /** One database holds every space, so a space to be created `near` another is always there. */
  async create(id: string, definition: SpaceDefinition, createdAt: number): Promise<StoredSpace> {
    let sid: number;
    try {
      ({ sid } = await this.writes.run(() => this.insert.get(id, JSON.stringify(definition), createdAt) as { sid: number }));
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new StorageError('spaceExists', id);
      throw error;
    }
    return { id, key: { sid, location: '' }, definition, contentUpdatedAt: createdAt, revision: 0 };
  }

  async get(id: string): Promise<StoredSpace | undefined> {
    const row = this.selectOne.get(id);
    return row && toSpace(row);
  }

  async getWithFeature(id: string, featureId: string): Promise<SpaceWithFeature | undefined> {
    const row = this.selectOne.get(id);
    return row && { definition: JSON.parse(row.definition) as SpaceDefinition, feature: this.selectFeature.get(row.sid, featureId) };
  }

  async *list(filter: SpaceListFilter, pageSize: number): AsyncIterable<StoredSpace[]> {
    const conditions = listConditions(filter);
    const where = conditions.map((condition) => ` AND ${condition.sql}`).join('');
    const params = conditions.flatMap((condition) => condition.params);
    const page = this.db.prepare<unknown[], SpaceRow>(
      `SELECT ${columns} FROM spaces WHERE sid > ?${where} ORDER BY sid LIMIT ?`);
    for (let afterSid = 0; ;) {
      const rows = page.all(afterSid, ...params, pageSize);
      if (rows.length > 0) yield rows.map(toSpace);
      if (rows.length < pageSize) return;
      afterSid = rows[rows.length - 1].sid;
    }
  }

  async update(id: string, change: (current: StoredSpace) => SpaceDefinition): Promise<StoredSpace | undefined> {
    return this.writes.run(() => {
      const row = this.selectOne.get(id);
      if (!row) return undefined;
      const current = toSpace(row);
      const definition = change(current);
      this.updateDefinition.run(JSON.stringify(definition), row.sid);
      return { ...current, definition };
    });
  }

  async delete(id: string): Promise<StoredSpace | undefined> {
    return this.writes.run(() => {
      const row = this.selectOne.get(id);
      if (!row) return undefined;
      this.deleteTags.run(row.sid);
      this.deleteFeatures.run(row.sid);
      for (const statement of this.deleteHistory) statement.run(row.sid);
      this.deleteSpace.run(row.sid);
      return toSpace(row);
    });
  }
}
