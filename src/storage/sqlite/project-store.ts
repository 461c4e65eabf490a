// Projects in the embedded SQLite database.
import type Database from 'better-sqlite3';
import type { ProjectListFilter, ProjectRecord, ProjectStore, StoredProject } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

interface ProjectRow {
  seq: number;
  id: string;
  owner: string;
  published: number;
  json: string;
}

const COLUMNS = 'seq, id, owner, published, json';

const toProject = (row: ProjectRow): StoredProject => ({ ...row, published: row.published === 1 });

export class SqliteProjectStore implements ProjectStore {
  private readonly selectOne;
  private readonly insert;
  private readonly update;
  private readonly deleteOwned;
  private readonly ownerPage;
  private readonly publishedPage;

  constructor(db: Database.Database, private readonly writes: WriteTransactions) {
    this.selectOne = db.prepare<[string], ProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE id = ?`);
    this.insert = db.prepare<[string, string, number, string], { seq: number }>(
      'INSERT INTO projects (id, owner, published, json) VALUES (?, ?, ?, ?) RETURNING seq');
    this.update = db.prepare<[string, number, string, number]>('UPDATE projects SET owner = ?, published = ?, json = ? WHERE seq = ?');
    this.deleteOwned = db.prepare<[string, string]>('DELETE FROM projects WHERE id = ? AND owner = ?');
    this.ownerPage = db.prepare<[string, number, number], ProjectRow>(
      `SELECT ${COLUMNS} FROM projects WHERE owner = ? AND seq > ? ORDER BY seq LIMIT ?`);
    this.publishedPage = db.prepare<[number, number], ProjectRow>(
      `SELECT ${COLUMNS} FROM projects WHERE published AND seq > ? ORDER BY seq LIMIT ?`);
  }

  async get(id: string): Promise<StoredProject | undefined> {
    const row = this.selectOne.get(id);
    return row && toProject(row);
  }

  async write(id: string, change: (current: StoredProject | undefined) => ProjectRecord | undefined): Promise<StoredProject> {
    return this.writes.run(() => {
      const row = this.selectOne.get(id);
      const current = row && toProject(row);
      const next = change(current);
      if (!next) {
        if (!current) throw new Error('a project write without a project to keep');
        return current;
      }
      const published = next.published ? 1 : 0;
      if (current) {
        this.update.run(next.owner, published, next.json, current.seq);
        return { ...next, seq: current.seq };
      }
      const { seq } = this.insert.get(next.id, next.owner, published, next.json) as { seq: number };
      return { ...next, seq };
    });
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return (await this.writes.run(() => this.deleteOwned.run(id, owner))).changes > 0;
  }

  async list(filter: ProjectListFilter, afterSeq: number, limit: number): Promise<StoredProject[]> {
    const rows = 'owner' in filter ? this.ownerPage.all(filter.owner, afterSeq, limit) : this.publishedPage.all(afterSeq, limit);
    return rows.map(toProject);
  }
}
