// The storage engines the benchmark can run the hub on, and how it reaches the same engine directly for the floors.
import { join } from 'node:path';
import { SqliteStorage } from '../src/storage/sqlite/sqlite-storage.js';
import type { Storage } from '../src/storage/storage.js';

export interface BenchEngine {
  name: string;
  /** Environment that makes a hub started on `dataDir` use this engine. */
  hubEnv(dataDir: string): Record<string, string>;
  /** A fresh, empty storage in `dir` for the floor measurements. */
  openFloor(dir: string): Storage;
  /** A second connection to the storage of the hub running on `dataDir`, to fill it without HTTP. */
  openHubStorage(dataDir: string): Storage;
}

const sqlite: BenchEngine = {
  name: 'sqlite',
  hubEnv: (dataDir) => ({ HUB_STORAGE: `sqlite:${join(dataDir, 'hub.db')}` }),
  openFloor: (dir) => new SqliteStorage(join(dir, 'floor.db')),
  // WAL mode lets a second connection write while the hub has the file open.
  openHubStorage: (dataDir) => new SqliteStorage(join(dataDir, 'hub.db')),
};

/** A PostgreSQL engine joins this table once the hub has one. */
export const ENGINES: Record<string, BenchEngine> = { sqlite };
