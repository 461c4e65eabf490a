// Black-box tests of ETags as hashes of the answer (API.md 7): the same body gives the same tag whatever request produced it, another body another tag.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const point = (id: string, lon: number, lat: number, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties });

// web/10_550_335 spans longitudes 13.359375..13.7109375 and latitudes 52.4828..52.6964; the points keep well inside.
const TILE = '10_550_335';
const INSIDE = Array.from({ length: 10 }, (_, i) => point(`in${i}`, 13.45 + i * 0.02, 52.55 + i * 0.005, { n: i }));
/** Outside every area read below. */
const FAR = point('far', 100, 10, { n: 100 });
const BOX = 'west=13.4&south=52.5&east=13.7&north=52.65';

/** Each read below answers with the INSIDE points (or says something of the whole space). */
const READS = [
  '/features/in1', '/features?id=in1,in2', '/search?p.n=lt=50', '/iterate?limit=5', `/bbox?${BOX}`, `/tile/web/${TILE}`,
  `/tile/web/${TILE}.mvt`, '/spatial?lat=52.57&lon=13.55&radius=20000', '/count', '/statistics',
];

const etagOf = (response: TestResponse) => response.headers.get('etag') ?? '';
const withParameter = (path: string, parameter: string) => `${path}${path.includes('?') ? '&' : '?'}${parameter}`;

for (const backend of BACKENDS) {
  describe(`ETags hash the answer (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    const get = (path: string, headers: Record<string, string> = {}) => call(hub, 'GET', `/hub/spaces/${space}${path}`, { headers });

    const spaceWith = (features: object[], extra: Record<string, unknown> = {}) => createSpaceWith(hub, features, extra);

    before(async () => {
      hub = await startHub({ backend });
      space = await spaceWith([...INSIDE, FAR]);
    });
    after(async () => { await hub.stop(); });

    /** Whether the answer to `path` still carries `etag`: 304 with an empty body, or 200 with another tag. */
    async function stillTagged(path: string, etag: string): Promise<boolean> {
      const response = await get(path, { 'if-none-match': etag });
      if (response.status === 304) {
        assert.equal(response.text, '', path);
        assert.equal(etagOf(response), etag, path);
        return true;
      }
      assert.equal(response.status, 200, `${path}: ${response.text}`);
      assert.notEqual(etagOf(response), etag, path);
      return false;
    }

    test('clientId, the token in the query and the order of parameters do not change the tag; the body carries the header\'s tag', async () => {
      for (const read of READS) {
        const first = await get(read);
        assert.equal(first.status, 200, `${read}: ${first.text}`);
        const etag = etagOf(first);
        assert.match(etag, /^"[0-9a-f]{16,}"$/, read);
        if (!read.startsWith('/features/') && !read.includes('.mvt')) assert.equal(first.body.etag, etag, `${read}: the body's etag`);
        const client = await get(withParameter(read, 'clientId=cli-123'));
        assert.equal(etagOf(client), etag, `${read} with clientId`);
        const token = await call(hub, 'GET', `/hub/spaces/${space}${withParameter(read, `clientId=other&access_token=${hub.token}`)}`, { anonymous: true });
        assert.equal(etagOf(token), etag, `${read} with access_token`);
        if (!read.startsWith('/features/') && !read.includes('.mvt')) assert.equal(client.body.etag, etag, `${read}: the body's etag with clientId`);
        assert.equal((await get(withParameter(read, 'clientId=third'), { 'if-none-match': etag })).status, 304, `${read}: If-None-Match across clientIds`);
      }
      const ordered = await get(`/bbox?${BOX}&limit=7&clip=false`);
      const reordered = await get(`/bbox?clip=false&limit=7&${BOX.split('&').reverse().join('&')}`);
      assert.equal(etagOf(reordered), etagOf(ordered));
    });

    test('requests that answer the same body get the same tag: a margin or a box that adds nothing, another route', async () => {
      const tile = await get(`/tile/web/${TILE}?clip=false`);
      assert.equal(tile.body.features?.length, INSIDE.length);
      assert.equal(etagOf(await get(`/tile/web/${TILE}?margin=20&clip=false`)), etagOf(tile), 'margin=20 selects the same features');
      assert.equal(etagOf(await get(`/tile/quadkey/1202102332?clip=false`)), etagOf(tile), 'the same tile named another way');
      const mvt = await get(`/tile/web/${TILE}.mvt`);
      assert.equal(etagOf(await get(`/tile/web/${TILE}.mvt?margin=4`)), etagOf(mvt), 'a vector tile whose buffer holds nothing more');
      const box = await get(`/bbox?${BOX}`);
      assert.equal(etagOf(await get('/bbox?west=13&south=52&east=14&north=53')), etagOf(box), 'a larger box with the same features');
      assert.equal(etagOf(await get('/bbox?west=13&south=52&east=14&north=53')), etagOf(tile), 'a bbox and a tile with the same body');
      const search = await get('/search?p.n=lt=50');
      assert.equal(etagOf(await get('/search?p.n=lte=9')), etagOf(search), 'another filter that finds the same features');
    });

    test('different bodies get different tags', async () => {
      const tags = new Set<string>();
      for (const read of ['/iterate?limit=5', '/iterate?limit=6', '/search?p.n=lt=50', '/search?p.n=lt=50&force2D=true',
        '/search?p.n=lt=50&selection=p.n', '/search?p.n=lt=5', '/bbox?west=13.4&south=52.5&east=13.5&north=52.65',
        '/bbox?west=13.5&south=52.5&east=13.7&north=52.65']) {
        const etag = etagOf(await get(read));
        assert.ok(!tags.has(etag), `${read} has a tag another body had`);
        tags.add(etag);
      }
    });

    test('a write to an answered feature changes the tag; a write outside the answer leaves it, so a client keeps its copy', async () => {
      const id = await spaceWith([...INSIDE, FAR]);
      const areaReads = [`/bbox?${BOX}`, `/tile/web/${TILE}`, `/tile/web/${TILE}.mvt`, '/spatial?lat=52.57&lon=13.55&radius=20000', '/search?p.n=lt=50'];
      const read = (path: string, headers: Record<string, string> = {}) => call(hub, 'GET', `/hub/spaces/${id}${path}`, { headers });
      const tagsBefore = await Promise.all(areaReads.map(async (path) => etagOf(await read(path))));
      const count = etagOf(await read('/count'));
      const statistics = etagOf(await read('/statistics'));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/far`, { body: point('far', 101, 11, { n: 100 }) })).status, 200);
      for (const [index, path] of areaReads.entries()) {
        const answer = await read(path, { 'if-none-match': tagsBefore[index] });
        assert.equal(answer.status, 304, `${path}: the write moved a feature the answer does not hold`);
        assert.equal(answer.text, '');
      }
      assert.equal((await read('/count', { 'if-none-match': count })).status, 304, 'the count is the same');
      assert.equal((await read('/statistics', { 'if-none-match': statistics })).status, 200, 'statistics say when the content last changed');
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/in3`, { body: point('in3', 13.51, 52.565, { n: 3, changed: true }) })).status, 200);
      for (const [index, path] of areaReads.entries()) {
        const answer = await read(path, { 'if-none-match': tagsBefore[index] });
        assert.equal(answer.status, 200, `${path}: a feature of the answer changed`);
        assert.notEqual(etagOf(answer), tagsBefore[index], path);
        assert.equal((await read(path, { 'if-none-match': etagOf(answer) })).status, 304, `${path}: the new tag is current`);
      }
    });

    test('If-None-Match: the current tag is a 304 with an empty body, a stale or foreign one a 200', async () => {
      for (const read of READS) {
        const etag = etagOf(await get(read));
        assert.equal(await stillTagged(read, etag), true, read);
        assert.equal(await stillTagged(read, '"0123456789abcdef0123456789abcdef"'), false, read);
      }
    });

    test('a spatial search by a geometry in the body: another geometry is another answer', async () => {
      const post = (geometry: object, headers: Record<string, string> = {}) =>
        call(hub, 'POST', `/hub/spaces/${space}/spatial`, { body: geometry, headers });
      const near = await post({ type: 'Point', coordinates: [13.45, 52.55] });
      const elsewhere = await post({ type: 'Point', coordinates: [100, 10] });
      assert.deepEqual(elsewhere.body.features?.map((feature) => feature.id), ['far']);
      assert.notEqual(etagOf(elsewhere), etagOf(near));
      assert.equal((await post({ type: 'Point', coordinates: [100, 10] }, { 'if-none-match': etagOf(near) })).status, 200);
      assert.equal((await post({ type: 'Point', coordinates: [100, 10] }, { 'if-none-match': etagOf(elsewhere) })).status, 304);
    });

    test('a virtual space that combines the same upstreams another way answers with another tag', async () => {
      const a = await spaceWith([point('x', 1, 1, { from: 'a' })]);
      const b = await spaceWith([point('x', 1, 1, { from: 'b' })]);
      const group = await createSpace(hub, { storage: { id: 'virtualspace', params: { virtualspace: { group: [a, b] } } } });
      const first = await call(hub, 'GET', `/hub/spaces/${group}/search`);
      assert.equal(first.body.features?.length, 2);
      // A PATCH merges into the stored definition, so the old operation goes first.
      for (const storage of [null, { id: 'virtualspace', params: { virtualspace: { override: [a, b] } } }]) {
        const patch = await call(hub, 'PATCH', `/hub/spaces/${group}`, { body: { storage } });
        assert.equal(patch.status, 200, patch.text);
      }
      const second = await call(hub, 'GET', `/hub/spaces/${group}/search`, { headers: { 'if-none-match': etagOf(first) } });
      assert.equal(second.status, 200);
      assert.equal(second.body.features?.length, 1);
    });

    test('OGC items: the time of the answer is left out of the tag', async () => {
      const path = `/ogc/collections/${space}/items?limit=3`;
      const first = await call(hub, 'GET', path);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await call(hub, 'GET', path);
      assert.notEqual(first.body.timeStamp, second.body.timeStamp);
      assert.equal(etagOf(second), etagOf(first));
      assert.equal(second.body.etag, etagOf(first));
      assert.equal((await call(hub, 'GET', path, { headers: { 'if-none-match': etagOf(first) } })).status, 304);
    });

    test('an answer too large to hash before sending streams with a tag of the request and the content version', async () => {
      // About 6 MB: past the 4 MiB the hub hashes before sending.
      const filler = 'x'.repeat(1000);
      const large = await spaceWith(Array.from({ length: 6000 }, (_, i) => point(`l${i}`, (i % 360) - 179.5, 0, { filler })));
      const path = `/hub/spaces/${large}/iterate?limit=10000`;
      const first = await call(hub, 'GET', path);
      assert.equal(first.body.features?.length, 6000);
      const etag = etagOf(first);
      assert.equal(first.body.etag, etag);
      assert.equal(etagOf(await call(hub, 'GET', `${path}&clientId=cli`)), etag);
      const cached = await call(hub, 'GET', path, { headers: { 'if-none-match': etag } });
      assert.equal(cached.status, 304);
      assert.equal(cached.text, '');
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${large}/features/l0`, { body: point('l0', 0, 1, { filler }) })).status, 200);
      const changed = await call(hub, 'GET', path, { headers: { 'if-none-match': etag } });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.etag, etagOf(changed));
    });
  });
}
