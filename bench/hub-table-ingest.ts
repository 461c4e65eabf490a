// Issue 25's import floor on PostgreSQL as its text words it: COPY of the rows the hub stored into an empty table shaped as the hub's own `features`, with every index.
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { readCpuSeconds } from './process-cpu.js';

const TABLE = 'plain_hub_rows';
/** The columns the hub's own COPY of new rows fills (seq comes from the table's identity). */
const COLUMNS = 'sid, id, feature, properties, geom, geometry_type, tags, version';

export interface HubTableLoad {
  seconds: number;
  /** The database's CPU seconds within the timed loads, when its server's process id is known. */
  databaseCpu?: number;
}

/**
 * `space`'s rows as the hub stored them (its feature text, user-properties jsonb, geometry, type, tags, version) are
 * written out with `COPY … TO` before the clock, then loaded `batch` rows per `COPY … FROM STDIN` over `lanes`
 * connections, each COPY its own transaction, into `CREATE TABLE … (LIKE features INCLUDING ALL)`: the same columns,
 * primary key and five indexes the hub writes, empty as the import's new space is. Only the COPYs are timed; the
 * rows are read from a file between them. The database work is the one the hub's write path cannot do without; what
 * the hub adds beyond it (HTTP, parsing, validation, the row's texts, the lookups, versions and counters) is the gap.
 */
export async function hubTableIngest(url: string, space: string, file: string, batch: number, lanes: number, serverPid?: number): Promise<HubTableLoad> {
  const pool = new pg.Pool({ connectionString: url, max: lanes });
  try {
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await pool.query(`CREATE TABLE ${TABLE} (LIKE features INCLUDING ALL)`);
    const { rows: [found] } = await pool.query<{ sid: string }>('SELECT sid FROM spaces WHERE id = $1', [space]);
    if (!found) throw new Error(`no space ${space}`);
    const dump = await pool.connect();
    try {
      await pipeline(dump.query(copyTo(`COPY (SELECT ${COLUMNS} FROM features WHERE sid = ${Number(found.sid)} ORDER BY seq) TO STDOUT`)), createWriteStream(file));
    } finally {
      dump.release();
    }
    // The import's aftermath (autovacuum on the rows just written, the checkpoint of their pages) is no part of the floor's load.
    await pool.query('VACUUM (ANALYZE) features');
    await pool.query('CHECKPOINT');
    // Backends are started before the clock: connecting is no load's work.
    const clients = await Promise.all(Array.from({ length: lanes }, () => pool.connect()));
    for (const client of clients) client.release();
    const load = async (text: string) => {
      const client = await pool.connect();
      try {
        await pipeline([text], client.query(copyFrom(`COPY ${TABLE} (${COLUMNS}) FROM STDIN`)));
      } finally {
        client.release();
      }
    };
    let seconds = 0;
    let databaseCpu = 0;
    let pending: string[] = [];
    const loadPending = async () => {
      const cpuBefore = serverPid === undefined ? 0 : readCpuSeconds(serverPid);
      const began = performance.now();
      await Promise.all(pending.map(load));
      seconds += (performance.now() - began) / 1000;
      if (serverPid !== undefined) databaseCpu += readCpuSeconds(serverPid) - cpuBefore;
      pending = [];
    };
    let lines: string[] = [];
    for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      lines.push(line);
      if (lines.length === batch) {
        pending.push(`${lines.join('\n')}\n`);
        lines = [];
        if (pending.length === lanes) await loadPending();
      }
    }
    if (lines.length > 0) pending.push(`${lines.join('\n')}\n`);
    await loadPending();
    return { seconds, ...(serverPid === undefined ? {} : { databaseCpu }) };
  } finally {
    rmSync(file, { force: true });
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
    await pool.end();
  }
}
