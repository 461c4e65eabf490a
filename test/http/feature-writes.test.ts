// Black-box tests of PUT feature writes, the namespace, ids, tags, content handling, single-feature routes and deletes (API.md 4.1–4.8, 1.4, 1.9).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, NS, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';

const GENERATED_ID = /^[A-Za-z0-9]{16}$/;

/** A single-feature answer (GET, PUT or PATCH of /features/{id}). */
const featureBody = (response: TestResponse): FeatureJson => response.body as unknown as FeatureJson;

/** The only feature of a write answer, after checking there is exactly one. */
function onlyFeature(response: TestResponse): FeatureJson {
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.type, 'FeatureCollection');
  assert.equal(response.body.features?.length, 1, response.text);
  return (response.body.features as FeatureJson[])[0];
}

for (const backend of BACKENDS) {
  describe(`feature writes with PUT, single-feature routes and deletes (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, body: unknown, query = '', headers: Record<string, string> = {}) =>
      call(hub, 'PUT', `/hub/spaces/${space}/features${query}`, { body, headers });
    const get = (space: string, id: string) => call(hub, 'GET', `/hub/spaces/${space}/features/${encodeURIComponent(id)}`);
    const read = async (space: string, id: string): Promise<FeatureJson> => {
      const response = await get(space, id);
      assert.equal(response.status, 200, response.text);
      return featureBody(response);
    };
    const countOf = async (space: string): Promise<number> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(response.status, 200, response.text);
      return response.body.count as number;
    };
    const storedIds = async (space: string): Promise<string[]> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/search`);
      assert.equal(response.status, 200, response.text);
      return (response.body.features ?? []).map((feature) => feature.id).sort();
    };

    describe('PUT /features', () => {
      test('a single Feature is created: 200 FeatureCollection, inserted, no updated list, full namespace', async () => {
        const space = await createSpace(hub);
        const response = await put(space, point('A1', { name: 'a' }));
        const feature = onlyFeature(response);
        assert.deepEqual(response.body.inserted, ['A1']);
        assert.equal('updated' in response.body, false);
        assert.equal('deleted' in response.body, false);
        assert.equal('failed' in response.body, false);
        assert.equal(feature.type, 'Feature');
        assert.equal(feature.id, 'A1');
        assert.equal(feature.properties.name, 'a');
        const namespace = namespaceOf(feature);
        assert.equal(namespace.space, space);
        assert.equal(typeof namespace.createdAt, 'number');
        assert.equal(namespace.updatedAt, namespace.createdAt);
        assert.deepEqual(namespace.tags, []);
        assert.equal(response.headers.get('content-type')?.startsWith('application/geo+json'), true);
      });

      test('a FeatureCollection inserts new features and reports existing ones as updated', async () => {
        const space = await createSpace(hub);
        assert.equal((await put(space, collection(point('A'), point('B')))).status, 200);
        const response = await put(space, collection(point('B', { v: 2 }), point('C')));
        assert.equal(response.status, 200);
        assert.deepEqual(response.body.inserted, ['C']);
        assert.deepEqual(response.body.updated, ['B']);
        assert.deepEqual(response.body.features?.map((feature) => feature.id).sort(), ['B', 'C']);
        assert.deepEqual(await storedIds(space), ['A', 'B', 'C']);
      });

      test('an update keeps createdAt, changes updatedAt and replaces the properties', async () => {
        const space = await createSpace(hub);
        const first = namespaceOf(onlyFeature(await put(space, point('U', { old: true, keep: 1 }))));
        // Timestamps are in milliseconds: let the clock move on so the update gets a later one.
        await sleep(5);
        const response = await put(space, point('U', { keep: 2 }));
        const updated = onlyFeature(response);
        assert.deepEqual(response.body.updated, ['U']);
        assert.equal('inserted' in response.body, false);
        const namespace = namespaceOf(updated);
        assert.equal(namespace.createdAt, first.createdAt);
        assert.ok(namespace.updatedAt > first.updatedAt, 'updatedAt moved forward');
        assert.deepEqual(Object.keys(updated.properties).sort(), [NS, 'keep']);
        const stored = await read(space, 'U');
        assert.equal(namespaceOf(stored).createdAt, first.createdAt);
        assert.equal(namespaceOf(stored).updatedAt, namespace.updatedAt);
        assert.equal(stored.properties.old, undefined);
      });

      test('the write answer keeps 2D geometry as written; reads return 3D with z = 0', async () => {
        const space = await createSpace(hub);
        const line = { type: 'Feature', id: 'L', geometry: { type: 'LineString', coordinates: [[1, 2], [3, 4, 5]] }, properties: {} };
        const written = onlyFeature(await put(space, point('P', {}, [8.5, 50.1])));
        assert.deepEqual(written.geometry?.coordinates, [8.5, 50.1]);
        const lineWritten = onlyFeature(await put(space, line));
        assert.deepEqual(lineWritten.geometry?.coordinates, [[1, 2], [3, 4, 5]]);
        assert.deepEqual((await read(space, 'P')).geometry, { type: 'Point', coordinates: [8.5, 50.1, 0] });
        assert.deepEqual((await read(space, 'L')).geometry, { type: 'LineString', coordinates: [[1, 2, 0], [3, 4, 5]] });
      });

      test('coordinates are rounded to 8 decimals', async () => {
        const space = await createSpace(hub);
        const written = onlyFeature(await put(space, point('R', {}, [1.123456789012, -2.987654321098, 3.000000004])));
        assert.deepEqual(written.geometry?.coordinates, [1.12345679, -2.98765432, 3]);
        assert.deepEqual((await read(space, 'R')).geometry?.coordinates, [1.12345679, -2.98765432, 3]);
      });

      test('a numeric id becomes its decimal string', async () => {
        const space = await createSpace(hub);
        const response = await put(space, point(1234));
        assert.equal(onlyFeature(response).id, '1234');
        assert.deepEqual(response.body.inserted, ['1234']);
        assert.equal((await get(space, '1234')).status, 200);
      });

      test('a missing id is generated as 16 alphanumerics, different per feature', async () => {
        const space = await createSpace(hub);
        const response = await put(space, collection(point(undefined), point(undefined)));
        assert.equal(response.status, 200);
        const ids = response.body.inserted ?? [];
        assert.equal(ids.length, 2);
        for (const id of ids) assert.match(id, GENERATED_ID);
        assert.notEqual(ids[0], ids[1]);
        assert.deepEqual(await storedIds(space), [...ids].sort());
      });

      test('prefixId prefixes given and generated ids', async () => {
        const space = await createSpace(hub);
        const response = await put(space, collection(point('a'), point(undefined)), '?prefixId=pre_');
        assert.equal(response.status, 200);
        const ids = response.body.inserted ?? [];
        assert.equal(ids[0], 'pre_a');
        assert.match(ids[1], /^pre_[A-Za-z0-9]{16}$/);
        assert.equal((await get(space, 'pre_a')).status, 200);
        assert.equal((await get(space, 'a')).status, 404);
      });

      test('a root bbox is dropped and missing properties become {}', async () => {
        const space = await createSpace(hub);
        const written = onlyFeature(await put(space, { type: 'Feature', id: 'B', bbox: [0, 0, 1, 1], geometry: { type: 'Point', coordinates: [0.5, 0.5] } }));
        assert.equal('bbox' in written, false);
        assert.deepEqual(Object.keys(written.properties), [NS]);
        const stored = await read(space, 'B');
        assert.equal('bbox' in stored, false);
        assert.deepEqual(Object.keys(stored.properties), [NS]);
      });

      test('a feature without type and without geometry is accepted with geometry null', async () => {
        const space = await createSpace(hub);
        const written = onlyFeature(await put(space, collection({ id: 'N', properties: { x: 1 } })));
        assert.equal(written.type, 'Feature');
        assert.equal(written.geometry, null);
        assert.equal((await read(space, 'N')).geometry, null);
      });

      test('foreign namespace members are ignored and never returned; server members are overwritten', async () => {
        const space = await createSpace(hub);
        const foreign = { space: 'elsewhere', createdAt: 1, updatedAt: 2, tags: ['t'], version: 7, author: 'me', foo: 'bar', deleted: true };
        const written = onlyFeature(await put(space, point('F', { [NS]: foreign })));
        const namespace = namespaceOf(written);
        assert.deepEqual(Object.keys(namespace).sort(), ['createdAt', 'space', 'tags', 'updatedAt']);
        assert.equal(namespace.space, space);
        assert.notEqual(namespace.createdAt, 1);
        assert.deepEqual(namespace.tags, ['t']);
        const storedNamespace = namespaceOf(await read(space, 'F'));
        assert.deepEqual(Object.keys(storedNamespace).sort(), ['createdAt', 'space', 'tags', 'updatedAt']);
      });

      test('features read from one space can be written verbatim into another', async () => {
        const source = await createSpace(hub);
        const target = await createSpace(hub);
        await put(source, collection(point('X', { n: 1, [NS]: { tags: ['copy'] } }), point('Y')));
        const original = await call(hub, 'GET', `/hub/spaces/${source}/features?id=X,Y`);
        assert.equal(original.body.features?.length, 2);
        const response = await put(target, original.body);
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['X', 'Y']);
        const copied = await read(target, 'X');
        assert.equal(namespaceOf(copied).space, target);
        assert.deepEqual(namespaceOf(copied).tags, ['copy']);
        assert.equal(copied.properties.n, 1);
      });

      test('an empty FeatureCollection answers 200 with "features": []', async () => {
        const space = await createSpace(hub);
        const response = await put(space, collection());
        assert.equal(response.status, 200);
        assert.deepEqual(response.body.features, []);
        assert.equal('inserted' in response.body, false);
      });

      test('Accept: application/x-empty answers 204 without a body and still writes, on PUT and POST', async () => {
        const space = await createSpace(hub);
        const response = await put(space, point('E'), '', { accept: 'application/x-empty' });
        assert.equal(response.status, 204);
        assert.equal(response.text, '');
        assert.equal((await get(space, 'E')).status, 200);
        const posted = await call(hub, 'POST', `/hub/spaces/${space}/features`, { body: point('P'), headers: { accept: 'application/x-empty' } });
        assert.equal(posted.status, 204);
        assert.equal(posted.text, '');
        assert.equal((await get(space, 'P')).status, 200);
      });

      test('Content-Type application/json is accepted', async () => {
        const space = await createSpace(hub);
        const response = await put(space, point('J'), '', { 'content-type': 'application/json' });
        assert.deepEqual(response.body.inserted, ['J']);
      });

      test('a body starting with a UTF-8 BOM is accepted (chicago parks)', async () => {
        const space = await createSpace(hub);
        const bytes = readFileSync(join(ROOT, 'test/fixtures/chicago_parks.geo.json'));
        assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the fixture starts with a BOM');
        const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: bytes });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.inserted?.length, 9);
        const park = await read(space, 'LP');
        assert.equal(park.properties.title, 'Lincoln Park');
        assert.deepEqual(park.geometry?.coordinates, [-87.637596, 41.940403, 4]);
      });

      test('a gzip-compressed body (Content-Encoding: gzip) is accepted', async () => {
        const space = await createSpace(hub);
        const compressed = gzipSync(JSON.stringify(collection(point('G1'), point('G2'))));
        const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: compressed, headers: { 'content-encoding': 'gzip' } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['G1', 'G2']);
      });

      test('a bodiless GET with Content-Encoding: gzip is answered normally', async () => {
        const space = await createSpace(hub);
        await put(space, point('Q'));
        const headers = { 'content-encoding': 'gzip', 'content-type': 'application/geo+json' };
        const response = await call(hub, 'GET', `/hub/spaces/${space}/features/Q`, { headers });
        assert.equal(response.status, 200);
        assert.equal(response.body.id, 'Q');
      });
    });

    describe('tags', () => {
      test('tags are normalized and deduplicated by their normalized form', async () => {
        const space = await createSpace(hub);
        const tags = ['Soccer', 'Münster', '~MyTag', '@Private', 'soccer', 'SOCCER', 'munster'];
        const written = onlyFeature(await put(space, point('T', { [NS]: { tags } })));
        assert.deepEqual(namespaceOf(written).tags, ['soccer', 'munster', '~MyTag', '@Private']);
        assert.deepEqual(namespaceOf(await read(space, 'T')).tags, ['soccer', 'munster', '~MyTag', '@Private']);
        const search = await call(hub, 'GET', `/hub/spaces/${space}/search?tags=M%C3%BCnster`);
        assert.deepEqual(search.body.features?.map((feature) => feature.id), ['T']);
      });

      test('a replace without tags clears them', async () => {
        const space = await createSpace(hub);
        await put(space, point('T', { [NS]: { tags: ['a'] } }));
        assert.deepEqual(namespaceOf(onlyFeature(await put(space, point('T')))).tags, []);
      });

      test('addTags and removeTags on PUT /features/{id}: the API.md 4.5 example', async () => {
        const space = await createSpace(hub);
        await put(space, point('Q1', { [NS]: { tags: ['stadium', 'soccer'] } }));
        const response = await call(hub, 'PUT', `/hub/spaces/${space}/features/Q1?addTags=baseball&removeTags=soccer`,
          { body: point('Q1', { [NS]: { tags: ['stadium', 'soccer'] } }) });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(namespaceOf(featureBody(response)).tags, ['stadium', 'baseball']);
        assert.deepEqual(namespaceOf(await read(space, 'Q1')).tags, ['stadium', 'baseball']);
      });

      test('PUT ?addTags=x without a tag list keeps the stored tags and adds x', async () => {
        const space = await createSpace(hub);
        await put(space, point('K', { [NS]: { tags: ['old'] } }));
        const written = onlyFeature(await put(space, point('K'), '?addTags=X'));
        assert.deepEqual(namespaceOf(written).tags, ['old', 'x']);
      });

      test('addTags on new features, normalized, added once', async () => {
        const space = await createSpace(hub);
        const written = onlyFeature(await put(space, point('N', { [NS]: { tags: ['soccer'] } }), '?addTags=Soccer,M%C3%BCnster&addTags=new'));
        assert.deepEqual(namespaceOf(written).tags, ['soccer', 'munster', 'new']);
      });

      test('a comma inside an addTags value, even encoded, splits it into two tags', async () => {
        const space = await createSpace(hub);
        const written = onlyFeature(await put(space, point('C'), '?addTags=a%2Cb'));
        assert.deepEqual(namespaceOf(written).tags, ['a', 'b']);
      });

      test('removeTags alone removes from the stored tags', async () => {
        const space = await createSpace(hub);
        await put(space, point('R', { [NS]: { tags: ['a', 'b', 'c'] } }));
        const written = onlyFeature(await put(space, point('R'), '?removeTags=B'));
        assert.deepEqual(namespaceOf(written).tags, ['a', 'c']);
      });
    });

    describe('single-feature routes', () => {
      test('PUT /features/{id} creates, then replaces; the path id wins over the body id; the answer is a Feature', async () => {
        const space = await createSpace(hub);
        const createdResponse = await call(hub, 'PUT', `/hub/spaces/${space}/features/p1`, { body: point('other', { a: 1 }) });
        assert.equal(createdResponse.status, 200, createdResponse.text);
        const created = featureBody(createdResponse);
        assert.equal(created.type, 'Feature');
        assert.equal(created.id, 'p1');
        assert.equal(created.properties.a, 1);
        assert.equal((await get(space, 'other')).status, 404);

        const replacedResponse = await call(hub, 'PUT', `/hub/spaces/${space}/features/p1`, { body: point(undefined, { b: 2 }) });
        assert.equal(replacedResponse.status, 200);
        const replaced = featureBody(replacedResponse);
        assert.equal(replaced.id, 'p1');
        assert.deepEqual(Object.keys(replaced.properties).sort(), [NS, 'b']);
        assert.equal(namespaceOf(replaced).createdAt, namespaceOf(created).createdAt);
        const stored = await read(space, 'p1');
        assert.equal(stored.properties.b, 2);
        assert.equal(stored.properties.a, undefined);
        assert.equal(await countOf(space), 1);
      });

      test('PUT /features/{id} with prefixId prefixes the path id', async () => {
        const space = await createSpace(hub);
        const response = await call(hub, 'PUT', `/hub/spaces/${space}/features/x?prefixId=p-`, { body: point(undefined) });
        assert.equal(response.body.id, 'p-x');
        assert.equal((await get(space, 'p-x')).status, 200);
      });

      test('PATCH /features/{id} of an unknown feature is 404 and creates nothing', async () => {
        const space = await createSpace(hub);
        const response = await call(hub, 'PATCH', `/hub/spaces/${space}/features/nope`, { body: point(undefined, { a: 1 }) });
        assert.equal(response.status, 404);
        assert.equal(response.body.code, 'featureNotFound');
        assert.equal(await countOf(space), 0);
      });

      test('PATCH /features/{id} merges into the stored feature and returns it', async () => {
        const space = await createSpace(hub);
        await put(space, point('m', { a: 1, b: { x: 1, y: 2 }, [NS]: { tags: ['t'] } }));
        const response = await call(hub, 'PATCH', `/hub/spaces/${space}/features/m`,
          { body: { type: 'Feature', properties: { a: null, b: { y: 3 }, c: 'new' } } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.type, 'Feature');
        assert.equal(response.body.id, 'm');
        const expected = { b: { x: 1, y: 3 }, c: 'new' };
        const patched = featureBody(response);
        const { [NS]: namespace, ...properties } = patched.properties;
        assert.deepEqual(properties, expected);
        assert.deepEqual(namespace?.tags, ['t']);
        assert.equal(patched.geometry?.type, 'Point');
        const { [NS]: _namespace, ...stored } = (await read(space, 'm')).properties;
        assert.deepEqual(stored, expected);
      });

      test('DELETE /features/{id} answers 204, then the feature is gone and a second delete is 404', async () => {
        const space = await createSpace(hub);
        await put(space, collection(point('d'), point('keep')));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features/d`);
        assert.equal(response.status, 204);
        assert.equal(response.text, '');
        assert.equal((await get(space, 'd')).status, 404);
        const again = await call(hub, 'DELETE', `/hub/spaces/${space}/features/d`);
        assert.equal(again.status, 404);
        assert.equal(again.body.code, 'featureNotFound');
        assert.deepEqual(await storedIds(space), ['keep']);
      });

      test('PUT /hub/spaces/{s}/features/ (trailing slash) with an id-less Feature creates it with a generated id', async () => {
        const space = await createSpace(hub);
        const response = await call(hub, 'PUT', `/hub/spaces/${space}/features/`, { body: point(undefined, { name: 'python' }) });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.type, 'FeatureCollection');
        const id = response.body.inserted?.[0] ?? '';
        assert.match(id, GENERATED_ID);
        assert.equal((await read(space, id)).properties.name, 'python');
      });
    });

    describe('DELETE /features', () => {
      test('?id=a,b&id=c deletes those ids; unknown and repeated ids are fine; 204', async () => {
        const space = await createSpace(hub);
        await put(space, collection(point('a'), point('b'), point('c'), point('d')));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=a,b&id=c&id=zzz&id=a`);
        assert.equal(response.status, 204);
        assert.equal(response.text, '');
        assert.deepEqual(await storedIds(space), ['d']);
      });

      test('with Accept: application/json the answer is a FeatureCollection listing deleted', async () => {
        const space = await createSpace(hub);
        await put(space, collection(point('a'), point('b'), point('c')));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=a&id=b,zzz`, { headers: { accept: 'application/json' } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.type, 'FeatureCollection');
        assert.deepEqual([...(response.body.deleted ?? [])].sort(), ['a', 'b']);
        assert.deepEqual(await storedIds(space), ['c']);
      });

      test('?tags=a+b,c deletes features with both a and b, or with c', async () => {
        const space = await createSpace(hub);
        const tagged = (id: string, tags: string[]) => point(id, { [NS]: { tags } });
        await put(space, collection(tagged('ab', ['a', 'b']), tagged('a', ['a']), tagged('b', ['b']), tagged('c', ['c']), tagged('none', [])));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?tags=a+b,C`);
        assert.equal(response.status, 204);
        assert.deepEqual(await storedIds(space), ['a', 'b', 'none']);
      });

      test('?tags=* deletes every feature; the JSON answer carries count', async () => {
        const space = await createSpace(hub);
        await put(space, collection(point('a', { [NS]: { tags: ['x'] } }), point('b'), point('c')));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?tags=*`, { headers: { accept: 'application/geo+json' } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.type, 'FeatureCollection');
        assert.equal(response.body.count, 3);
        assert.equal('deleted' in response.body, false);
        assert.equal(await countOf(space), 0);
      });

      test('with both id and tags the ids win', async () => {
        const space = await createSpace(hub);
        await put(space, collection(point('a'), point('t', { [NS]: { tags: ['x'] } })));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=a&tags=x`);
        assert.equal(response.status, 204);
        assert.deepEqual(await storedIds(space), ['t']);
      });

      test('neither id nor tags is 400 with the documented message', async () => {
        const space = await createSpace(hub);
        await put(space, point('a'));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features`);
        assert.equal(response.status, 400);
        assert.equal(response.body.code, 'missingDeleteSelector');
        assert.equal(response.body.errorMessage, 'At least one identifier should be provided as a query parameter.');
        assert.equal(await countOf(space), 1);
      });

      test('the body of a DELETE is ignored, whatever its content type', async () => {
        const space = await createSpace(hub);
        await put(space, collection(point('a'), point('b')));
        const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=a`, { rawBody: '""', headers: { 'content-type': 'application/json' } });
        assert.equal(response.status, 204);
        assert.deepEqual(await storedIds(space), ['b']);
      });
    });

    describe('compression of write answers', () => {
      test('a small answer is sent uncompressed even when gzip is asked for; a large one is compressed; both are the same JSON as without', async () => {
        const space = await createSpace(hub);
        const large = collection(...Array.from({ length: 400 }, (_, i) => point(`l${i}`, { text: 'x'.repeat(200) })));
        for (const [body, compressed] of [[point('small'), false], [large, true]] as const) {
          const zipped = await rawPut(hub, `/hub/spaces/${space}/features`, body, { 'accept-encoding': 'gzip' });
          assert.equal(zipped.status, 200);
          assert.equal(zipped.headers['content-encoding'], compressed ? 'gzip' : undefined);
          const answer = JSON.parse((compressed ? gunzipSync(zipped.body) : zipped.body).toString('utf8')) as { features: FeatureJson[]; updated?: string[]; inserted?: string[] };
          const plainAnswer = await rawPut(hub, `/hub/spaces/${space}/features`, body, {});
          assert.equal(plainAnswer.headers['content-encoding'], undefined);
          const again = JSON.parse(plainAnswer.body.toString('utf8')) as typeof answer;
          assert.deepEqual(again.features.map((feature) => feature.id), answer.features.map((feature) => feature.id));
          assert.deepEqual(again.updated, [...(answer.inserted ?? []), ...(answer.updated ?? [])]);
        }
      });

      test('an answer up to 64 Ki characters goes out in one piece with its length (gzipped in one piece past 1 KiB when asked); a larger one streams', async () => {
        // One piece: the reply's one write instead of a stream's chunks, and no gzip stream set up for a few hundred bytes.
        const medium = collection(...Array.from({ length: 20 }, (_, i) => point(`m${i}`, { text: 'x'.repeat(100) })));
        const large = collection(...Array.from({ length: 400 }, (_, i) => point(`l${i}`, { text: 'x'.repeat(200) })));
        for (const space of [await createSpace(hub), await createSpace(hub, { versionsToKeep: 10 })]) {
          for (const [body, count, asked, whole, gzipped] of [
            [point('small'), 1, 'gzip', true, false], [point('small'), 1, undefined, true, false],
            [medium, 20, 'gzip', true, true], [medium, 20, undefined, true, false], [large, 400, 'gzip', false, true],
          ] as const) {
            const answer = await rawPut(hub, `/hub/spaces/${space}/features`, body, asked ? { 'accept-encoding': asked } : {});
            const what = `${JSON.stringify(answer.headers)} for ${count} features, ${asked ?? 'identity'}`;
            assert.equal(answer.status, 200, what);
            assert.equal(answer.headers['content-encoding'], gzipped ? 'gzip' : undefined, what);
            assert.equal(answer.headers['transfer-encoding'], whole ? undefined : 'chunked', what);
            assert.equal(answer.headers['content-length'], whole ? String(answer.body.length) : undefined, what);
            const json = JSON.parse((gzipped ? gunzipSync(answer.body) : answer.body).toString('utf8')) as { features: FeatureJson[] };
            assert.equal(json.features.length, count, what);
          }
        }
      });
    });
  });
}

/** A PUT through node:http, which (unlike fetch) leaves the answer compressed. */
function rawPut(hub: HubProcess, path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(hub.url + path, { method: 'PUT', headers: { authorization: `Bearer ${hub.token}`, 'content-type': 'application/geo+json', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}
