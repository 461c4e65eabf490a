// Keeps the SQLite database and its -wal and -shm files readable by their owner only: they hold every feature, password and token hash, and session.
import { chmodSync, closeSync, openSync, statSync } from 'node:fs';

const OWNER_ONLY = 0o600;
/** The permission bits of the group and of others. */
const GROUP_AND_OTHERS = 0o077;
/** The files SQLite keeps next to a database in WAL mode; it creates them with the database file's mode. */
const COMPANIONS = ['-wal', '-shm'];

/**
 * Creates the database file owner-only before SQLite opens it (SQLite would create it 0644 less the umask), and
 * sets an existing database and companions that the group or others may read, as an earlier version made them,
 * to 0600: the data stays as private as the admin credentials whatever the umask was (docs/decisions.md).
 */
export function makeOwnerOnly(file: string): void {
  // SQLite's names for a database that has no file.
  if (file === '' || file === ':memory:') return;
  closeSync(openSync(file, 'a', OWNER_ONLY));
  for (const path of [file, ...COMPANIONS.map((suffix) => file + suffix)]) tighten(path);
}

function tighten(path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if ((mode & GROUP_AND_OTHERS) === 0) return;
  try {
    chmodSync(path, OWNER_ONLY);
  } catch (error) {
    throw new Error(`${path} may be read by others and its mode cannot be set to 0600 (${(error as NodeJS.ErrnoException).code}): ` +
      'change it, or run the hub as the file\'s owner');
  }
}
