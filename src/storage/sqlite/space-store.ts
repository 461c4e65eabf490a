// Spaces in the embedded SQLite database.
import type Database from 'better-sqlite3';
import { hubError } from '../../core/errors.js';
import type { SpaceStore, StoredSpace } from '../storage.js';

interface SpaceRow {
  id: string;
  definition: string;
  content_updated_at: number;
  revision: number;
  feature_count: number;
}

const columns = 'id, definition, content_updated_at, revision, feature_count';

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
  private readonly selectAll;
  private readonly updateDefinition;
  private readonly deleteSpace;
  private readonly deleteFeatures;
  private readonly deleteTags;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare('INSERT INTO spaces (id, definition, content_updated_at) VALUES (?, ?, ?)');
    this.selectOne = db.prepare<[string], SpaceRow>(`SELECT ${columns} FROM spaces WHERE id = ?`);
    this.selectAll = db.prepare<[], SpaceRow>(`SELECT ${columns} FROM spaces ORDER BY sid`);
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

  async list(): Promise<StoredSpace[]> {
    return this.selectAll.all().map(toSpace);
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
