// Black-box tests of rejected feature writes: bad JSON, bad features and geometries, duplicate or empty ids, size limits, unknown spaces (API.md 4.2, 1.7).
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

function point(id: string | undefined, properties: Record<string, unknown> = {}, coordinates: unknown = [8.5, 50.1]): Record<string, unknown> {
  return { type: 'Feature', ...(id === undefined ? {} : { id }), geometry: { type: 'Point', coordinates }, properties };
}

const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features });

const withGeometry = (id: string, geometry: unknown) => ({ type: 'Feature', id, geometry, properties: {} });

/** Sends `chunks` as a chunked body (no Content-Length) through `agent`, the way a client streaming an upload does. */
function streamedRequest(hub: HubProcess, agent: Agent, method: string, path: string, chunks: string[] = []): Promise<{ status?: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(hub.url + path, { method, agent, headers: { authorization: `Bearer ${hub.token}` } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode, text }));
    });
    outgoing.on('error', reject);
    // Queued at once: a client that stopped writing while it waits for the server would hide a server that stopped reading.
    for (const chunk of chunks) outgoing.write(chunk);
    outgoing.end();
  });
}

for (const backend of BACKENDS) {
  describe(`rejected feature writes write nothing (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, body: unknown) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body });
    const read = async (space: string, id: string): Promise<FeatureJson> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/features/${id}`);
      assert.equal(response.status, 200, response.text);
      return response.body as unknown as FeatureJson;
    };
    const countOf = async (space: string): Promise<number> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(response.status, 200, response.text);
      return response.body.count as number;
    };

    const ring = (...positions: number[][]) => ({ type: 'Polygon', coordinates: [positions] });
    /** [case, body (raw text when a string), expected code, expected message prefix] */
    const bodyCases: Array<[string, unknown, string, string]> = [
      ['malformed JSON', '{"type":"FeatureCollection","features":[', 'invalidJsonFeatures', 'Invalid JSON input string'],
      ['a root of type Point', { type: 'Point', coordinates: [1, 2] }, 'invalidRootType', 'Cannot read input JSON string.'],
      ['an array root', [point('a')], 'invalidRootType', 'Cannot read input JSON string.'],
      ['a FeatureCollection without features', { type: 'FeatureCollection' }, 'invalidRootType', 'Cannot read input JSON string.'],
    ];
    /** [case, a bad feature sent after a valid one, expected code, expected message prefix] */
    const featureCases: Array<[string, unknown, string, string?]> = [
      ['a feature of type Point', { type: 'Point', coordinates: [1, 2] }, 'invalidFeatureType', 'Unable to create a Feature from the provided input'],
      ['a GeometryCollection', withGeometry('g', { type: 'GeometryCollection', geometries: [] }), 'invalidGeometry'],
      ['an unknown geometry type', withGeometry('g', { type: 'Circle', coordinates: [1, 2] }), 'invalidGeometry'],
      ['a Polygon nested like a LineString', withGeometry('g', { type: 'Polygon', coordinates: [[0, 0], [1, 0], [1, 1], [0, 0]] }), 'invalidGeometry'],
      ['a Point nested like a MultiPoint', withGeometry('g', { type: 'Point', coordinates: [[1, 2]] }), 'invalidGeometry'],
      ['a non-numeric coordinate', point('g', {}, ['8.5', 50.1]), 'invalidGeometry'],
      ['longitude 200', point('g', {}, [200, 10]), 'invalidGeometry'],
      ['latitude 100', point('g', {}, [10, 100]), 'invalidGeometry'],
      ['an unclosed ring', withGeometry('g', ring([0, 0], [1, 0], [1, 1], [0, 1])), 'invalidGeometry'],
      ['a ring of 3 positions', withGeometry('g', ring([0, 0], [1, 0], [0, 0])), 'invalidGeometry'],
      ['a ring that closes in 2D but not in z', withGeometry('g', ring([0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 0, 2])), 'invalidGeometry'],
      ['a LineString of 1 position', withGeometry('g', { type: 'LineString', coordinates: [[0, 0]] }), 'invalidGeometry'],
      ['a duplicate id', point('ok'), 'duplicateFeatureId', 'Objects with the same ID ok is included in the request.'],
      ['an empty-string id', point(''), 'emptyFeatureId', 'Minimum length of object id should be 1.'],
      ['an id holding the NUL character', point('a\u0000b'), 'nulInFeatureId', 'The feature at position 1 has an id containing the NUL character'],
      ['a tag holding the NUL character', point('t', { '@ns:com:here:xyz': { tags: ['ok', 'x\u0000y'] } }), 'invalidFeature'],
    ];
    const cases = [
      ...bodyCases,
      ...featureCases.map(([name, feature, code, prefix]) => [name, collection(point('ok'), feature), code, prefix] as const),
    ];
    for (const method of ['PUT', 'POST'] as const) {
      for (const [name, body, code, prefix] of cases) {
        test(`${method} with ${name} is 400 ${code}`, async () => {
          const space = await createSpace(hub);
          const options = typeof body === 'string' ? { rawBody: body } : { body };
          const response = await call(hub, method, `/hub/spaces/${space}/features`, options);
          assert.equal(response.status, 400, response.text);
          assert.equal(response.body.type, 'ErrorResponse');
          assert.equal(response.body.code, code);
          if (prefix) assert.ok(response.body.errorMessage?.startsWith(prefix), response.body.errorMessage);
          assert.equal(await countOf(space), 0);
        });
      }
    }

    // PostgreSQL text cannot hold U+0000: both engines refuse it in ids and tags, a lookup of it finds
    // nothing, and property values keep it (PostgreSQL filters compare them with U+FFFD in its place).
    test('the NUL character: refused in ids, tags and space ids, found nowhere by lookups, kept in property values', async () => {
      const space = await createSpace(hub);
      assert.equal((await put(space, collection(point('p1', { name: 'a\u0000b', 'k\u0000ey': 1 }, [1, 1]), point('p2', { name: 'ab' }, [2, 2])))).status, 200);

      const addTags = await call(hub, 'PUT', `/hub/spaces/${space}/features?addTags=q%00r`, { body: point('p3') });
      assert.equal(addTags.status, 400, addTags.text);
      assert.equal(addTags.body.code, 'invalidParameter');
      assert.match(addTags.body.errorMessage ?? '', /addTags/);
      const pathId = await call(hub, 'PUT', `/hub/spaces/${space}/features/x%00y`, { body: point(undefined) });
      assert.equal(pathId.status, 400, pathId.text);
      assert.equal(pathId.body.code, 'nulInFeatureId');
      assert.equal(await countOf(space), 2);

      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/a%00b`)).status, 404);
      const byIds = await call(hub, 'GET', `/hub/spaces/${space}/features?id=a%00b&id=p2`);
      assert.equal(byIds.status, 200, byIds.text);
      assert.deepEqual(byIds.body.features?.map((feature) => feature.id), ['p2']);
      const byTag = await call(hub, 'GET', `/hub/spaces/${space}/search?tags=x%00y`);
      assert.equal(byTag.status, 200, byTag.text);
      assert.deepEqual(byTag.body.features, []);
      const byIdFilter = await call(hub, 'GET', `/hub/spaces/${space}/search?f.id=a%00b`);
      assert.equal(byIdFilter.status, 200, byIdFilter.text);
      assert.deepEqual(byIdFilter.body.features, []);
      const deleted = await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=a%00b`);
      assert.ok([200, 204].includes(deleted.status), deleted.text);
      assert.equal(await countOf(space), 2);

      const byValue = await call(hub, 'GET', `/hub/spaces/${space}/search?p.name=a%00b`);
      assert.equal(byValue.status, 200, byValue.text);
      assert.deepEqual(byValue.body.features?.map((feature) => feature.id), ['p1']);
      assert.equal(byValue.body.features?.[0].properties.name, 'a\u0000b');
      const byKey = await call(hub, 'GET', `/hub/spaces/${space}/search?p.k%00ey=1`);
      assert.equal(byKey.status, 200, byKey.text);
      assert.deepEqual(byKey.body.features?.map((feature) => feature.id), ['p1']);

      assert.equal((await call(hub, 'GET', '/hub/spaces/a%00b')).status, 404);
      assert.equal((await call(hub, 'GET', '/hub/spaces/a%00b/features/p1')).status, 404);
      const spaceId = await call(hub, 'POST', '/hub/spaces', { body: { title: 'nul', id: 'a\u0000b' } });
      assert.equal(spaceId.status, 400, spaceId.text);
      assert.equal(spaceId.body.code, 'spaceValidation');
    });

    test('single-feature PUT and PATCH reject malformed JSON and invalid geometry', async () => {
      const space = await createSpace(hub);
      assert.equal((await put(space, point('a', { v: 1 }))).status, 200);
      for (const method of ['PUT', 'PATCH']) {
        const malformed = await call(hub, method, `/hub/spaces/${space}/features/a`, { rawBody: '{"type":' });
        assert.equal(malformed.status, 400, method);
        assert.equal(malformed.body.code, 'invalidJsonFeatures', method);
        const invalid = await call(hub, method, `/hub/spaces/${space}/features/a`, { body: point(undefined, { v: 9 }, [200, 0]) });
        assert.equal(invalid.status, 400, method);
        assert.equal(invalid.body.code, 'invalidGeometry', method);
      }
      assert.equal((await read(space, 'a')).properties.v, 1);
    });

    test('a 10,000-feature batch with one bad feature at the end writes none and names it', async () => {
      const space = await createSpace(hub);
      const features = Array.from({ length: 10000 }, (_, i) => point(`f${i}`, { i }, [i % 360 - 180 + 0.5, 10]));
      features[9999] = point('last-one', {}, [10, 95]);
      const response = await put(space, collection(...features));
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'invalidGeometry');
      assert.match(response.body.errorMessage ?? '', /9999/);
      assert.match(response.body.errorMessage ?? '', /last-one/);
      assert.equal(await countOf(space), 0);

      features[9999] = point('last-one', {}, [10, 85]);
      const fixed = await put(space, collection(...features));
      assert.equal(fixed.status, 200);
      assert.equal(fixed.body.inserted?.length, 10000);
      assert.equal(await countOf(space), 10000);
    });

    test('a body that is not valid gzip is 400', async () => {
      const space = await createSpace(hub);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`,
        { rawBody: Buffer.from(JSON.stringify(point('a'))), headers: { 'content-encoding': 'gzip' } });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalidCompressedBody');
      assert.equal(await countOf(space), 0);
    });

    test('a body in a Content-Encoding the hub does not decode is 415 on every body route, not read as plain JSON', async () => {
      const space = await createSpace(hub);
      const text = JSON.stringify(collection(point('a')));
      const writes: Array<[string, string, string]> = [
        ['PUT', `/hub/spaces/${space}/features`, text], ['POST', `/hub/spaces/${space}/features`, text],
        ['PATCH', `/hub/spaces/${space}`, '{"title":"changed"}'], ['POST', `/ogc/collections/${space}/items`, JSON.stringify(point('b'))],
        ['POST', `/hub/spaces/${space}/spatial`, '{"type":"Point","coordinates":[0,0]}'],
      ];
      for (const encoding of ['br', 'x-unknown', 'gzip, gzip', 'identity, gzip']) {
        for (const [method, path, body] of writes) {
          const response = await call(hub, method, path, { rawBody: body, headers: { 'content-encoding': encoding, 'content-type': 'application/json' } });
          assert.equal(response.status, 415, `${method} ${path} ${encoding}: ${response.text.slice(0, 300)}`);
          assert.equal(response.body.code, 'unsupportedContentEncoding', `${method} ${path} ${encoding}`);
          // RFC 9110 12.5.3: a 415 for a content coding says which codings are read.
          assert.equal(response.headers.get('accept-encoding'), 'gzip, deflate', `${method} ${path} ${encoding}`);
        }
      }
      assert.equal(await countOf(space), 0);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}`)).body.title, 'test space');
      const plain = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: text, headers: { 'content-encoding': 'identity' } });
      assert.equal(plain.status, 200, plain.text);
    });

    test('X-Upload-Content-Length-Limit lowers the body limit: 413', async () => {
      const space = await createSpace(hub);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`,
        { body: collection(point('a', { text: 'x'.repeat(2000) })), headers: { 'x-upload-content-length-limit': '1000' } });
      assert.equal(response.status, 413);
      assert.equal(response.body.code, 'payloadTooLarge');
      assert.equal(await countOf(space), 0);
    });

    // One socket only: the request after the rejected one must reuse its connection.
    const rejectedMidBody = async (target: HubProcess, chunks: string[], status: number): Promise<void> => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const space = await createSpace(target);
        const rejected = await streamedRequest(target, agent, 'PUT', `/hub/spaces/${space}/features`, chunks);
        assert.equal(rejected.status, status, rejected.text);
        const next = await streamedRequest(target, agent, 'GET', `/hub/spaces/${space}/count`);
        assert.equal(next.status, 200);
        assert.equal((JSON.parse(next.text) as { count: number }).count, 0);
      } finally {
        agent.destroy();
      }
    };
    const filler = 'x'.repeat(64 * 1024);

    test('after malformed JSON deep in a large streamed body the connection serves the next request', { timeout: 30_000 }, async () => {
      // The error sits past the 8 MiB that are buffered, so the streaming parser finds it while the upload goes on.
      const feature = `{"properties":{"t":"${filler}"}}`;
      const chunks = ['{"type":"FeatureCollection","features":[', ...Array(140).fill(feature + ','), feature, ';', ...Array(100).fill(',' + feature), ']}'];
      await rejectedMidBody(hub, chunks, 400);
    });

    describe('with --max-body 10k', () => {
      let small: HubProcess;
      before(async () => { small = await startHub({ backend, args: ['--max-body', '10k'] }); });
      after(async () => { await small.stop(); });

      test('a larger body is 413, also when it only grows past the limit by decompression', async () => {
        const space = await createSpace(small);
        const large = collection(...Array.from({ length: 100 }, (_, i) => point(`f${i}`, { text: 'x'.repeat(200) })));
        const plain = await call(small, 'PUT', `/hub/spaces/${space}/features`, { body: large });
        assert.equal(plain.status, 413);
        assert.equal(plain.body.code, 'payloadTooLarge');
        assert.equal(plain.body.errorMessage, 'The request payload is bigger than the maximum allowed.');
        const compressed = gzipSync(JSON.stringify(large));
        assert.ok(compressed.length < 10 * 1024, 'the compressed body fits the limit');
        const gzipped = await call(small, 'PUT', `/hub/spaces/${space}/features`, { rawBody: compressed, headers: { 'content-encoding': 'gzip' } });
        assert.equal(gzipped.status, 413);
        const count = await call(small, 'GET', `/hub/spaces/${space}/count`);
        assert.equal(count.body.count, 0);
        const fits = await call(small, 'PUT', `/hub/spaces/${space}/features`, { body: point('small') });
        assert.equal(fits.status, 200);
      });

      test('after a streamed body is cut off with 413 the connection serves the next request', { timeout: 30_000 }, async () => {
        await rejectedMidBody(small, ['{"type":"FeatureCollection","features":[{"properties":{"t":"', ...Array(32).fill(filler), '"}}]}'], 413);
      });
    });

    test('a write to an unknown space is 404', async () => {
      for (const [method, path] of [['PUT', ''], ['POST', ''], ['PUT', '/x'], ['PATCH', '/x'], ['DELETE', '/x'], ['DELETE', '?id=x']] as const) {
        const response = await call(hub, method, `/hub/spaces/no-such-space/features${path}`,
          method === 'DELETE' ? {} : { body: point('x') });
        assert.equal(response.status, 404, `${method} ${path}`);
        assert.equal(response.body.code, 'spaceOfFeaturesNotFound', `${method} ${path}`);
      }
    });
  });
}
