// `spatial-hub backup` and `restore` for the engine a HUB_STORAGE location names (docs/operations.md).
import { backupPostgres, restorePostgres } from './postgres/postgres-backup.js';
import { backupSqlite, restoreSqlite } from './sqlite/sqlite-backup.js';

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** Writes a consistent copy of the storage to `file` while hubs serve from it; resolves with a line for the operator. */
export function backupStorage(location: string, file: string): Promise<string> {
  if (location.startsWith('sqlite:')) return backupSqlite(location.slice('sqlite:'.length), file);
  if (POSTGRES_URL.test(location)) return backupPostgres(location, file);
  throw new Error('Unsupported storage location: use sqlite:<file> or postgres://user@host:port/db');
}

/** Restores `file` into a storage location that holds no hub yet; start the hub on it afterwards. */
export function restoreStorage(file: string, location: string): Promise<string> {
  if (location.startsWith('sqlite:')) return restoreSqlite(file, location.slice('sqlite:'.length));
  if (POSTGRES_URL.test(location)) return restorePostgres(file, location);
  throw new Error('Unsupported storage location: use sqlite:<file> or postgres://user@host:port/db');
}
