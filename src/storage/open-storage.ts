// Opens the storage engine a HUB_STORAGE location names.
import { maskUrl } from './postgres/mask-url.js';
import { PostgresStorage } from './postgres/postgres-storage.js';
import { SqliteStorage } from './sqlite/sqlite-storage.js';
import type { Storage } from './storage.js';

export interface StorageOptions {
  /** Connections per PostgreSQL database and node. */
  pgPoolSize?: number;
  /** The deadline of a query in ms (HUB_QUERY_TIMEOUT); 0 for none. */
  queryTimeout?: number;
}

/** The default of HUB_PG_POOL_SIZE (src/config/config.ts). */
const DEFAULT_PG_POOL_SIZE = 10;
/** The default of HUB_QUERY_TIMEOUT (src/config/config.ts). */
const DEFAULT_QUERY_TIMEOUT_MS = 60_000;

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/**
 * `sqlite:<file>`, or one or more comma-separated `postgres://user@host:port/db` URLs: the first database
 * holds the catalog and every one holds features (each new space goes to the one with the fewest spaces).
 */
export async function openStorage(location: string, options: StorageOptions = {}): Promise<Storage> {
  const queryTimeout = options.queryTimeout ?? DEFAULT_QUERY_TIMEOUT_MS;
  if (location.startsWith('sqlite:')) return SqliteStorage.open(location.slice('sqlite:'.length), { queryTimeout });
  if (POSTGRES_URL.test(location)) {
    const urls = location.split(',').map((url) => url.trim());
    const wrong = urls.find((url) => !POSTGRES_URL.test(url));
    // The whole location, masked, rather than the piece: a piece may be the part of a password after a comma.
    if (wrong !== undefined) {
      throw new Error(`Unsupported storage location "${maskUrl(location)}": every database in the list must be a postgres:// URL ` +
        '(a comma in a password is written %2C)');
    }
    return new PostgresStorage(urls, { poolSize: options.pgPoolSize ?? DEFAULT_PG_POOL_SIZE, queryTimeout });
  }
  throw new Error(`Unsupported storage location "${maskUrl(location)}": use sqlite:<file> or postgres://user@host:port/db[,postgres://…]`);
}
