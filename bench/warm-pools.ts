// PostgreSQL pools for the floors, opened once per database, size and session options and kept for the floor worker's life.
import pg from 'pg';

const pools = new Map<string, Promise<pg.Pool>>();

/**
 * A pool of `size` connections, all opened before its first use, and the same pool (the same backends) for every later
 * run with the same arguments. The hub's pool lives as long as the hub, so its backends have read the tables and
 * planned the statements before a timed run starts; a floor on backends new to each run paid what the hub does not:
 * each new backend's first touch of every shared buffer it reads (a page fault per 4 KiB of a server with gigabytes
 * of shared buffers) and its empty catalog caches. A floor should be the least the query costs. (What a backend does
 * with the memory a statement freed is the server's environment, the same for the hub's backends and the floors':
 * bench/postgres-settings.ts SERVER_ENVIRONMENT.)
 */
export function warmPool(url: string, size: number, options?: string): Promise<pg.Pool> {
  const key = JSON.stringify([url, size, options]);
  let opened = pools.get(key);
  if (!opened) {
    opened = (async () => {
      const pool = new pg.Pool({ connectionString: url, max: size, options });
      const clients = await Promise.all(Array.from({ length: size }, () => pool.connect()));
      for (const client of clients) client.release();
      return pool;
    })();
    pools.set(key, opened);
  }
  return opened;
}
