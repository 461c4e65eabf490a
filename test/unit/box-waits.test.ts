// The bench's per-box account (bench/box-waits.ts, `bench --probe`): the database server's CPU and page faults around a box, and the table of the slowest boxes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import pg from 'pg';
import { type BoxTiming, boxWaits, machineCounters, type MachineCounters, waitsTable } from '../../bench/box-waits.js';
import type { ProbeDump } from '../../bench/probe-records.js';
import { BACKENDS } from '../helpers/backends.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';

const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

if (BACKENDS.includes('postgres')) {
  test('postgres: the server\'s counters take in a backend\'s first touch of new shared buffers', async () => {
    const database = await createTestDatabase();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows: [{ pid }] } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const postmaster = parentOf(pid);
      const before = machineCounters(postmaster);
      // About 13 MB of new heap pages in shared buffers: every buffer the backend fills is one it has not mapped before.
      await client.query(`CREATE TABLE box_waits_pages AS SELECT g, repeat('x', 600) AS pad FROM generate_series(1, 20000) g`);
      const after = machineCounters(postmaster);
      assert.ok(before.database && after.database, 'a postmaster gives server counters');
      assert.ok(after.database.faults - before.database.faults > 100, `faults ${after.database.faults - before.database.faults}`);
      assert.ok(after.database.cpuMs >= before.database.cpuMs);
    } finally {
      await client.end();
      await database.remove();
    }
  });
}

const counters = (at: number, database?: { cpuMs: number; faults: number }): MachineCounters =>
  ({ stealMs: 0, busyMs: at * 10, running: 1, benchMs: at, ...(database ? { database } : {}) });

test('the slowest boxes: the rest of the machine is what the hub, the database and the bench did not use; one column per header', () => {
  const start = 1_000_000;
  const boxes: BoxTiming[] = [
    { label: 'box 0', start, latencyMs: 30, features: 101, before: counters(0, { cpuMs: 0, faults: 0 }), after: counters(6, { cpuMs: 20, faults: 230 }) },
    { label: 'box 1', start: start + 40, latencyMs: 4, features: 99, before: counters(6, { cpuMs: 20, faults: 230 }), after: counters(7, { cpuMs: 20, faults: 240 }) },
  ];
  const dump: ProbeDump = {
    requests: [
      { label: 'box 0', start: start + 1, end: start + 28, cpuMs: 5, statementMs: 20, statements: 1, faults: 3, preempted: 2 },
      { label: 'box 1', start: start + 41, end: start + 43, cpuMs: 2, statementMs: 1, statements: 1, faults: 0, preempted: 0 },
    ],
    pauses: [{ at: start + 10, ms: 4, kind: 1 }],
  };
  const waits = boxWaits(boxes, [dump], []);
  // box 0: 60 ms busy = hub 5 + database 20 + bench 6 + 29 of others.
  assert.equal(waits[0].othersMs, 29);
  assert.deepEqual(waits[0].database, { cpuMs: 20, faults: 230 });
  assert.equal(waits[0].hubGcMs, 4);
  assert.equal(waits[1].othersMs, 10 - 2 - 0 - 1);
  const table = waitsTable(waits, 2, (label) => (label === 'box 0' ? { hubAgainMs: 3, floorMs: 2, floorAgainMs: 1 } : undefined));
  for (const line of table) assert.equal(line.length, table[0].length, line.join('|'));
  const header = table[0];
  const slowest = table[3];
  assert.equal(slowest[0], 'box 0');
  assert.equal(slowest[header.indexOf('again ms')], '3.0');
  assert.equal(slowest[header.indexOf('floor ms (again)')], '2.0 (1.0)');
  assert.equal(slowest[header.indexOf('database faults')], '230');
  assert.equal(slowest[header.indexOf('features')], '101');
});
