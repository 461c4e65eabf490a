// Black-box tests of clients that go away, over raw sockets on both engines: a half-closed client still gets its answer, one that resets mid-body is no error of the hub and writes nothing, and the access log and metrics say what went out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { assertRefused } from '../helpers/hostile.js';
import { type Body, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { metrics, sample } from '../helpers/metrics.js';
import { eventually, openConnection, pause, type RawAnswer, requestHead } from '../helpers/raw-http.js';

const feature = (id: string, pad = '') =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { name: id, ...(pad ? { pad } : {}) } });
const collectionText = (count: number, pad = '') =>
  JSON.stringify({ type: 'FeatureCollection', features: Array.from({ length: count }, (_, i) => feature(`gone${i}`, pad)) });

/** Not gzip at all, and gzip cut off: the two ways a compressed body fails (zlib's data error, and its early end). */
const BAD_GZIP = [
  { label: 'not gzip', bytes: Buffer.from('these bytes are not gzip') },
  { label: 'truncated gzip', bytes: gzipSync(collectionText(50)).subarray(0, 100) },
];

/** A raw answer as the test client's answers are, for the shared checks of a refusal. */
const asResponse = (answer: RawAnswer): TestResponse => {
  let body: Body = {};
  try {
    body = JSON.parse(answer.body) as Body;
  } catch {
    body = {};
  }
  return { status: answer.status, headers: new Headers(answer.headers), text: answer.body, body };
};

interface LogLine { level: number; msg: string; streamId?: string; status?: number; completed?: boolean; closedBy?: string; [member: string]: unknown }

for (const backend of BACKENDS) {
  describe(`clients that go away (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    const stored = 2;
    let requests = 0;
    before(async () => {
      // `debug`: the access lines (info) show a request that was left, the hub's own line (debug) that it gave up on it.
      hub = await startHub({ backend, env: { HUB_LOG_LEVEL: 'debug' } });
      space = await createSpace(hub);
      const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [feature('kept1'), feature('kept2')] } });
      assert.equal(put.status, 200, put.text);
    });
    after(async () => { await hub.stop(); });

    const linesSince = (mark: number): LogLine[] => hub.stdout.slice(mark).split('\n').filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);

    /** Nothing above info since `mark`: no `unexpected error`, no warning, and no stack or token in any line. */
    function assertQuiet(mark: number, label: string): void {
      for (const line of linesSince(mark)) {
        assert.ok(line.level <= 30, `${label}: ${JSON.stringify(line)}`);
        const text = JSON.stringify(line);
        assert.ok(!text.includes(hub.token) && !/\bat .+\.js:\d+/.test(text), `${label}: ${text}`);
      }
      assert.equal(hub.stderr, '', label);
    }

    /** The hub still answers and the space still holds what it held. */
    async function assertNothingWritten(label: string): Promise<void> {
      assert.equal((await call(hub, 'GET', '/hub')).status, 200, label);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.status, 200, `${label}: ${count.text}`);
      assert.equal(count.body.count, stored, `${label}: nothing was written`);
    }

    /** Sends the head and `part` of the body, then resets the connection (RST) or closes it (FIN) while the hub reads. */
    async function leaveMidBody(method: string, path: string, headers: Record<string, string>, part: Buffer, how: 'reset' | 'destroy'): Promise<string> {
      const streamId = `gone-${++requests}`;
      const connection = await openConnection(hub);
      await connection.send(requestHead(hub, method, path, { 'stream-id': streamId, ...headers }));
      await connection.send(part);
      // Long enough for the hub to be reading the body when the client leaves.
      await pause(150);
      if (how === 'reset') connection.socket.resetAndDestroy();
      else connection.socket.destroy();
      return streamId;
    }

    /**
     * The request's access line, once written: at info, with the status that went out (499 when none did: nginx's
     * "client closed request"), and marked as an answer its client cut short.
     */
    async function assertLeft(mark: number, streamId: string, label: string, status = 499): Promise<LogLine> {
      const line = await eventually(`the access line of ${label}`, async () => linesSince(mark).find((one) => one.streamId === streamId && one.msg === 'request'));
      assert.equal(line.level, 30, label);
      assert.deepEqual({ status: line.status, completed: line.completed, closedBy: line.closedBy }, { status, completed: false, closedBy: 'client' }, `${label}: ${JSON.stringify(line)}`);
      return line;
    }

    test('a client that half-closes after a bad gzip body still gets its 400 invalidCompressedBody, and nothing is written', async () => {
      const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } } });
      assert.equal(job.status, 200, job.text);
      const targets = [
        { method: 'PUT', path: `/hub/spaces/${space}/features` },
        { method: 'POST', path: `/hub/spaces/${space}/features` },
        { method: 'POST', path: '/hub/spaces' },
        { method: 'POST', path: `/hub/jobs/${job.body.id as string}/inputs` },
      ];
      const mark = hub.stdout.length;
      for (const { method, path } of targets) {
        for (const { label, bytes } of BAD_GZIP) {
          // Several times: whether the end of the body and the client's FIN arrive in one read or two varies.
          for (let round = 0; round < 3; round++) {
            const connection = await openConnection(hub);
            await connection.send(requestHead(hub, method, path, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bytes.length) }));
            connection.socket.end(bytes);
            const answer = await connection.answer;
            assertRefused(asResponse(answer), 400, 'invalidCompressedBody', `${method} ${path}, ${label}, round ${round}`);
            await connection.closed;
          }
        }
      }
      assertQuiet(mark, 'half-closed clients');
      await assertNothingWritten('half-closed clients');
      const status = await call(hub, 'GET', `/hub/jobs/${job.body.id as string}/status`);
      assert.equal(status.body.inputBytes, undefined, 'the job has no input');
    });

    test('a client that half-closes after its upload gets the answer of its write', async () => {
      // Large enough that the write is not answered before the client's FIN arrives (Node then closed the connection).
      const other = await createSpace(hub);
      const body = collectionText(3000);
      for (let round = 0; round < 3; round++) {
        const connection = await openConnection(hub);
        await connection.send(requestHead(hub, 'PUT', `/hub/spaces/${other}/features`, { 'content-type': 'application/geo+json', 'content-length': String(Buffer.byteLength(body)) }));
        connection.socket.end(body);
        const answer = await connection.answer;
        assert.equal(answer.status, 200, answer.body.slice(0, 300));
        assert.equal((JSON.parse(answer.body) as { features: unknown[] }).features.length, 3000);
        await connection.closed;
      }
      assert.equal((await call(hub, 'GET', `/hub/spaces/${other}/count`)).body.count, 3000);
      // A job's input goes to disk before its answer, on either engine.
      const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: other } } });
      const input = Buffer.from(`${JSON.stringify(feature('input'))}\n`);
      const connection = await openConnection(hub);
      await connection.send(requestHead(hub, 'POST', `/hub/jobs/${job.body.id as string}/inputs`, { 'content-type': 'application/octet-stream', 'content-length': String(input.length) }));
      connection.socket.end(input);
      const answer = await connection.answer;
      assert.equal(answer.status, 200, answer.body.slice(0, 300));
      assert.equal((JSON.parse(answer.body) as { inputBytes: number }).inputBytes, input.length);
    });

    test('a client that resets or drops its connection mid-body is no error of the hub, and nothing is written', async () => {
      const plain = Buffer.from(collectionText(2000, 'x'.repeat(200)));
      const zipped = gzipSync(plain);
      const json = { 'content-type': 'application/geo+json' };
      const cases: { label: string; method: string; path: string; headers: Record<string, string>; part: Buffer }[] = [
        { label: 'PUT', method: 'PUT', path: `/hub/spaces/${space}/features`, headers: { ...json, 'content-length': String(plain.length) }, part: plain.subarray(0, 100_000) },
        {
          label: 'gzip PUT', method: 'PUT', path: `/hub/spaces/${space}/features`,
          headers: { ...json, 'content-encoding': 'gzip', 'content-length': String(zipped.length) }, part: zipped.subarray(0, zipped.length >> 1),
        },
        {
          label: 'chunked POST', method: 'POST', path: `/hub/spaces/${space}/features`,
          headers: { ...json, 'transfer-encoding': 'chunked' }, part: Buffer.concat([Buffer.from('186a0\r\n'), plain.subarray(0, 100_000), Buffer.from('\r\n')]),
        },
        { label: 'space definition', method: 'POST', path: '/hub/spaces', headers: { 'content-type': 'application/json', 'content-length': '1000' }, part: Buffer.from('{"title":"never",') },
      ];
      for (const { label, method, path, headers, part } of cases) {
        for (const how of ['reset', 'destroy'] as const) {
          const mark = hub.stdout.length;
          const streamId = await leaveMidBody(method, path, headers, part, how);
          // A FIN in the middle of a body is refused by Node's parser, whose 400 goes out; a reset leaves no answer.
          await assertLeft(mark, streamId, `${label} (${how})`, how === 'reset' ? 499 : 400);
          await assertNothingWritten(`${label} (${how})`);
          assertQuiet(mark, `${label} (${how})`);
        }
      }
      const spaces = await call(hub, 'GET', '/hub/spaces');
      assert.ok(!spaces.text.includes('never'), 'no space was created');
    });

    test('a client that resets in the middle of a body past the streaming threshold (8 MiB) is no error either', async () => {
      const big = Buffer.from(collectionText(9000, 'y'.repeat(1000)));
      assert.ok(big.length > 9 * 1024 * 1024);
      const mark = hub.stdout.length;
      const streamId = await leaveMidBody('PUT', `/hub/spaces/${space}/features`,
        { 'content-type': 'application/geo+json', 'content-length': String(big.length) }, big.subarray(0, big.length - 100_000), 'reset');
      await assertLeft(mark, streamId, 'streamed PUT');
      await assertNothingWritten('streamed PUT');
      assertQuiet(mark, 'streamed PUT');
    });

    /** How much the sample `name` with `labels` grew between two scrapes of /metrics. */
    const grown = (before: string, after: string, name: string, labels: Record<string, string>): number =>
      (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);

    test('a client that leaves before its answer started is logged and counted 499, not as the 200 its handler had set', async () => {
      const put = { method: 'PUT', route: '/hub/spaces/:spaceId/features' };
      const body = Buffer.from(collectionText(2000, 'x'.repeat(200)));
      const before = await metrics(hub);
      const mark = hub.stdout.length;
      const streamId = await leaveMidBody('PUT', `/hub/spaces/${space}/features`,
        { 'content-type': 'application/geo+json', 'content-length': String(body.length) }, body.subarray(0, 100_000), 'reset');
      const line = await assertLeft(mark, streamId, 'PUT left mid-body');
      assert.equal(line.bytesOut, 0, 'nothing went out');
      const after = await metrics(hub);
      assert.equal(grown(before, after, 'hub_http_requests_total', { ...put, status: '499' }), 1, after);
      assert.equal(grown(before, after, 'hub_http_requests_total', { ...put, status: '200' }), 0);
      assert.equal(grown(before, after, 'hub_http_requests_incomplete_total', { ...put, status: '499', closed_by: 'client' }), 1, after);
      await assertNothingWritten('PUT left mid-body');
      assertQuiet(mark, 'PUT left mid-body');
    });

    test('a client that leaves in the middle of a large answer is logged with the 200 that went out, not completed, and counted so', async () => {
      const big = await createSpace(hub);
      // 16 MB: more than a connection's kernel buffers hold for a client that reads nothing, so the answer cannot end.
      const put = await call(hub, 'PUT', `/hub/spaces/${big}/features`, { rawBody: collectionText(400, 'z'.repeat(40_000)), headers: { 'content-type': 'application/geo+json' } });
      assert.equal(put.status, 200, put.text.slice(0, 300));
      const iterate = { method: 'GET', route: '/hub/spaces/:spaceId/iterate' };
      const before = await metrics(hub);
      for (const how of ['reset', 'destroy'] as const) {
        const mark = hub.stdout.length;
        const streamId = `gone-${++requests}`;
        const connection = await openConnection(hub);
        const first = new Promise<Buffer>((resolve) => connection.socket.once('data', (chunk: Buffer) => {
          connection.socket.pause();
          resolve(chunk);
        }));
        await connection.send(requestHead(hub, 'GET', `/hub/spaces/${big}/iterate?limit=100000`, { 'stream-id': streamId }));
        assert.match((await first).toString('latin1'), /^HTTP\/1\.1 200 /, how);
        // Long enough for the hub to fill the connection's buffers and wait for the client.
        await pause(300);
        if (how === 'reset') connection.socket.resetAndDestroy();
        else connection.socket.destroy();
        const line = await assertLeft(mark, streamId, `iterate left mid-answer (${how})`, 200);
        assert.ok(typeof line.bytesOut === 'number' && line.bytesOut > 0, `${how}: ${line.bytesOut}`);
        assertQuiet(mark, `iterate left mid-answer (${how})`);
      }
      const after = await metrics(hub);
      assert.equal(grown(before, after, 'hub_http_requests_total', { ...iterate, status: '200' }), 2, after);
      assert.equal(grown(before, after, 'hub_http_requests_incomplete_total', { ...iterate, status: '200', closed_by: 'client' }), 2, after);
      // Answers that ended whole are not counted as incomplete: the scrapes before this one.
      assert.equal(sample(after, 'hub_http_requests_incomplete_total', { method: 'GET', route: '/metrics', status: '200', closed_by: 'client' }), undefined);
      // The answers that did end carry no marker: the PUT's line keeps the shape it always had.
      const putLine = linesSince(0).find((one) => one.msg === 'request' && one.streamId === put.headers.get('stream-id'));
      assert.ok(putLine !== undefined && !('completed' in putLine) && !('closedBy' in putLine), JSON.stringify(putLine));
    });

    test('clients that go away by the dozen in the middle of large reads leave the hub serving', async (t) => {
      // A hub of its own: on main this one stopped, which would fail every later test of the file.
      const reader = await startHub({ backend, env: { HUB_LOG_LEVEL: 'warn' } });
      t.after(() => reader.stop());
      const wide = await createSpace(reader);
      const points = Array.from({ length: 20_000 }, (_, i) =>
        ({ type: 'Feature', id: `w${i}`, geometry: { type: 'Point', coordinates: [(i % 200) / 2 - 50, Math.floor(i / 200) / 2 - 25] }, properties: { i } }));
      for (let from = 0; from < points.length; from += 5000) {
        const put = await call(reader, 'PUT', `/hub/spaces/${wide}/features`, { body: { type: 'FeatureCollection', features: points.slice(from, from + 5000) }, headers: { accept: 'application/x-empty' } });
        assert.equal(put.status, 204, put.text);
      }
      // Boxes a little apart, so that none is answered from the answer cache.
      let box = 0;
      const read = (i: number) => (i % 2 === 0 ? `/hub/spaces/${wide}/bbox?west=${-60 + ++box / 1000}&south=-30&east=60&north=30&limit=10000` : `/hub/spaces/${wide}/iterate?limit=10000`);
      // As a load generator ends a run: every read in flight dropped at once, many of them while the hub still reads
      // their pages (a page read ahead was then cancelled while nothing awaited it, which stopped the hub on PostgreSQL).
      for (let round = 0; round < 12 && reader.process.exitCode === null; round++) {
        const connections = await Promise.all(Array.from({ length: 16 }, () => openConnection(reader)));
        await Promise.all(connections.map((connection, i) => connection.send(requestHead(reader, 'GET', read(i)))));
        await pause(50 + round * 50);
        for (const connection of connections) connection.socket.destroy();
      }
      await pause(500);
      assert.equal(reader.process.exitCode, null, `the hub stopped: ${reader.stderr.slice(-500)}`);
      assert.equal((await call(reader, 'GET', `/hub/spaces/${wide}/count`)).status, 200);
      assert.doesNotMatch(reader.stderr, /unexpected error/);
    });

    test('a job input upload whose gzip body is bad answers 400 and the hub lives on', async () => {
      const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } } });
      assert.equal(job.status, 200, job.text);
      for (const { label, bytes } of BAD_GZIP) {
        const upload = await call(hub, 'POST', `/hub/jobs/${job.body.id as string}/inputs`, { rawBody: bytes, headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' } });
        assertRefused(upload, 400, 'invalidCompressedBody', label);
      }
      await assertNothingWritten('bad gzip upload');
    });

    test('a client that resets in the middle of a job input upload is no error of the hub, and the job has no input', async () => {
      const lines = Buffer.from(Array.from({ length: 5000 }, (_, i) => JSON.stringify(feature(`job${i}`))).join('\n'));
      const zipped = gzipSync(lines);
      for (const [label, body, headers] of [['upload', lines, {}], ['gzip upload', zipped, { 'content-encoding': 'gzip' }]] as const) {
        const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } } });
        assert.equal(job.status, 200, job.text);
        const id = job.body.id as string;
        const mark = hub.stdout.length;
        const streamId = await leaveMidBody('POST', `/hub/jobs/${id}/inputs`,
          { 'content-type': 'application/octet-stream', 'content-length': String(body.length), ...headers }, body.subarray(0, body.length >> 1), 'reset');
        await assertLeft(mark, streamId, label);
        const status = await call(hub, 'GET', `/hub/jobs/${id}/status`);
        assert.equal(status.body.state, 'WAITING_FOR_INPUT', label);
        assert.equal(status.body.inputBytes, undefined, `${label}: no input was kept`);
        const start = await call(hub, 'PATCH', `/hub/jobs/${id}/status`, { body: { desiredAction: 'START' } });
        assertRefused(start, 409, 'jobNoInput', label);
        await assertNothingWritten(label);
        assertQuiet(mark, label);
      }
    });

    // The route looks the job up before it reads the body; a lock on the jobs table holds it there (PostgreSQL only: a
    // SQLite lookup does not wait).
    test('a client that resets before the hub reads its upload is given up at once, not at the body idle timeout (30 s)', { skip: backend !== 'postgres' && 'SQLite reads do not wait' }, async () => {
      const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } } });
      const id = job.body.id as string;
      const locker = new pg.Client({ connectionString: hub.storage, application_name: 'departed-clients-test' });
      await locker.connect();
      const mark = hub.stdout.length;
      const streamId = `gone-${++requests}`;
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
        const body = Buffer.from(`${JSON.stringify(feature('early'))}\n`);
        const connection = await openConnection(hub);
        await connection.send(requestHead(hub, 'POST', `/hub/jobs/${id}/inputs`, { 'stream-id': streamId, 'content-type': 'application/octet-stream', 'content-length': String(body.length) }));
        await connection.send(body);
        await eventually('the upload waits for the lock', async () => {
          const { rows } = await locker.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'spatial-data-hub' AND wait_event_type = 'Lock'`);
          return rows.length > 0 ? true : undefined;
        });
        connection.socket.resetAndDestroy();
        await assertLeft(mark, streamId, 'upload before its body was read');
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      await eventually('the hub gives the request up', async () =>
        linesSince(mark).find((line) => line.reqId === streamId && line.msg === 'client went away'));
      const status = await call(hub, 'GET', `/hub/jobs/${id}/status`);
      assert.equal(status.body.inputBytes, undefined, 'no input was kept');
      assertQuiet(mark, 'upload before its body was read');
    });
  });
}
