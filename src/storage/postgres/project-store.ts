// Projects in the PostgreSQL catalog database, next to spaces and tokens.
import type { ProjectListFilter, ProjectRecord, ProjectStore, StoredProject } from '../storage.js';
import type { Database, Prepared } from './database.js';

const COLUMNS = 'seq, id, owner, published, json';

const PROJECT_BY_ID: Prepared = { name: 'project_by_id', text: `SELECT ${COLUMNS} FROM projects WHERE id = $1` };
const OWNER_PAGE: Prepared = {
  name: 'projects_of_owner',
  text: `SELECT ${COLUMNS} FROM projects WHERE owner = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
};
const PUBLISHED_PAGE: Prepared = {
  name: 'projects_published',
  text: `SELECT ${COLUMNS} FROM projects WHERE published AND seq > $1 ORDER BY seq LIMIT $2`,
};

/**
 * Text cannot hold U+0000. Project ids with it are refused before they get here, and owners are account ids
 * read from the tokens table, a text column too.
 */
export class PostgresProjectStore implements ProjectStore {
  constructor(private readonly db: Database) {}

  async get(id: string): Promise<StoredProject | undefined> {
    const [row] = await this.db.query<StoredProject>(PROJECT_BY_ID, [id]);
    return row;
  }

  /** A concurrent insert of the same id fails the insert with a unique violation; the transaction then runs again and replaces it. */
  async write(id: string, change: (current: StoredProject | undefined) => ProjectRecord | undefined): Promise<StoredProject> {
    return this.db.transaction(async (client) => {
      const { rows: [current] } = await client.query<StoredProject>(`SELECT ${COLUMNS} FROM projects WHERE id = $1 FOR UPDATE`, [id]);
      const next = change(current);
      if (!next) {
        if (!current) throw new Error('a project write without a project to keep');
        return current;
      }
      if (current) {
        await client.query('UPDATE projects SET owner = $1, published = $2, json = $3 WHERE seq = $4',
          [next.owner, next.published, next.json, current.seq]);
        return { ...next, seq: current.seq };
      }
      const { rows: [{ seq }] } = await client.query<{ seq: number }>(
        'INSERT INTO projects (id, owner, published, json) VALUES ($1, $2, $3, $4) RETURNING seq',
        [next.id, next.owner, next.published, next.json]);
      return { ...next, seq };
    });
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM projects WHERE id = $1 AND owner = $2 RETURNING seq', [id, owner])).length > 0;
  }

  async list(filter: ProjectListFilter, afterSeq: number, limit: number): Promise<StoredProject[]> {
    return 'owner' in filter
      ? this.db.query<StoredProject>(OWNER_PAGE, [filter.owner, afterSeq, limit])
      : this.db.query<StoredProject>(PUBLISHED_PAGE, [afterSeq, limit]);
  }
}
