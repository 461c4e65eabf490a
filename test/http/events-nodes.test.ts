// PostgreSQL only: event streams on two hub nodes over one database, with concurrent writers on both: every version reaches both streams once, in order.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EventStream } from '../helpers/event-streams.js';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const skip = BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run (see HUB_TEST_BACKENDS)';

/**
 * The issue's 10,000 writes. Each is a version, and a versioned space's writers take turns under its version lock, so
 * the test is bound by the CPU of a write (hubs, database and this client together, about 10 ms on two cores): 57 s
 * alone on the machine (docs/decisions.md, "Cheaper single writes" and its second round; "The tests' HTTP client").
 * HUB_TEST_EVENT_WRITES runs another number, for a quicker look.
 */
const WRITES = Number(process.env.HUB_TEST_EVENT_WRITES ?? 10_000);
const WRITERS = 8;

describe('event streams on two nodes (postgres)', { skip }, () => {
  let a: HubProcess;
  let b: HubProcess;
  const streams: EventStream[] = [];
  before(async () => {
    a = await startHub({ backend: 'postgres' });
    b = await startHub({ backend: 'postgres', storage: a.storage });
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await b?.stop({ keepData: true });
    await a?.stop();
  });

  const put = async (hub: HubProcess, space: string, id: string, n: number) => {
    const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
      body: { type: 'FeatureCollection', features: [{ type: 'Feature', id, geometry: { type: 'Point', coordinates: [n % 180, 0] }, properties: { n } }] },
    });
    assert.equal(response.status, 200, response.text);
  };

  test('a write on one node reaches a stream on the other at once', async () => {
    const space = await createSpace(a, { versionsToKeep: 10 });
    const onB = new EventStream(b, `/hub/spaces/${space}/events`);
    streams.push(onB);
    await onB.opened();
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = Date.now();
      await put(a, space, 'x', i);
      await onB.until(`version ${i}`, () => onB.changesets.length === i + 1);
      latencies.push(Date.now() - start);
    }
    assert.deepEqual(onB.changesets.map((event) => event.id), ['0', '1', '2', '3', '4']);
    process.stdout.write(`# write on A to event on B: ${latencies.join(', ')} ms\n`);
  });

  test(`${WRITES} writes from ${WRITERS} writers on both nodes: both streams get every version once, in order`, async () => {
    const space = await createSpace(a, { versionsToKeep: WRITES + 1 });
    const onA = new EventStream(a, `/hub/spaces/${space}/events?since=-1`);
    const onB = new EventStream(b, `/hub/spaces/${space}/events?since=-1`);
    streams.push(onA, onB);
    await Promise.all([onA.opened(), onB.opened()]);
    const start = Date.now();
    let next = 0;
    const writer = async (hub: HubProcess) => {
      for (let i = next++; i < WRITES; i = next++) await put(hub, space, `w${i}`, i);
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i % 2 === 0 ? a : b)));
    const written = Date.now() - start;
    for (const stream of [onA, onB]) await stream.until('every version', () => stream.changesets.length >= WRITES, 60_000);
    process.stdout.write(`# ${WRITES} writes in ${written} ms; the last event ${Date.now() - start - written} ms after the last write\n`);
    const expected = Array.from({ length: WRITES }, (_, i) => String(i));
    for (const stream of [onA, onB]) {
      assert.deepEqual(stream.changesets.map((event) => event.id), expected, 'every version once, in order');
      const ids = stream.changesets.flatMap((event) => (event.data.inserted as { features: Array<{ id: string }> }).features.map((feature) => feature.id));
      assert.equal(new Set(ids).size, WRITES, 'every write\'s feature once');
    }
  });
});
