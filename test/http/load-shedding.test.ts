// Load shedding: the client loads of API.md 1.9 never see 429 with the defaults; past configured limits the node answers 429 with Retry-After and recovers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { collection, point } from '../helpers/features.js';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { metrics, sample } from '../helpers/metrics.js';
import { eventually, openConnection, type RawConnection, requestHead } from '../helpers/raw-http.js';

const ORIGIN = 'https://map.example.com';

/** A FeatureCollection text of about `bytes` bytes: points with a long property. */
function bodyOfSize(bytes: number, prefix: string): string {
  const filler = 'x'.repeat(1000);
  const features = Array.from({ length: Math.ceil(bytes / 1080) }, (_, i) => point(`${prefix}-${i}`, { filler }));
  return JSON.stringify(collection(...features));
}

/** A shed answer: 429 in the ErrorResponse shape, with Retry-After, stream id and CORS. */
function assertShed(response: TestResponse): void {
  assert.equal(response.status, 429, response.text);
  assert.equal(response.body.type, 'ErrorResponse');
  assert.equal(response.body.error, 'TooManyRequests');
  assert.equal(response.body.errorMessage, 'Too many requests for the service node.');
  assert.equal(response.body.code, 'tooManyRequests');
  assert.ok(Number(response.headers.get('retry-after')) > 0);
  assert.equal(response.headers.get('access-control-allow-origin'), ORIGIN);
  assert.ok(response.headers.get('stream-id'));
}

/** A PUT whose headers are sent and whose body stops after a few bytes: it stays in flight. */
async function stalledUpload(hub: HubProcess, space: string, declared: number): Promise<RawConnection> {
  const connection = await openConnection(hub);
  await connection.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'content-length': String(declared) }));
  await connection.send('{"type":"FeatureCollection",');
  return connection;
}

/**
 * Keeps requests in flight. The node releases a finished request when its answer has been written out,
 * which may be just after the client has read it; a stalled request that arrived in that moment may
 * itself be refused, so `keep` replaces any that got an answer.
 */
class Holder {
  private readonly connections: Array<{ connection: RawConnection; answered: boolean }> = [];

  constructor(private readonly open: () => Promise<RawConnection>) {}

  async keep(count = 1): Promise<void> {
    for (const held of this.connections.filter((entry) => entry.answered)) {
      held.connection.destroy();
      this.connections.splice(this.connections.indexOf(held), 1);
    }
    while (this.connections.length < count) {
      const held = { connection: await this.open(), answered: false };
      void held.connection.answer.then(() => { held.answered = true; });
      this.connections.push(held);
    }
  }

  release(): void {
    for (const held of this.connections.splice(0)) held.connection.destroy();
  }
}

const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

for (const backend of BACKENDS) {
  describe(`load shedding with the default limits (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub);
      const seeded = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...Array.from({ length: 200 }, (_, i) => point(`p${i}`, { n: i }))) });
      assert.equal(seeded.status, 200);
    });
    after(async () => { await hub.stop(); });

    test('16 concurrent reads, 300 sequential reads and 10 concurrent PUTs of 200 features at once never get 429', async () => {
      const statuses: number[] = [];
      const record = async (request: Promise<TestResponse>) => { statuses.push((await request).status); };
      const concurrentReads = Array.from({ length: 16 }, async (_, lane) => {
        for (let i = 0; i < 20; i++) await record(call(hub, 'GET', `/hub/spaces/${space}/search?limit=50&p.n=${(lane * 20 + i) % 200}`));
      });
      const sequentialReads = (async () => {
        for (let i = 0; i < 300; i++) await record(call(hub, 'GET', `/hub/spaces/${space}/features/p${i % 200}`));
      })();
      const puts = Array.from({ length: 10 }, (_, batch) =>
        record(call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...Array.from({ length: 200 }, (_, i) => point(`b${batch}-${i}`, { batch }))) })));
      await Promise.all([...concurrentReads, sequentialReads, ...puts]);
      assert.equal(statuses.length, 16 * 20 + 300 + 10);
      assert.deepEqual(statuses.filter((status) => status !== 200), []);
    });
  });

  describe(`load shedding past a low request limit (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    before(async () => {
      hub = await startHub({ backend, args: ['--max-in-flight', '2'] });
      space = await createSpace(hub);
    });
    after(async () => { await hub.stop(); });

    test('requests past the limit get 429 with Retry-After and CORS; preflights and health are served; the node recovers', async () => {
      const stalled = new Holder(() => stalledUpload(hub, space, 1000));
      try {
        const shed = await eventually('a 429 while two uploads are in flight', async () => {
          await stalled.keep(2);
          const response = await call(hub, 'GET', '/hub/spaces', { headers: { origin: ORIGIN } });
          return response.status === 429 ? response : undefined;
        });
        assertShed(shed);
        // The metrics answer while the node sheds, and count what it shed.
        const figures = await metrics(hub);
        assert.ok((sample(figures, 'hub_http_requests_shed_total') ?? 0) >= 1, figures);
        assert.ok((sample(figures, 'hub_http_requests_in_flight') ?? 0) >= 3, 'two uploads and the scrape');
        const preflight = await call(hub, 'OPTIONS', `/hub/spaces/${space}/features`, {
          anonymous: true, headers: { origin: ORIGIN, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization,content-type' },
        });
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN);
        const health = await call(hub, 'GET', '/hub', { anonymous: true });
        assert.equal(health.status, 200);
      } finally {
        stalled.release();
      }
      await eventually('the node serving again once the uploads are gone', async () => {
        const response = await call(hub, 'GET', '/hub/spaces');
        return response.status === 200 ? response : undefined;
      });
      const write = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(point('after')) });
      assert.equal(write.status, 200);
    });
  });

  describe(`load shedding past the in-flight body budget (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    const mediumBody = bodyOfSize(400_000, 'medium');
    before(async () => {
      hub = await startHub({ backend, args: ['--max-body', '1m', '--max-in-flight-body', '1m'] });
      space = await createSpace(hub);
    });
    after(async () => { await hub.stop(); });

    const putMedium = () => call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: mediumBody, headers: { origin: ORIGIN, accept: 'application/x-empty' } });
    const shedMedium = (holder: Holder) => eventually('a 429 for a body past the budget', async () => {
      await holder.keep();
      const response = await putMedium();
      return response.status === 429 ? response : undefined;
    });
    const acceptedMedium = () => eventually('the body accepted once the budget is free', async () => {
      const response = await putMedium();
      return response.status === 204 ? response : undefined;
    });

    test('one body as large as the budget is accepted when nothing else is in flight', async () => {
      const body = bodyOfSize(900_000, 'large');
      assert.ok(Buffer.byteLength(body) < 1024 * 1024);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: body, headers: { accept: 'application/x-empty' } });
      assert.equal(response.status, 204);
    });

    test('a declared Content-Length counts from the headers on: another body past the budget gets 429', async () => {
      const stalled = new Holder(() => stalledUpload(hub, space, 800_000));
      try {
        assertShed(await shedMedium(stalled));
      } finally {
        stalled.release();
      }
      await acceptedMedium();
    });

    test('a chunked body counts as it streams: it is refused with 429 once it passes the budget', async () => {
      const stalled = new Holder(() => stalledUpload(hub, space, 800_000));
      try {
        await shedMedium(stalled);
        const chunked = await openConnection(hub);
        await chunked.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'transfer-encoding': 'chunked' }));
        for (let at = 0; at < mediumBody.length; at += 64_000) await chunked.send(chunk(mediumBody.slice(at, at + 64_000)));
        await chunked.send('0\r\n\r\n');
        const answer = await chunked.answer;
        chunked.destroy();
        assert.equal(answer.status, 429);
        assert.equal(JSON.parse(answer.body).code, 'tooManyRequests');
        assert.ok(Number(answer.headers['retry-after']) > 0);
      } finally {
        stalled.release();
      }
      await acceptedMedium();
    });

    test('a compressed body counts as it decompresses: past its declared length it is refused with 429 once it passes the budget', async () => {
      const stalled = new Holder(() => stalledUpload(hub, space, 800_000));
      try {
        await shedMedium(stalled);
        const compressed = gzipSync(mediumBody);
        assert.ok(compressed.length < 100_000);
        const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
          rawBody: compressed, headers: { origin: ORIGIN, 'content-encoding': 'gzip', accept: 'application/x-empty' },
        });
        assertShed(response);
      } finally {
        stalled.release();
      }
      await acceptedMedium();
    });

    test('a chunked body holds what it has sent: a declared body past the rest of the budget gets 429', async () => {
      const part = bodyOfSize(700_000, 'part').slice(0, 700_000);
      const chunked = new Holder(async () => {
        const connection = await openConnection(hub);
        await connection.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'transfer-encoding': 'chunked' }));
        await connection.send(chunk(part));
        return connection;
      });
      try {
        assertShed(await shedMedium(chunked));
      } finally {
        chunked.release();
      }
      await acceptedMedium();
    });
  });
}
