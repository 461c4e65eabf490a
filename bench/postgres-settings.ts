// The memory settings of the bench's PostgreSQL cluster: a production server's for this machine's RAM (docs/operations.md), and how the bench reports them.
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import pg from 'pg';

const MIB = 1024 * 1024;
/** PostgreSQL's docs: more than 40% of RAM in shared buffers is unlikely to help; past a few GB the OS cache does as well. */
const SHARED_BUFFERS_CAP_MIB = 8192;
/** One maintenance operation (an index build, a VACUUM, each autovacuum worker) gains little past 1 GB. */
const MAINTENANCE_WORK_MEM_CAP_MIB = 1024;

/** The settings docs/operations.md recommends for a server with `ramBytes` of memory, as `postgresql.conf` lines. */
export function productionMemorySettings(ramBytes = totalmem()): Record<string, string> {
  const ramMiB = Math.floor(ramBytes / MIB);
  return {
    // A quarter of the memory, as PostgreSQL's docs advise for a dedicated server: a small box's ~100 heap pages then
    // come from the buffers, not from the OS page cache through a system call each.
    shared_buffers: `${Math.min(Math.floor(ramMiB / 4), SHARED_BUFFERS_CAP_MIB)}MB`,
    // The planner's guess of the buffers and the OS page cache together; it allocates nothing.
    effective_cache_size: `${Math.floor(ramMiB / 2)}MB`,
    maintenance_work_mem: `${Math.min(Math.floor(ramMiB / 16), MAINTENANCE_WORK_MEM_CAP_MIB)}MB`,
    // The default, said aloud: huge pages when the kernel has them reserved (vm.nr_hugepages), normal pages otherwise.
    huge_pages: 'try',
  };
}

/**
 * The environment docs/operations.md recommends for the server's processes: glibc keeps up to 64 MiB of a backend's
 * freed memory and serves allocations up to 32 MiB from its heap. With glibc's defaults a backend that builds a
 * collection of a few MB (a 10,000-feature box, the hub's pages or the plain floor's `json_agg`) got that memory by
 * mmap, gave it back at the statement's end and faulted it in again at the next: about 4,000 page faults per large box,
 * and about half of the database's CPU on it (docs/decisions.md, "Benchmark floors").
 */
export const SERVER_ENVIRONMENT: Record<string, string> = {
  GLIBC_TUNABLES: `glibc.malloc.mmap_threshold=${32 * MIB}:glibc.malloc.trim_threshold=${64 * MIB}`,
};

/** The settings the bench's header names, so that every PostgreSQL figure says what it ran on. */
const REPORTED = ['shared_buffers', 'effective_cache_size', 'work_mem', 'maintenance_work_mem', 'huge_pages', 'jit'];

/** The server's memory settings as one line, with the huge pages the kernel holds (a server using them shows them reserved or in use). */
export async function describeSettings(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; value: string }>(
      'SELECT name, current_setting(name) AS value FROM unnest($1::text[]) AS name', [REPORTED]);
    const meminfo = readFileSync('/proc/meminfo', 'utf8');
    const field = (name: string) => /^(\S+):\s+(\d+)/m.exec(meminfo.split('\n').find((line) => line.startsWith(`${name}:`)) ?? '')?.[2] ?? '?';
    const hugePages = `kernel huge pages ${field('HugePages_Total')} (free ${field('HugePages_Free')}, reserved ${field('HugePages_Rsvd')}) of ${field('Hugepagesize')} kB`;
    return `PostgreSQL ${rows.map(({ name, value }) => `${name} ${value}`).join(', ')}; ${hugePages}`;
  } finally {
    await client.end();
  }
}
