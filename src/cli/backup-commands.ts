// `spatial-hub backup FILE` and `spatial-hub restore FILE`, on the storage the hub serves from (its --storage, --data-dir or their environment variables).
import { loadConfig } from '../config/config.js';
import { backupStorage, restoreStorage } from '../storage/backup.js';

export const BACKUP_USAGE = `Backup (with the storage options of serve):
  spatial-hub backup <file>     a consistent copy of the storage, taken while the hub serves (SQLite: online backup; PostgreSQL: pg_dump)
  spatial-hub restore <file>    into a storage location that holds no hub yet (a new data directory or an empty database); then start the hub`;


/** Returns the exit code: 0 done, 2 bad usage, 1 the backup or restore failed. */
export async function runBackupCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, file, ...rest] = argv;
  if (file === undefined || file.startsWith('--')) {
    process.stderr.write(`${command} takes the backup file first\n${BACKUP_USAGE}\n`);
    return 2;
  }
  let storage: string;
  try {
    storage = loadConfig(rest, env).storage;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  try {
    const done = command === 'backup' ? await backupStorage(storage, file) : await restoreStorage(file, storage);
    process.stdout.write(`${done}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
