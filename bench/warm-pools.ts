// PostgreSQL pools for the floors, opened once per database, size and session options and kept for the floor worker's life.
import pg from 'pg';

const pools = new Map<string, Promise<pg.Pool>>();

/**
 * Asks a backend for one allocation of 1 MiB and frees it. glibc serves such an allocation with mmap and, on freeing
 * it, raises the process's mmap and trim thresholds (to 1 and 2 MiB): later statements keep their working memory
 * instead of giving it back to the kernel at the end of each statement and faulting it in again at the next. A
 * json_agg of a 100-feature box did that 12-13 times per statement, every statement, and cost the floor's backend
 * 1.5 ms of CPU instead of 0.7 on this machine (a script outside the repository; docs/decisions.md, "Benchmark floors").
 */
const KEEP_MEMORY = `SELECT length(repeat('x', 1048576))`;

/**
 * A pool of `size` connections, all opened before its first use, and the same pool (the same backends) for every later
 * run with the same arguments. The hub's pool lives as long as the hub, so its backends have read the tables and
 * planned the statements before a timed run starts; a floor on backends new to each run paid what the hub does not:
 * each new backend's first touch of every shared buffer it reads (a page fault per 4 KiB of a server with gigabytes
 * of shared buffers) and its empty catalog caches. A floor should be the least the query costs.
 */
export function warmPool(url: string, size: number, options?: string): Promise<pg.Pool> {
  const key = JSON.stringify([url, size, options]);
  let opened = pools.get(key);
  if (!opened) {
    opened = (async () => {
      const pool = new pg.Pool({ connectionString: url, max: size, options });
      const clients = await Promise.all(Array.from({ length: size }, () => pool.connect()));
      await Promise.all(clients.map((client) => client.query(KEEP_MEMORY)));
      for (const client of clients) client.release();
      return pool;
    })();
    pools.set(key, opened);
  }
  return opened;
}
