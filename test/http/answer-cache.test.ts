// Black-box tests of the answer cache (issue 24 section 3): byte-identical answers, a write on one node makes the next read on another miss, rights before the cache, a bound in bytes; on both engines.
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken } from '../helpers/tokens.js';
import { keptConnection } from '../helpers/worker-processes.js';
import { webTileId } from '../helpers/web-tiles.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, lon: number, lat: number, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties: { ...properties, [NS]: { tags: [] } } });
const square = (id: string, lon: number, lat: number, size: number) => ({
  type: 'Feature', id, properties: { name: id, [NS]: { tags: [] } },
  geometry: { type: 'Polygon', coordinates: [[[lon, lat], [lon + size, lat], [lon + size, lat + size], [lon, lat + size], [lon, lat]]] },
});
const collection = (...features: object[]) => ({ type: 'FeatureCollection', features });

/** The web tile of level 8 holding 11.1° E 50.6° N, where the test features are. */
const TILE = webTileId(8, 11.1, 50.6);

interface RawResponse { status: number; headers: Record<string, string>; body: Buffer }

/** The headers a cache must reproduce (the date differs by the second, and says when, not what). */
const COMPARED = ['content-type', 'content-length', 'etag', 'cache-control', 'content-encoding', 'vary'];

async function raw(hub: HubProcess, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  const response = await fetch(hub.url + path, { method, headers: { authorization: `Bearer ${hub.token}`, ...headers }, body });
  const kept: Record<string, string> = {};
  for (const name of COMPARED) kept[name] = response.headers.get(name) ?? '';
  return { status: response.status, headers: kept, body: Buffer.from(await response.arrayBuffer()) };
}

/** A GET through node:http, which (unlike fetch) leaves the answer as sent: compressed, with its framing headers. */
function rawGet(hub: HubProcess, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(hub.url + path, { headers: { authorization: `Bearer ${hub.token}`, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

interface Figures { maxSize: number; size: number; entries: number; hits: number; misses: number; hitRate: number }
const figuresOf = (text: string): Figures => (JSON.parse(text) as { cache: Figures }).cache;

/** One node of the hub as a test reaches it: PostgreSQL, a hub process of its own; SQLite, one worker of a hub's two. */
interface Node { ask(method: string, path: string, body?: object): Promise<{ status: number; body: string }>; close(): void }

for (const backend of BACKENDS) {
  describe(`answer cache (${backend})`, () => {
    let hub: HubProcess;
    /** PostgreSQL: a second node on the hub's database; SQLite: a hub of two workers. Either with a small cache. */
    let other: HubProcess;
    before(async () => {
      hub = await startHub({ backend });
      other = backend === 'postgres'
        ? await startHub({ backend, storage: hub.storage, env: { HUB_CACHE_SIZE: '64k' } })
        : await startHub({ backend, env: { HUB_WORKERS: '2', HUB_CACHE_SIZE: '64k' } });
    });
    after(async () => {
      await other?.stop();
      await hub?.stop();
    });

    const figures = async (target: HubProcess = hub) => figuresOf((await call(target, 'GET', '/hub')).text);
    const put = async (target: HubProcess, space: string, ...features: object[]) =>
      assert.equal((await call(target, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...features) })).status, 200);

    /** Two nodes of the `other` hub: two processes on one database, or two workers on one file. */
    async function twoNodes(): Promise<[Node, Node]> {
      if (backend === 'postgres') {
        const node = (target: HubProcess): Node => ({
          ask: async (method, path, body) => {
            const response = await call(target, method, path, body === undefined ? {} : { body });
            return { status: response.status, body: response.text };
          },
          close: () => {},
        });
        return [node(hub), node(other)];
      }
      const connections = [await keptConnection(other)];
      for (let tries = 0; tries < 50; tries++) {
        const next = await keptConnection(other);
        if (next.worker !== connections[0].worker) return [connections[0], next].map((connection) => ({
          ask: (method: string, path: string, body?: object) => connection.ask(method, path, body === undefined ? undefined : JSON.stringify(body)),
          close: () => connection.close(),
        })) as [Node, Node];
        next.close();
      }
      throw new Error('no connection reached the second worker');
    }

    test('a cached answer is byte-identical to the uncached one, headers included: GeoJSON and MVT tiles, bbox, spatial', async () => {
      const space = await createSpace(hub);
      await put(hub, space, point('p1', 11.1, 50.6, { n: 1 }), point('p2', 11.2, 50.65, { n: 'two' }), square('s1', 11.0, 50.5, 0.2), point('far', -70, -30));
      const base = `/hub/spaces/${space}`;
      const geometry = JSON.stringify({ type: 'Polygon', coordinates: [[[10.9, 50.4], [11.5, 50.4], [11.5, 50.8], [10.9, 50.8], [10.9, 50.4]]] });
      const requests: Array<{ name: string; method: string; path: string; headers?: Record<string, string>; body?: string }> = [
        { name: 'GeoJSON tile', method: 'GET', path: `${base}/tile/web/${TILE}` },
        { name: 'MVT tile', method: 'GET', path: `${base}/tile/web/${TILE}.mvt` },
        { name: 'MVT by Accept', method: 'GET', path: `${base}/tile/web/${TILE}`, headers: { accept: 'application/vnd.mapbox-vector-tile' } },
        { name: 'viz tile', method: 'GET', path: `${base}/tile/web/${TILE}?mode=viz&clip=true` },
        { name: 'tile with margin', method: 'GET', path: `${base}/tile/web/${TILE}?margin=8` },
        { name: 'bbox', method: 'GET', path: `${base}/bbox?west=10&south=50&east=12&north=51&selection=p.n` },
        { name: 'clustered bbox', method: 'GET', path: `${base}/bbox?west=10&south=50&east=12&north=51&clustering=hexbin` },
        { name: 'spatial', method: 'GET', path: `${base}/spatial?lat=50.6&lon=11.1&radius=20000` },
        { name: 'spatial POST', method: 'POST', path: `${base}/spatial`, headers: { 'content-type': 'application/geo+json' }, body: geometry },
      ];
      const start = await figures();
      const firsts: RawResponse[] = [];
      for (const request of requests) {
        const first = await raw(hub, request.method, request.path, request.headers, request.body);
        const second = await raw(hub, request.method, request.path, request.headers, request.body);
        assert.equal(first.status, 200, `${request.name}: ${first.body.toString()}`);
        assert.equal(second.status, first.status, request.name);
        assert.deepEqual(second.headers, first.headers, request.name);
        assert.ok(second.body.equals(first.body), `${request.name}: the bodies differ`);
        firsts.push(first);
        const notModified = await raw(hub, request.method, request.path, { ...request.headers, 'if-none-match': first.headers.etag }, request.body);
        assert.equal(notModified.status, 304, request.name);
      }
      assert.equal(firsts[1].headers['content-type'], 'application/vnd.mapbox-vector-tile');
      assert.ok(firsts[2].body.equals(firsts[1].body), 'the MVT asked for by Accept is the .mvt tile');
      assert.notEqual(firsts[0].headers['content-type'], firsts[2].headers['content-type'], 'GeoJSON and MVT of one URL are kept apart');
      const end = await figures();
      // Each request: a miss, then a hit, then a hit answered 304.
      assert.equal(end.misses - start.misses, requests.length);
      assert.equal(end.hits - start.hits, 2 * requests.length);
      assert.ok(end.size > 0 && end.entries >= requests.length - 1, JSON.stringify(end));
    });

    test('a write on one node makes the next read on the other node miss, for the space and for a composite space over it', async () => {
      const [a, b] = await twoNodes();
      try {
        const created = await a.ask('POST', '/hub/spaces', { title: 'cache nodes' });
        const space = (JSON.parse(created.body) as { id: string }).id;
        const composite = (JSON.parse((await a.ask('POST', '/hub/spaces', { title: 'over', extends: { spaceId: space } })).body) as { id: string }).id;
        assert.equal((await a.ask('PUT', `/hub/spaces/${space}/features`, collection(point('p', 11.1, 50.6, { n: 1 })))).status, 200);
        for (const path of [`/hub/spaces/${space}/tile/web/${TILE}`, `/hub/spaces/${composite}/tile/web/${TILE}`, `/hub/spaces/${space}/bbox?west=10&south=50&east=12&north=51`]) {
          for (let round = 2; round <= 4; round++) {
            const cached = await b.ask('GET', path);
            assert.equal(cached.status, 200, cached.body);
            assert.equal(await b.ask('GET', path).then((again) => again.body), cached.body, 'the repeated read is the cached one');
            assert.equal((await a.ask('PUT', `/hub/spaces/${space}/features`, collection(point('p', 11.1, 50.6, { n: round })))).status, 200);
            const next = await b.ask('GET', path);
            assert.ok(next.body.includes(`"n":${round}`), `${path} after write ${round} on the other node: ${next.body}`);
            assert.equal(next.body, (await a.ask('GET', path)).body, 'both nodes answer the same');
          }
        }
        const seen = figuresOf((await b.ask('GET', '/hub')).body);
        assert.ok(seen.hits >= 9 && seen.misses >= 9, JSON.stringify(seen));
      } finally {
        a.close();
        b.close();
      }
    });

    test('rights are decided before the cache: a cached answer never reaches a caller who may not read every space it shows', async () => {
      const base = await createSpace(hub);
      const composite = await createSpace(hub, { extends: { spaceId: base } });
      await put(hub, base, point('secret-base', 11.1, 50.6));
      await put(hub, composite, point('own-feature', 11.15, 50.6));
      const both = await issueToken(hub, { aid: 'cache-both', urm: { 'xyz-hub': { readFeatures: [{ space: base }, { space: composite }] } } });
      const top = await issueToken(hub, { aid: 'cache-top', urm: { 'xyz-hub': { readFeatures: [{ space: composite }] } } });
      const as = (token: string | undefined, path: string) => call(hub, 'GET', path, token === undefined ? { anonymous: true } : { headers: { authorization: `Bearer ${token}` } });
      for (const path of [`/hub/spaces/${composite}/tile/web/${TILE}`, `/hub/spaces/${composite}/tile/web/${TILE}.mvt`, `/hub/spaces/${composite}/bbox?west=10&south=50&east=12&north=51`]) {
        const admin = await call(hub, 'GET', path);
        assert.equal(admin.status, 200, admin.text);
        const hits = (await figures()).hits;
        const reader = await as(both.token, path);
        assert.equal(reader.status, 200);
        assert.equal(reader.text, admin.text);
        assert.equal((await figures()).hits, hits + 1, 'the reader with rights on both spaces got the cached answer');
        for (const refused of [await as(top.token, path), await as(top.token, `${path}${path.includes('?') ? '&' : '?'}clientId=x`)]) {
          assertError(refused, 403, 'insufficientRights');
          assert.ok(!refused.text.includes('secret') && !refused.text.includes('own-feature'), refused.text);
        }
        assert.equal((await as(undefined, path)).status, 401);
        assert.equal((await as(both.token.slice(1), path)).status, 401);
      }
      await put(hub, base, point('secret-base', 11.1, 50.6, { changed: true }));
      const after = await as(both.token, `/hub/spaces/${composite}/tile/web/${TILE}`);
      assert.ok(after.text.includes('"changed":true'), 'a write to the base makes the composite read miss');
      assertError(await as(top.token, `/hub/spaces/${composite}/tile/web/${TILE}`), 403, 'insufficientRights');
    });

    test('a read at a past version is cached by that version and stays the same across later writes', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await put(hub, space, point('v', 11.1, 50.6, { n: 0 }));
      const path = `/hub/spaces/${space}/tile/web/${TILE}?version=0`;
      const first = await raw(hub, 'GET', path);
      await put(hub, space, point('v', 11.1, 50.6, { n: 1 }));
      const hits = (await figures()).hits;
      const second = await raw(hub, 'GET', path);
      assert.equal((await figures()).hits, hits + 1, 'version 0 is still cached after a write');
      assert.ok(second.body.equals(first.body));
      assert.deepEqual(second.headers, first.headers);
      assert.ok((await raw(hub, 'GET', `/hub/spaces/${space}/tile/web/${TILE}`)).body.toString().includes('"n":1'));
    });

    test('compressed answers: a whole one in one piece with its length, a cached one compressed once and kept with its entry, a large one streamed', async () => {
      const space = await createSpace(hub);
      const padding = 'y'.repeat(300);
      await put(hub, space, ...Array.from({ length: 40 }, (_, index) => point(`z${index}`, 11.1 + index * 0.001, 50.6, { padding, index })));
      const tile = `/hub/spaces/${space}/tile/web/${TILE}`;
      const plain = await rawGet(hub, tile, { 'accept-encoding': 'identity' });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.ok(plain.body.length > 8 * 1024 && plain.body.length < 64 * 1024, `a tile of ${plain.body.length} bytes`);
      const decoders = { gzip: gunzipSync, deflate: inflateSync };
      let kept = (await figures()).size;
      let keptEncoded = 0;
      for (const encoding of ['gzip', 'deflate'] as const) {
        const hits = (await figures()).hits;
        const first = await rawGet(hub, tile, { 'accept-encoding': encoding });
        const again = await rawGet(hub, tile, { 'accept-encoding': `${encoding}, br;q=0.5` });
        for (const answer of [first, again]) {
          assert.equal(answer.headers['content-encoding'], encoding);
          assert.equal(answer.headers['content-length'], String(answer.body.length), 'sent in one piece, with its length');
          assert.match(String(answer.headers.vary), /accept-encoding/);
          assert.ok(decoders[encoding](answer.body).equals(plain.body), `${encoding}: the same bytes as uncompressed`);
          assert.equal(answer.headers.etag, plain.headers.etag);
        }
        assert.ok(again.body.equals(first.body));
        const after = await figures();
        assert.equal(after.hits - hits, 2, 'both were answered from the cache');
        // The entry now holds this encoding's body beside the plain one, in place of the other encoding's.
        assert.equal(after.size - kept, first.body.length - keptEncoded, 'the compressed body is kept with the entry and counted');
        kept = after.size;
        keptEncoded = first.body.length;
      }
      const unsupported = await rawGet(hub, tile, { 'accept-encoding': 'br' });
      assert.equal(unsupported.headers['content-encoding'], undefined);
      assert.ok(unsupported.body.equals(plain.body));
      // An answer made whole but not cached (GET by ids), and one past the one-piece bound, streamed by @fastify/compress.
      const ids = Array.from({ length: 40 }, (_, index) => `z${index}`).join(',');
      const byIds = await rawGet(hub, `/hub/spaces/${space}/features?id=${ids}`, { 'accept-encoding': 'gzip' });
      assert.equal(byIds.headers['content-length'], String(byIds.body.length));
      assert.equal((JSON.parse(gunzipSync(byIds.body).toString()) as { features: unknown[] }).features.length, 40);
      await put(hub, space, ...Array.from({ length: 400 }, (_, index) => point(`w${index}`, 11.2 + index * 0.0001, 50.62, { padding, index })));
      const large = await rawGet(hub, tile, { 'accept-encoding': 'gzip' });
      assert.equal(large.headers['content-encoding'], 'gzip');
      assert.equal(large.headers['transfer-encoding'], 'chunked');
      assert.equal((JSON.parse(gunzipSync(large.body).toString()) as { features: unknown[] }).features.length, 440);
    });

    test('the cache stays within HUB_CACHE_SIZE; an answer above an eighth of it is not kept', async () => {
      // The node with the 64 KiB cache, all requests on one connection: on SQLite, one worker and its cache.
      const [first, node] = await twoNodes();
      first.close();
      try {
        const ask = async (method: string, path: string, body?: object) => {
          const response = await node.ask(method, path, body);
          assert.equal(response.status, 200, response.body);
          return response.body;
        };
        const space = (JSON.parse(await ask('POST', '/hub/spaces', { title: 'bounded' })) as { id: string }).id;
        const padding = 'x'.repeat(400);
        await ask('PUT', `/hub/spaces/${space}/features`, collection(...Array.from({ length: 200 }, (_, index) =>
          point(`b${index}`, 10 + (index % 20) * 0.1, 50 + Math.floor(index / 20) * 0.1, { padding }))));
        for (let index = 0; index < 100; index++) {
          const west = 10 + (index % 20) * 0.1 - 0.01;
          const south = 50 + Math.floor(index / 10) * 0.1 - 0.01;
          await ask('GET', `/hub/spaces/${space}/bbox?west=${west}&south=${south}&east=${west + 0.15}&north=${south + 0.15}`);
        }
        const bounded = figuresOf(await ask('GET', '/hub'));
        assert.equal(bounded.maxSize, 64 * 1024);
        assert.ok(bounded.size <= bounded.maxSize && bounded.size > bounded.maxSize / 2, JSON.stringify(bounded));
        assert.ok(bounded.entries < 100, JSON.stringify(bounded));
        const large = `/hub/spaces/${space}/bbox?west=9&south=49&east=13&north=52`;
        assert.ok((await ask('GET', large)).length > 8 * 1024);
        const hits = figuresOf(await ask('GET', '/hub')).hits;
        await ask('GET', large);
        assert.equal(figuresOf(await ask('GET', '/hub')).hits, hits, 'the large answer was not kept');
      } finally {
        node.close();
      }
    });
  });
}
