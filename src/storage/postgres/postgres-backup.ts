// Backup and restore of a PostgreSQL hub with pg_dump and pg_restore: the whole database, taken in one snapshot while the hub serves.
import { execFile } from 'node:child_process';
import { chmodSync, closeSync, existsSync, openSync, renameSync, rmSync } from 'node:fs';
import pg from 'pg';
import { maskUrl } from './mask-url.js';

/** The URL without its password, which goes to the tools in PGPASSWORD: a command line is visible to every user of the machine. */
function connection(url: string): { url: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return { url: parsed.href, env: password === '' ? process.env : { ...process.env, PGPASSWORD: password } };
}

function run(tool: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { env, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(new Error(`${tool} is not on the PATH: install the PostgreSQL client tools, of the server's major version or newer`));
      }
      reject(new Error(`${tool} failed: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

/** One database per command: several (HUB_STORAGE with a list) are backed up one by one, each with pg_dump (docs/operations.md). */
function single(location: string): string {
  const urls = location.split(',').map((url) => url.trim());
  if (urls.length !== 1) {
    throw new Error(`HUB_STORAGE names ${urls.length} databases: back up and restore each with pg_dump and pg_restore as docs/operations.md shows, all while no hub writes`);
  }
  return urls[0];
}

/**
 * pg_dump's custom format: every table, sequence and the PostGIS extension of the database, read in one snapshot
 * (a repeatable-read transaction), so the hub's writes go on while it runs and none is half in the backup.
 */
export async function backupPostgres(location: string, backupFile: string): Promise<string> {
  const { url, env } = connection(single(location));
  const partial = `${backupFile}.partial`;
  try {
    // Owner-only before pg_dump writes into it (it keeps an existing file's mode): the backup holds password and token hashes.
    rmSync(partial, { force: true });
    closeSync(openSync(partial, 'w', 0o600));
    chmodSync(partial, 0o600);
    await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${partial}`, `--dbname=${url}`], env);
    renameSync(partial, backupFile);
  } finally {
    rmSync(partial, { force: true });
  }
  return `Backed up ${maskUrl(location)} to ${backupFile} (pg_dump, custom format, one snapshot).`;
}

/** Into a database without the hub's tables (a new one, with PostGIS available on its server), in one transaction. */
export async function restorePostgres(backupFile: string, location: string): Promise<string> {
  if (!existsSync(backupFile)) throw new Error(`There is no backup at ${backupFile}`);
  const target = single(location);
  const client = new pg.Client({ connectionString: target });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows: [row] } = await client.query<{ used: boolean }>("SELECT to_regclass('hub_database') IS NOT NULL AS used");
    if (row.used) throw new Error(`${maskUrl(target)} holds a hub already: restore into a new, empty database`);
  } finally {
    await client.end().catch(() => {});
  }
  const { url, env } = connection(target);
  await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${url}`, backupFile], env);
  return `Restored ${backupFile} to ${maskUrl(location)} (pg_restore).`;
}
