// The production storage engine: PostgreSQL 15 + PostGIS 3, one or more databases, the first holding the catalog.
import { StorageError } from '../storage-error.js';
import type { ChangeListener, ChangeWatch, PoolFigures, FeatureStore, HistoryStore, ProjectStore, SessionStore, SpaceStore, Storage, SubscriptionStore, JobStore } from '../storage.js';
import { listenForChanges } from './change-listener.js';
import { PostgresAccessStore } from './access-store.js';
import { Database } from './database.js';
import { PostgresFeatureStore } from './feature-store.js';
import { PostgresHistoryStore } from './history-store.js';
import { Locations } from './locations.js';
import { CATALOG, CONTENT, migrate } from './migrations.js';
import { PostgresProjectStore } from './project-store.js';
import { PostgresSessionStore } from './session-store.js';
import { PostgresSpaceStore } from './space-store.js';
import { PostgresSubscriptionStore } from './subscription-store.js';
import { PostgresJobStore } from './job-store.js';

export interface PostgresOptions {
  /** Connections each node keeps at most to each database. */
  poolSize: number;
  /** The deadline of each statement, and of a paged read in all, in ms; 0 for none. */
  queryTimeout: number;
}

export class PostgresStorage implements Storage {
  readonly engine = 'postgres';
  /** NOTIFY reaches every process of every node. */
  readonly changesStayInProcess = false;
  // No `spacesStamp`: PostgreSQL cannot tell cheaply and strictly. Its snapshot (`pg_current_snapshot()`) is strict
  // but one statement, measured dearer than the row's own lookup, which lookups of two event-loop rounds already
  // share (space-store.ts); a NOTIFY from every commit costs no statement but is heard a little after the commit, so
  // another node could serve a read from before a write it already acknowledged (docs/cache-and-changed-tiles.md).
  readonly spaces: SpaceStore;
  readonly features: FeatureStore;
  readonly history: HistoryStore;
  readonly access: PostgresAccessStore;
  readonly projects: ProjectStore;
  readonly sessions: SessionStore;
  readonly subscriptions: SubscriptionStore;
  readonly jobs: JobStore;
  private readonly locations: Locations;
  private readonly watches = new Set<ChangeWatch>();

  constructor(urls: readonly string[], options: PostgresOptions) {
    this.locations = new Locations(urls.map((url) => new Database(url, { size: options.poolSize, statementTimeout: options.queryTimeout })));
    // Start-up (connect, migrate, identify each database) runs in the background so that openStorage stays
    // synchronous; every query waits for it, and a database that is down at start fails the first call.
    const ready = this.start(options.poolSize);
    for (const db of this.locations.all) db.waitFor(ready);
    this.spaces = new PostgresSpaceStore(this.locations);
    this.features = new PostgresFeatureStore(this.locations, options.queryTimeout);
    this.history = new PostgresHistoryStore(this.locations);
    this.access = new PostgresAccessStore(this.locations.catalog);
    this.projects = new PostgresProjectStore(this.locations.catalog);
    this.sessions = new PostgresSessionStore(this.locations.catalog);
    this.subscriptions = new PostgresSubscriptionStore(this.locations.catalog);
    this.jobs = new PostgresJobStore(this.locations.catalog);
  }

  private async start(poolSize: number): Promise<void> {
    const seen = new Map<string, Database>();
    for (const db of this.locations.all) {
      await db.session(async (client) => {
        const { rows: [limits] } = await client.query<{ available: number }>(
          `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int AS available`);
        if (poolSize >= limits.available) {
          throw new Error(`The pool size ${poolSize} (HUB_PG_POOL_SIZE) must stay below the ${limits.available} connections ` +
            `${db.name} accepts (max_connections minus superuser_reserved_connections); lower it or raise max_connections.`);
        }
        await migrate(client, db === this.locations.catalog ? [CATALOG, CONTENT] : [CONTENT]);
        const { rows: [identity] } = await client.query<{ id: string }>('SELECT id FROM hub_database');
        db.id = identity.id;
      });
      const twin = seen.get(db.id);
      if (twin) throw new Error(`HUB_STORAGE names the same database twice: ${twin.name} and ${db.name}`);
      seen.set(db.id, db);
    }
  }

  /** The versions committed on any node: each write notifies its space's new HEAD as it commits (change-listener.ts). */
  watchChanges(listener: ChangeListener): ChangeWatch {
    const watch = listenForChanges(this.locations.all, listener);
    this.watches.add(watch);
    return { close: async () => { this.watches.delete(watch); await watch.close(); } };
  }

  /** Each setting as the hub's pooled sessions see it; the distinct values, comma-separated, when the databases differ. */
  async durability(): Promise<Record<string, string>> {
    const settings = await Promise.all(this.locations.all.map(async (db) => {
      const [row] = await db.query<{ synchronous_commit: string; fsync: string }>(
        `SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`);
      return row;
    }));
    const values = (key: 'synchronous_commit' | 'fsync') => [...new Set(settings.map((row) => row[key]))].join(',');
    return { synchronous_commit: values('synchronous_commit'), fsync: values('fsync') };
  }

  async ping(): Promise<void> {
    try {
      await Promise.all(this.locations.all.map((db) => db.query('SELECT 1')));
    } catch (error) {
      throw error instanceof StorageError ? error : new StorageError('unavailable', error instanceof Error ? error.message : String(error));
    }
  }

  poolFigures(): PoolFigures {
    const figures: PoolFigures = { connections: 0, busy: 0, waiting: 0 };
    for (const { pool } of this.locations.all) {
      figures.connections += pool.totalCount;
      figures.busy += pool.totalCount - pool.idleCount;
      figures.waiting += pool.waitingCount;
    }
    return figures;
  }

  async close(): Promise<void> {
    await this.access.close();
    await Promise.all([...this.watches].map((watch) => watch.close()));
    await Promise.all(this.locations.all.map((db) => db.close()));
  }
}
