// The storage engines the benchmark can run the hub on, and how it reaches the same engine directly for the floors.
import { join } from 'node:path';
import { PostgresStorage } from '../src/storage/postgres/postgres-storage.js';
import { SqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { Storage } from '../src/storage/storage.js';
import { type PostgresCluster, startPostgresCluster } from '../test/helpers/postgres-cluster.js';

export interface BenchEngine {
  name: string;
  /** Environment that makes a hub started on `dataDir` use this engine. */
  hubEnv(dataDir: string): Record<string, string>;
  /** A fresh, empty storage in `dir` for the floor measurements. */
  openFloor(dir: string): Storage;
  /** A second connection to the storage of the hub running on `dataDir`, to fill it without HTTP. */
  openHubStorage(dataDir: string): Storage;
  /** Brings up what the engine needs before the hub starts (a database server), and takes it down after. */
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

const sqlite: BenchEngine = {
  name: 'sqlite',
  hubEnv: (dataDir) => ({ HUB_STORAGE: `sqlite:${join(dataDir, 'hub.db')}` }),
  openFloor: (dir) => new SqliteStorage(join(dir, 'floor.db')),
  // WAL mode lets a second connection write while the hub has the file open.
  openHubStorage: (dataDir) => new SqliteStorage(join(dataDir, 'hub.db')),
};

/** A private throw-away cluster (the one the tests use) with one database for the hub and one for the floor. */
class PostgresEngine implements BenchEngine {
  readonly name = 'postgres';
  private cluster: PostgresCluster | undefined;
  private floorUrl = '';

  private get url(): string {
    if (!this.cluster) throw new Error('the postgres bench engine was not started');
    return this.cluster.url;
  }

  async start(): Promise<void> {
    this.cluster = await startPostgresCluster();
    this.floorUrl = await this.cluster.createDatabase('floor');
  }

  async stop(): Promise<void> {
    await this.cluster?.destroy();
  }

  hubEnv(): Record<string, string> {
    return { HUB_STORAGE: this.url };
  }

  openFloor(): Storage {
    return new PostgresStorage([this.floorUrl], { poolSize: 10 });
  }

  openHubStorage(): Storage {
    return new PostgresStorage([this.url], { poolSize: 10 });
  }
}

export const ENGINES: Record<string, BenchEngine> = { sqlite, postgres: new PostgresEngine() };
