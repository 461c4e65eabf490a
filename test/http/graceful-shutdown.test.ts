// Graceful shutdown (docs/operations.md): on SIGTERM the hub stops taking connections, finishes the requests in flight with whole answers, closes idle kept-alive connections cleanly, and exits 0; past HUB_SHUTDOWN_TIMEOUT it stops anyway.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { collection, point } from '../helpers/features.js';
import { createSpace, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { eventually, openConnection, pause, type RawConnection, requestHead } from '../helpers/raw-http.js';

const FEATURES = 3000;
/** About 5 MB of answer: more than the connection's buffers hold, so the answer is still being written at SIGTERM. */
const FILLER = 'x'.repeat(1500);

/** The errors a connection saw (a reset would be ECONNRESET), recorded next to the helper's own listener. */
function errorsOf(connection: RawConnection): string[] {
  const errors: string[] = [];
  connection.socket.on('error', (error: Error & { code?: string }) => errors.push(error.code ?? error.message));
  return errors;
}

/** Resolves with the error code of a new connection to the hub's port: ECONNREFUSED once it no longer listens. */
function connectError(hub: HubProcess): Promise<string | undefined> {
  const url = new URL(hub.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.once('connect', () => { socket.destroy(); resolve(undefined); });
    socket.once('error', (error: Error & { code?: string }) => resolve(error.code ?? error.message));
  });
}

/** A GET whose answer is not read until `resume`: the hub's writes wait on the connection's full buffers. */
async function stalledRead(hub: HubProcess, path: string): Promise<{ resume(): void; body: Promise<string>; errors: string[] }> {
  const url = new URL(hub.url);
  const socket = connect(Number(url.port), url.hostname);
  const errors: string[] = [];
  socket.on('error', (error: Error & { code?: string }) => errors.push(error.code ?? error.message));
  await new Promise((resolve) => socket.once('connect', resolve));
  const chunks: Buffer[] = [];
  socket.pause();
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const body = new Promise<string>((resolve) => socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8'))));
  socket.write(requestHead(hub, 'GET', path));
  return { resume: () => socket.resume(), body, errors };
}

function exitCode(hub: HubProcess): Promise<number | null> {
  if (hub.process.exitCode !== null) return Promise.resolve(hub.process.exitCode);
  return new Promise((resolve) => hub.process.once('exit', (code) => resolve(code)));
}

for (const backend of BACKENDS) {
  describe(`graceful shutdown (${backend})`, () => {
    test('SIGTERM: in-flight upload and streaming read complete whole, an idle kept-alive connection is closed without a reset, new connections are refused, exit 0', async () => {
      const hub = await startHub({ backend });
      try {
        const space = await createSpaceWith(hub, Array.from({ length: FEATURES }, (_, i) => point(`f${i}`, { n: i, filler: FILLER })));
        const idle = await openConnection(hub);
        const idleErrors = errorsOf(idle);
        await idle.send(requestHead(hub, 'GET', '/hub'));
        assert.equal((await idle.answer).status, 200);

        const upload = await openConnection(hub);
        const uploadErrors = errorsOf(upload);
        const body = JSON.stringify(collection(point('late-1', { a: 1 }), point('late-2', { a: 2 })));
        const half = Math.floor(body.length / 2);
        await upload.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'content-length': String(Buffer.byteLength(body)) }));
        await upload.send(body.slice(0, half));

        const read = await stalledRead(hub, `/hub/spaces/${space}/iterate?limit=${FEATURES}`);
        await pause(500);

        const signalled = Date.now();
        hub.process.kill('SIGTERM');
        assert.equal(await eventually('new connections refused', async () => ((await connectError(hub)) === 'ECONNREFUSED' ? true : undefined)), true);
        await idle.closed;
        assert.equal(hub.process.exitCode, null, 'still running: requests are in flight');

        await upload.send(body.slice(half));
        const written = await upload.answer;
        assert.equal(written.status, 200, written.body);
        assert.equal(written.headers.connection, 'close', 'an answer finished while stopping closes its connection');
        assert.deepEqual((JSON.parse(written.body) as { features: Array<{ id: string }> }).features.map((feature) => feature.id).sort(), ['late-1', 'late-2']);

        // Its headers went out before the stop, without Connection: close: the hub closes the connection once the answer ended.
        read.resume();
        const page = await read.body;
        assert.match(page, /^HTTP\/1\.1 200 /);
        const chunked = page.slice(page.indexOf('\r\n\r\n') + 4);
        assert.ok(chunked.endsWith('0\r\n\r\n'), 'the last chunk arrived');
        const json = chunked.replace(/(?:^|\r\n)[0-9a-f]+\r\n/g, '');
        assert.equal((JSON.parse(json) as { features: unknown[] }).features.length, FEATURES, 'the whole answer arrived');

        assert.equal(await exitCode(hub), 0);
        assert.ok(Date.now() - signalled < 10_000, `exited once the last answer ended, not when the client let go: ${Date.now() - signalled} ms`);
        assert.deepEqual([...idleErrors, ...uploadErrors, ...read.errors], [], 'no connection was reset');
      } finally {
        await hub.stop();
      }
    });

    // A preconnect, or the spare connection undici's fetch opens after a read is aborted mid-answer: it holds no request.
    test('a connection that never sent a request is closed at SIGTERM and does not hold the stop', async () => {
      const hub = await startHub({ backend, env: { HUB_SHUTDOWN_TIMEOUT: '20s' } });
      try {
        const unused = await openConnection(hub);
        const unusedErrors = errorsOf(unused);
        await pause(200);
        const signalled = Date.now();
        hub.process.kill('SIGTERM');
        await unused.closed;
        assert.equal(await exitCode(hub), 0);
        const took = Date.now() - signalled;
        assert.ok(took < 10_000, `stopped without waiting for HUB_SHUTDOWN_TIMEOUT (20 s): ${took} ms`);
        assert.doesNotMatch(hub.stderr, /HUB_SHUTDOWN_TIMEOUT/);
        assert.deepEqual(unusedErrors, [], 'closed without a reset');
      } finally {
        await hub.stop();
      }
    });

    test('past HUB_SHUTDOWN_TIMEOUT a request that never ends loses its connection, is logged as cut by the hub, and the hub exits 0', async () => {
      const hub = await startHub({ backend, env: { HUB_SHUTDOWN_TIMEOUT: '1s', HUB_LOG_LEVEL: 'info' } });
      try {
        const space = await createSpace(hub);
        const stalled = await openConnection(hub);
        await stalled.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'content-length': '1000', 'stream-id': 'cut-at-deadline' }));
        await stalled.send('{"type":"FeatureCollection",');
        await pause(200);
        const signalled = Date.now();
        hub.process.kill('SIGTERM');
        await stalled.closed;
        assert.equal(await exitCode(hub), 0);
        const took = Date.now() - signalled;
        assert.ok(took >= 900 && took < 10_000, `stopped after the deadline, not before nor much later: ${took} ms`);
        assert.match(hub.stderr, /HUB_SHUTDOWN_TIMEOUT/);
        // Its access line is written before the process exits: no answer went out, the hub closed it (444).
        const line = await eventually('the access line of the request cut at the deadline', async () =>
          hub.stdout.split('\n').find((one) => one.includes('"streamId":"cut-at-deadline"')));
        const { status, completed, closedBy } = JSON.parse(line) as Record<string, unknown>;
        assert.deepEqual({ status, completed, closedBy }, { status: 444, completed: false, closedBy: 'hub' }, line);
      } finally {
        await hub.stop();
      }
    });
  });
}
