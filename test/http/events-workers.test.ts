// Event streams on a hub serving from two worker processes (HUB_WORKERS=2): a write through one worker reaches a stream served by the other at once (SQLite: relayed by the primary over IPC).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawStream, type RawStream } from '../helpers/event-streams.js';
import { createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { pause } from '../helpers/raw-http.js';
import { holderOf, type KeptConnection, keptConnection } from '../helpers/worker-processes.js';

const body = (n: number) => JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: `f${n % 7}`, geometry: { type: 'Point', coordinates: [n % 180, 0] }, properties: { n } }] });

/**
 * Writes of the every-version test: HUB_TEST_EVENT_WRITES=10000 runs the 10,000 on both engines (on the shared
 * test machine SQLite took 27 s, PostgreSQL, whose versioned writers take turns over the network, 93 s; docs/events.md).
 */
const WRITES = Number(process.env.HUB_TEST_EVENT_WRITES ?? 120);

/** The versions the stream sent so far, in the order sent. */
const idsIn = (stream: RawStream) => [...stream.body.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));

async function until(what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  for (const start = performance.now(); !condition();) {
    if (performance.now() - start > ms) throw new Error(`gave up waiting for ${what}`);
    await pause(2);
  }
}

for (const backend of BACKENDS) {
  describe(`event streams across two workers (${backend})`, () => {
    let hub: HubProcess;
    const connections: KeptConnection[] = [];
    const streams: RawStream[] = [];
    before(async () => { hub = await startHub({ backend, env: { HUB_WORKERS: '2' } }); });
    after(async () => {
      for (const connection of connections) connection.close();
      for (const stream of streams) stream.socket.destroy();
      await hub?.stop();
    });

    /** A stream of the space and the worker serving it, and a kept connection to the other worker. */
    async function streamAndOtherWorker(space: string): Promise<{ stream: RawStream; writer: KeptConnection }> {
      const stream = rawStream(hub, `/hub/spaces/${space}/events`);
      streams.push(stream);
      await until('the stream to open', () => stream.body.includes(': heartbeat'));
      const streaming = holderOf(hub, stream.socket.localPort ?? 0);
      assert.ok(streaming, 'the worker serving the stream');
      for (let tries = 0; tries < 20; tries++) {
        const connection = await keptConnection(hub);
        connections.push(connection);
        if (connection.worker !== undefined && connection.worker !== streaming) return { stream, writer: connection };
      }
      throw new Error('no connection reached the other worker');
    }

    test('a write through one worker reaches a stream on the other at once, not at its next look a second later', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      const { stream, writer } = await streamAndOtherWorker(space);
      const latencies: number[] = [];
      for (let i = 0; i < 9; i++) {
        const start = performance.now();
        const written = await writer.ask('PUT', `/hub/spaces/${space}/features`, body(i));
        assert.equal(written.status, 200, written.body);
        await until(`version ${i}`, () => stream.body.includes(`id: ${i}\n`), 5000);
        latencies.push(Math.round(performance.now() - start));
      }
      assert.deepEqual(idsIn(stream), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
      const sorted = [...latencies].sort((x, y) => x - y);
      // Heard only at the stream's look every second, each of these writes (sent right after the previous event came) would wait about that long.
      assert.ok(sorted[4] < 300, `median ${sorted[4]} ms from the write's start to the event: ${latencies.join(', ')}`);
    });

    test(`${WRITES} writes from writers on both workers: the stream has every version once, in order`, async () => {
      const space = await createSpace(hub, { versionsToKeep: Math.max(1000, WRITES + 1) });
      const { stream, writer } = await streamAndOtherWorker(space);
      const same = await keptConnection(hub);
      connections.push(same);
      const writes = WRITES;
      let next = 0;
      const write = async (connection: KeptConnection) => {
        for (let i = next++; i < writes; i = next++) assert.equal((await connection.ask('PUT', `/hub/spaces/${space}/features`, body(i))).status, 200);
      };
      await Promise.all([write(writer), write(writer), write(same), write(same)]);
      await until('every version', () => idsIn(stream).length >= writes, 20_000 + writes * 10);
      assert.deepEqual(idsIn(stream), Array.from({ length: writes }, (_, i) => i));
    });
  });
}
