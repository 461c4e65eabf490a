// Spaces in the embedded SQLite database.
import type Database from 'better-sqlite3';
import { hubError } from '../../core/errors.js';
import type { SpaceListFilter, TimeCondition } from '../../core/space-query.js';
import type { SpaceStore, StoredSpace } from '../storage.js';

interface SpaceRow {
  id: string;
  definition: string;
  content_updated_at: number;
  revision: number;
  feature_count: number;
}

const columns = 'id, definition, content_updated_at, revision, feature_count';

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
    definition: JSON.parse(row.definition) as Record<string, unknown>,
    contentUpdatedAt: row.content_updated_at,
    revision: row.revision,
    featureCount: row.feature_count,
  };
}

export class SqliteSpaceStore implements SpaceStore {
  private readonly insert;
  private readonly selectOne;
  private readonly updateDefinition;
  private readonly deleteSpace;
  private readonly deleteFeatures;
  private readonly deleteTags;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare('INSERT INTO spaces (id, definition, content_updated_at) VALUES (?, ?, ?)');
    this.selectOne = db.prepare<[string], SpaceRow>(`SELECT ${columns} FROM spaces WHERE id = ?`);
    this.updateDefinition = db.prepare('UPDATE spaces SET definition = ? WHERE id = ?');
    this.deleteSpace = db.prepare('DELETE FROM spaces WHERE id = ?');
    this.deleteFeatures = db.prepare('DELETE FROM features WHERE sid = (SELECT sid FROM spaces WHERE id = ?)');
    this.deleteTags = db.prepare('DELETE FROM feature_tags WHERE sid = (SELECT sid FROM spaces WHERE id = ?)');
  }

  async create(id: string, definition: Record<string, unknown>, createdAt: number): Promise<StoredSpace> {
    try {
      this.insert.run(id, JSON.stringify(definition), createdAt);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw hubError('spaceExists', { id });
      throw error;
    }
    return { id, definition, contentUpdatedAt: createdAt, revision: 0, featureCount: 0 };
  }

  async get(id: string): Promise<StoredSpace | undefined> {
    const row = this.selectOne.get(id);
    return row && toSpace(row);
  }

  async *list(filter: SpaceListFilter, pageSize: number): AsyncIterable<StoredSpace[]> {
    const conditions = listConditions(filter);
    const where = conditions.map((condition) => ` AND ${condition.sql}`).join('');
    const params = conditions.flatMap((condition) => condition.params);
    const page = this.db.prepare<unknown[], SpaceRow & { sid: number }>(
      `SELECT sid, ${columns} FROM spaces WHERE sid > ?${where} ORDER BY sid LIMIT ?`);
    for (let afterSid = 0; ;) {
      const rows = page.all(afterSid, ...params, pageSize);
      if (rows.length > 0) yield rows.map(toSpace);
      if (rows.length < pageSize) return;
      afterSid = rows[rows.length - 1].sid;
    }
  }

  async update(id: string, change: (current: StoredSpace) => Record<string, unknown>): Promise<StoredSpace | undefined> {
    return this.db.transaction(() => {
      const row = this.selectOne.get(id);
      if (!row) return undefined;
      const current = toSpace(row);
      const definition = change(current);
      this.updateDefinition.run(JSON.stringify(definition), id);
      return { ...current, definition };
    }).immediate();
  }

  async delete(id: string): Promise<StoredSpace | undefined> {
    return this.db.transaction(() => {
      const row = this.selectOne.get(id);
      if (!row) return undefined;
      this.deleteTags.run(id);
      this.deleteFeatures.run(id);
      this.deleteSpace.run(id);
      return toSpace(row);
    }).immediate();
  }
}
