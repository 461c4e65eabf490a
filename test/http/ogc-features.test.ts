// Black-box tests of OGC API Features under /ogc (issue 14): documents, collections, keyset-paged items, filters, formats, ETags, errors and Part 4 writes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { call, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, NS, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

interface Link { href: string; rel: string; type: string }

const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
const COUNT = 25;

/** Feature i: spread over the longitudes (f24 lies east of 178), name x0/x1/x2, n = i. */
const seedFeature = (i: number) => point(`f${i}`, { n: i, name: `x${i % 3}` }, [-179 + i * 14.9, -60 + i * 5]);

const ids = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);
const links = (response: TestResponse): Link[] => response.body.links as Link[];
const linkOf = (response: TestResponse, rel: string): Link | undefined => links(response).find((link) => link.rel === rel);
/** The path and query of a link, so that the test client sends it to the hub it started. */
const pathOf = (href: string): string => { const url = new URL(href); return url.pathname + url.search; };

function assertOgcError(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
  assert.equal(typeof response.body.description, 'string');
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description']);
}

/** Every item of a query, following `next` links from `path`; returns the ids and the number of pages. */
async function allItems(hub: HubProcess, path: string, between?: (page: number) => Promise<void>): Promise<{ ids: string[]; pages: number }> {
  const found: string[] = [];
  let pages = 0;
  for (let next: string | undefined = path; next !== undefined;) {
    const response = await call(hub, 'GET', next);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.numberReturned, ids(response).length);
    assert.equal(response.body.numberMatched, undefined, 'numberMatched is not given');
    found.push(...ids(response));
    pages++;
    const link = linkOf(response, 'next');
    next = link ? pathOf(link.href) : undefined;
    if (next && between) await between(pages);
  }
  return { ids: found, pages };
}

for (const backend of BACKENDS) {
  describe(`OGC API Features (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    const ownerA = `ogc-a-${randomBytes(4).toString('hex')}`;
    const ownerB = `ogc-b-${randomBytes(4).toString('hex')}`;
    let tokenA: string;
    let readOnlyA: string;
    let spaceOfB: string;
    let sharedOfB: string;
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

    before(async () => {
      hub = await startHub({ backend });
      const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'Points <b>bold</b>', description: 'seeded & escaped', owner: ownerA } });
      assert.equal(created.status, 200, created.text);
      space = created.body.id as string;
      const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...Array.from({ length: COUNT }, (_, i) => seedFeature(i))) });
      assert.equal(written.status, 200, written.text);
      spaceOfB = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'of B', owner: ownerB } })).body.id as string;
      sharedOfB = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'shared of B', owner: ownerB, shared: true } })).body.id as string;
      tokenA = (await issueToken(hub, { aid: ownerA, urm: ownerRights(ownerA) })).token;
      readOnlyA = (await issueToken(hub, { aid: ownerA, urm: { 'xyz-hub': { readFeatures: [{ owner: ownerA }] } } })).token;
    });
    after(async () => { await hub?.stop(); });

    test('landing page: self, service-desc, service-doc, conformance and data links on the request origin, no token in them', async () => {
      const response = await call(hub, 'GET', '/ogc');
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      for (const rel of ['self', 'service-desc', 'service-doc', 'conformance', 'data']) assert.ok(linkOf(response, rel), `link ${rel}`);
      assert.equal(new URL(linkOf(response, 'data')!.href).origin, hub.url);
      assert.ok(!response.text.includes(hub.token), 'a token sent in the header is not put into links');
      const api = await call(hub, 'GET', pathOf(linkOf(response, 'service-desc')!.href));
      assert.equal(api.status, 200);
      assert.equal(api.body.openapi, '3.0.3');
    });

    test('a token given as access_token never appears in a body; clients add it to the links they follow', async () => {
      for (const path of ['/ogc', '/ogc/api', '/ogc/collections', `/ogc/collections/${space}`, `/ogc/collections/${space}/items`, `/ogc/collections/${space}/queryables`]) {
        for (const f of ['json', 'html']) {
          const response = await call(hub, 'GET', `${path}?f=${f}&access_token=${tokenA}`, { anonymous: true });
          assert.equal(response.status, 200, response.text);
          assert.ok(!response.text.includes(tokenA), `${path} as ${f} holds the token`);
        }
      }
      const page = await call(hub, 'GET', `/ogc/collections/${space}/items?access_token=${tokenA}`, { anonymous: true });
      const next = pathOf(linkOf(page, 'next')!.href);
      assertOgcError(await call(hub, 'GET', next, { anonymous: true }), 401, 'missingCredentials');
      const second = await call(hub, 'GET', `${next}&access_token=${tokenA}`, { anonymous: true });
      assert.deepEqual(ids(second), Array.from({ length: 10 }, (_, i) => `f${i + 10}`));
    });

    test('conformance declares core, GeoJSON, HTML, OpenAPI and Part 4', async () => {
      const response = await call(hub, 'GET', '/ogc/conformance');
      assert.equal(response.status, 200);
      const classes = response.body.conformsTo as string[];
      for (const name of ['ogcapi-features-1/1.0/conf/core', 'ogcapi-features-1/1.0/conf/geojson', 'ogcapi-features-1/1.0/conf/html', 'ogcapi-features-4/1.0/conf/create-replace-delete']) {
        assert.ok(classes.some((uri) => uri.endsWith(name)), name);
      }
    });

    test('collections: one per space the token may read, with title, description, extent from the statistics and an items link', async () => {
      const response = await call(hub, 'GET', '/ogc/collections', bearer(tokenA));
      assert.equal(response.status, 200, response.text);
      const collections = response.body.collections as Array<{ id: string; title: string; description?: string; extent?: { spatial: { bbox: number[][]; crs: string } }; links: Link[] }>;
      const listed = collections.map((c) => c.id);
      assert.ok(listed.includes(space) && listed.includes(sharedOfB), 'own and shared spaces are listed');
      assert.ok(!listed.includes(spaceOfB), 'a space the token cannot read is not listed');
      const own = collections.find((c) => c.id === space)!;
      assert.equal(own.title, 'Points <b>bold</b>');
      assert.equal(own.description, 'seeded & escaped');
      const statistics = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.deepEqual(own.extent?.spatial.bbox[0], (statistics.body.bbox as { value: number[] }).value);
      assert.equal(own.extent?.spatial.crs, CRS84);
      assert.ok(own.links.some((link) => link.rel === 'items'));
      const one = await call(hub, 'GET', `/ogc/collections/${space}`, bearer(tokenA));
      assert.equal(one.status, 200);
      assert.equal(one.body.id, space);
      assert.deepEqual(one.body.extent, own.extent);
      assert.ok(linkOf(one, 'self') && linkOf(one, 'items'));
    });

    test('items: default limit 10, GeoJSON media type, numberReturned and a next link; limit and handle checked', async () => {
      const response = await call(hub, 'GET', `/ogc/collections/${space}/items`);
      assert.equal(response.status, 200, response.text);
      assert.match(response.headers.get('content-type') ?? '', /^application\/geo\+json/);
      assert.equal(response.body.type, 'FeatureCollection');
      assert.deepEqual(ids(response), Array.from({ length: 10 }, (_, i) => `f${i}`));
      assert.equal(response.body.numberReturned, 10);
      assert.ok(linkOf(response, 'next') && linkOf(response, 'self') && linkOf(response, 'collection'));
      const last = await call(hub, 'GET', `/ogc/collections/${space}/items?limit=10000`);
      assert.equal(last.body.numberReturned, COUNT);
      assert.equal(linkOf(last, 'next'), undefined, 'a page that is not full has no next link');
      for (const limit of ['0', '10001', 'abc', '-1', '1.5']) assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?limit=${limit}`), 400, 'ogcLimitOutOfRange');
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?handle=x1`), 400, 'invalidHandle');
    });

    test('paging over several pages with writes in between: nothing missed, nothing repeated', async () => {
      const target = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'paged' } })).body.id as string;
      await call(hub, 'PUT', `/hub/spaces/${target}/features`, { body: collection(...Array.from({ length: COUNT }, (_, i) => seedFeature(i))) });
      const { ids: found, pages } = await allItems(hub, `/ogc/collections/${target}/items?limit=7`, async (page) => {
        if (page !== 1) return;
        // f2 (already read) and f20 (not yet) change, f_new is added, f12 (not yet read) goes away.
        await call(hub, 'PATCH', `/hub/spaces/${target}/features/f2`, { body: { type: 'Feature', properties: { n: -2 } } });
        await call(hub, 'PATCH', `/hub/spaces/${target}/features/f20`, { body: { type: 'Feature', properties: { n: -20 } } });
        await call(hub, 'PUT', `/hub/spaces/${target}/features/f_new`, { body: point('f_new') });
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${target}/features/f12`)).status, 204);
      });
      const expected = [...Array.from({ length: COUNT }, (_, i) => `f${i}`).filter((id) => id !== 'f12'), 'f_new'];
      assert.deepEqual(found, expected);
      assert.equal(new Set(found).size, found.length);
      assert.ok(pages >= 4);
    });

    test('bbox (4 and 6 numbers, with CRS84 as bbox-crs) gives the ids of the hub bbox call; across the antimeridian too', async () => {
      const hubIds = ids(await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=-100&south=-50&east=60&north=40&limit=100`));
      assert.ok(hubIds.length > 3 && hubIds.length < COUNT);
      assert.deepEqual((await allItems(hub, `/ogc/collections/${space}/items?bbox=-100,-50,60,40&limit=3`)).ids, hubIds);
      assert.deepEqual(ids(await call(hub, 'GET', `/ogc/collections/${space}/items?bbox=-100,-50,-10,60,40,10&limit=100`)), hubIds);
      assert.deepEqual(ids(await call(hub, 'GET', `/ogc/collections/${space}/items?bbox=-100,-50,60,40&bbox-crs=${encodeURIComponent(CRS84)}&limit=100`)), hubIds);
      const across = ids(await call(hub, 'GET', `/ogc/collections/${space}/items?bbox=170,-90,-170,90&limit=100`));
      assert.deepEqual(across, ['f0', 'f24']);
    });

    test('bad bbox and crs: 400 in the OGC exception shape', async () => {
      for (const bbox of ['1,2,3', '1,2,3,4,5', 'a,2,3,4', '0,95,1,96', '0,10,1,5', '-181,0,0,1', '']) {
        assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?bbox=${bbox}`), 400, 'ogcInvalidBbox');
      }
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?bbox=0,0,1,1&bbox=0,0,2,2`), 400, 'ogcInvalidBbox');
      const epsg = encodeURIComponent('http://www.opengis.net/def/crs/EPSG/0/4326');
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?bbox=0,0,1,1&bbox-crs=${epsg}`), 400, 'ogcUnsupportedCrs');
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?crs=${epsg}`), 400, 'ogcUnsupportedCrs');
    });

    test('queryables list the properties; name=value filters give the ids of the hub search', async () => {
      const queryables = await call(hub, 'GET', `/ogc/collections/${space}/queryables`);
      assert.equal(queryables.status, 200, queryables.text);
      const properties = queryables.body.properties as Record<string, { type?: string }>;
      assert.ok('name' in properties && 'n' in properties);
      const hubIds = ids(await call(hub, 'GET', `/hub/spaces/${space}/search?p.name=x1&limit=100`));
      assert.equal(hubIds.length, 8);
      assert.deepEqual(ids(await call(hub, 'GET', `/ogc/collections/${space}/items?name=x1&limit=100`)), hubIds);
      assert.deepEqual(ids(await call(hub, 'GET', `/ogc/collections/${space}/items?name=x1&n=4&limit=100`)), ['f4']);
      assert.deepEqual(ids(await call(hub, 'GET', `/ogc/collections/${space}/items?name=nothing`)), []);
      const paged = await allItems(hub, `/ogc/collections/${space}/items?name=x1&limit=3`);
      assert.deepEqual(paged.ids, hubIds);
    });

    test('datetime compares updatedAt: instants, closed and open intervals; bad values are 400', async () => {
      const target = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'times' } })).body.id as string;
      await call(hub, 'PUT', `/hub/spaces/${target}/features`, { body: collection(point('early')) });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await call(hub, 'PUT', `/hub/spaces/${target}/features`, { body: collection(point('late')) });
      const all = await call(hub, 'GET', `/hub/spaces/${target}/iterate`);
      const at = (id: string) => (all.body.features!.find((f) => f.id === id)!.properties[NS] as { updatedAt: number }).updatedAt;
      const iso = (ms: number) => new Date(ms).toISOString();
      const items = async (datetime: string) => ids(await call(hub, 'GET', `/ogc/collections/${target}/items?datetime=${encodeURIComponent(datetime)}`));
      assert.deepEqual(await items(iso(at('early'))), ['early']);
      assert.deepEqual(await items(`../${iso(at('early'))}`), ['early']);
      assert.deepEqual(await items(`${iso(at('late'))}/..`), ['late']);
      assert.deepEqual(await items(`${iso(at('early'))}/${iso(at('late'))}`), ['early', 'late']);
      assert.deepEqual(await items(`${iso(at('early') + 1)}/`), ['late']);
      for (const bad of ['yesterday', '2024-01-01', '../..', '2024-01-02T00:00:00Z/2024-01-01T00:00:00Z', 'a/b/c']) {
        assertOgcError(await call(hub, 'GET', `/ogc/collections/${target}/items?datetime=${encodeURIComponent(bad)}`), 400, 'ogcInvalidDatetime');
      }
    });

    test('f=html and a browser Accept give plain HTML pages with every value escaped; f=json wins over Accept; a bad f is 400', async () => {
      const browser = { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } };
      for (const path of ['/ogc', '/ogc/conformance', '/ogc/api', '/ogc/collections', `/ogc/collections/${space}`, `/ogc/collections/${space}/queryables`,
        `/ogc/collections/${space}/items`, `/ogc/collections/${space}/items/f1`]) {
        for (const [url, options] of [[`${path}${path.includes('?') ? '&' : '?'}f=html`, {}], [path, browser]] as const) {
          const response = await call(hub, 'GET', url, options);
          assert.equal(response.status, 200, `${url}: ${response.text}`);
          assert.match(response.headers.get('content-type') ?? '', /^text\/html/, url);
          assert.ok(response.text.startsWith('<!DOCTYPE html>'), url);
          assert.ok(!response.text.includes('<b>bold'), `${url}: values are escaped`);
        }
      }
      const collections = await call(hub, 'GET', '/ogc/collections?f=html');
      assert.ok(collections.text.includes('Points &lt;b&gt;bold&lt;/b&gt;'));
      const items = await call(hub, 'GET', `/ogc/collections/${space}/items?f=html&limit=2`);
      assert.ok(items.text.includes('f1') && !items.text.includes('>f2<'));
      const json = await call(hub, 'GET', '/ogc?f=json', browser);
      assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
      assertOgcError(await call(hub, 'GET', '/ogc?f=xml'), 400, 'ogcInvalidFormat');
    });

    test('ETags and 304 on documents, item pages and items; the HTML page has its own tag', async () => {
      for (const path of ['/ogc', '/ogc/collections', `/ogc/collections/${space}`, `/ogc/collections/${space}/items?limit=5`, `/ogc/collections/${space}/items/f1`]) {
        const first = await call(hub, 'GET', path);
        const etag = first.headers.get('etag');
        assert.ok(etag, path);
        const again = await call(hub, 'GET', path, { headers: { 'if-none-match': etag } });
        assert.equal(again.status, 304, path);
        const html = await call(hub, 'GET', path, { headers: { 'if-none-match': etag, accept: 'text/html' } });
        assert.equal(html.status, 200, `${path}: the HTML page is not the JSON one`);
      }
      const path = `/ogc/collections/${space}/items?limit=5`;
      const etag = (await call(hub, 'GET', path)).headers.get('etag')!;
      await call(hub, 'PATCH', `/hub/spaces/${space}/features/f1`, { body: { type: 'Feature', properties: { touched: true } } });
      assert.equal((await call(hub, 'GET', path, { headers: { 'if-none-match': etag } })).status, 200, 'a write changes the tag');
    });

    test('one item; unknown items, collections and paths, and missing or bad credentials answer in the OGC exception shape', async () => {
      const item = await call(hub, 'GET', `/ogc/collections/${space}/items/f3`);
      assert.equal(item.status, 200);
      assert.match(item.headers.get('content-type') ?? '', /^application\/geo\+json/);
      assert.equal(item.body.id, 'f3');
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items/nothing`), 404, 'featureNotFound');
      assertOgcError(await call(hub, 'GET', '/ogc/collections/no-such-space/items'), 404, 'spaceOfFeaturesNotFound');
      assertOgcError(await call(hub, 'GET', '/ogc/collections/no-such-space'), 404, 'spaceOfFeaturesNotFound');
      assertOgcError(await call(hub, 'GET', '/ogc/nothing/here'), 404, 'routeNotFound');
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items`, { anonymous: true }), 401, 'missingCredentials');
      assertOgcError(await call(hub, 'GET', '/ogc/collections?access_token=bad-token', { anonymous: true }), 401, 'invalidCredentials');
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${spaceOfB}/items`, bearer(tokenA)), 403, 'insufficientRights');
      assertOgcError(await call(hub, 'DELETE', '/ogc/collections'), 405, 'methodNotAllowed');
      const hubError = await call(hub, 'GET', '/hub/spaces/no-such-space');
      assert.equal(hubError.body.type, 'ErrorResponse', 'the hub keeps its own error shape');
    });

    test('Part 4: create, replace, update and delete one item through the write pipeline, with the same rights', async () => {
      const target = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'writes', owner: ownerA } })).body.id as string;
      const created = await call(hub, 'POST', `/ogc/collections/${target}/items`, { ...bearer(tokenA), body: point(undefined, { a: 1 }) });
      assert.equal(created.status, 201, created.text);
      const location = created.headers.get('location')!;
      assert.equal(location, `${hub.url}/ogc/collections/${target}/items/${created.body.id as string}`);
      assert.equal((await call(hub, 'GET', pathOf(location))).body.id, created.body.id);
      assertOgcError(await call(hub, 'POST', `/ogc/collections/${target}/items`, { ...bearer(tokenA), body: point(created.body.id as string) }), 409, 'featureExists');
      assertOgcError(await call(hub, 'POST', `/ogc/collections/${target}/items`, { ...bearer(tokenA), rawBody: '{"type":' }), 400, 'invalidJsonFeatures');

      const replaced = await call(hub, 'PUT', `/ogc/collections/${target}/items/w1`, { ...bearer(tokenA), body: point('w1', { b: 2 }) });
      assert.equal(replaced.status, 200, replaced.text);
      const updated = await call(hub, 'PATCH', `/ogc/collections/${target}/items/w1`, { ...bearer(tokenA), body: { type: 'Feature', properties: { c: 3 } } });
      assert.equal(updated.status, 200, updated.text);
      const read = await call(hub, 'GET', `/ogc/collections/${target}/items/w1`);
      assert.equal(read.body.properties && (read.body.properties as Record<string, unknown>).b, 2);
      assert.equal((read.body.properties as Record<string, unknown>).c, 3);
      assertOgcError(await call(hub, 'PATCH', `/ogc/collections/${target}/items/missing`, { ...bearer(tokenA), body: { type: 'Feature', properties: {} } }), 404, 'featureNotFound');

      const before = (await call(hub, 'GET', `/hub/spaces/${target}/iterate`)).text;
      assertOgcError(await call(hub, 'POST', `/ogc/collections/${target}/items`, { ...bearer(readOnlyA), body: point('ro') }), 403, 'insufficientRights');
      assertOgcError(await call(hub, 'PUT', `/ogc/collections/${target}/items/w1`, { ...bearer(readOnlyA), body: point('w1') }), 403, 'insufficientRights');
      assertOgcError(await call(hub, 'DELETE', `/ogc/collections/${target}/items/w1`, bearer(readOnlyA)), 403, 'insufficientRights');
      assert.equal((await call(hub, 'GET', `/hub/spaces/${target}/iterate`)).text, before, 'refused writes change nothing');

      assert.equal((await call(hub, 'DELETE', `/ogc/collections/${target}/items/w1`, bearer(tokenA))).status, 204);
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${target}/items/w1`), 404, 'featureNotFound');
      assertOgcError(await call(hub, 'DELETE', `/ogc/collections/${target}/items/w1`, bearer(tokenA)), 404, 'featureNotFound');
    });

    test('items in the OGC form: no namespace, createdAt/updatedAt/tags as flat properties (a feature\'s own win), 2D unless a z is not zero; queryables say so', async () => {
      const target = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'form' } })).body.id as string;
      const features = [point('flat', { a: 1 }, [1, 2]), point('own', { tags: 'mine', createdAt: 5 }, [3, 4, 0]), point('high', {}, [5, 6, 7])];
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${target}/features?addTags=t1,t2`, { body: collection(...features) })).status, 200);
      const hubFeatures = (await call(hub, 'GET', `/hub/spaces/${target}/iterate`)).body.features ?? [];
      const times = namespaceOf(hubFeatures[0]);
      const items = (await call(hub, 'GET', `/ogc/collections/${target}/items`)).body.features ?? [];
      assert.deepEqual(items.map((item) => [item.id, item.geometry, item.properties]), [
        ['flat', { type: 'Point', coordinates: [1, 2] }, { a: 1, createdAt: new Date(times.createdAt).toISOString(), updatedAt: new Date(times.updatedAt).toISOString(), tags: ['t1', 't2'] }],
        ['own', { type: 'Point', coordinates: [3, 4] }, { tags: 'mine', createdAt: 5, updatedAt: new Date(times.updatedAt).toISOString() }],
        ['high', { type: 'Point', coordinates: [5, 6, 7] }, { createdAt: new Date(times.createdAt).toISOString(), updatedAt: new Date(times.updatedAt).toISOString(), tags: ['t1', 't2'] }],
      ]);
      assert.deepEqual((await call(hub, 'GET', `/ogc/collections/${target}/items/flat`)).body, items[0]);
      assert.deepEqual(hubFeatures[0].geometry, { type: 'Point', coordinates: [1, 2, 0] }, 'the XYZ API keeps its 3D positions');
      // Here a feature has its own `tags`, a string: the statistics find it, and it wins.
      assert.deepEqual(((await call(hub, 'GET', `/ogc/collections/${target}/queryables`)).body.properties as Record<string, unknown>).tags, { title: 'tags', type: 'string' });
      const queryables = (await call(hub, 'GET', `/ogc/collections/${space}/queryables`)).body.properties as Record<string, unknown>;
      assert.deepEqual(queryables.tags, { title: 'tags', type: 'array', items: { type: 'string' } });
      assert.deepEqual(queryables.updatedAt, { title: 'updatedAt', type: 'string', format: 'date-time' });
      assertOgcError(await call(hub, 'GET', `/ogc/collections/${space}/items?filter=${encodeURIComponent("tags = 't1'")}`), 400, 'ogcInvalidFilter');
    });

    test('Part 4 writes ignore a namespace; createdAt and updatedAt are the hub\'s; a tags list sets the tags; an item read and written back is unchanged', async () => {
      const target = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'form writes', owner: ownerA } })).body.id as string;
      const sent = point('q1', { name: 'x', createdAt: '2000-01-01T00:00:00Z', updatedAt: 'then', tags: ['a', 'b'], '@ns:com:here:xyz': { tags: ['hidden'], uuid: 'bogus' } }, [1, 2]);
      const created = await call(hub, 'POST', `/ogc/collections/${target}/items`, { ...bearer(tokenA), body: sent });
      assert.equal(created.status, 201, created.text);
      const stored = (await call(hub, 'GET', `/hub/spaces/${target}/features/q1`)).body as unknown as FeatureJson;
      assert.deepEqual(Object.keys(stored.properties ?? {}).sort(), ['@ns:com:here:xyz', 'name']);
      assert.deepEqual(namespaceOf(stored).tags, ['a', 'b']);
      assert.notEqual((created.body.properties as Record<string, unknown>).createdAt, '2000-01-01T00:00:00Z');
      assert.deepEqual((created.body.properties as Record<string, unknown>).tags, ['a', 'b']);
      const read = (await call(hub, 'GET', `/ogc/collections/${target}/items/q1`)).body;
      assert.equal((await call(hub, 'PUT', `/ogc/collections/${target}/items/q1`, { ...bearer(tokenA), body: read })).status, 200);
      const again = (await call(hub, 'GET', `/hub/spaces/${target}/features/q1`)).body as unknown as FeatureJson;
      assert.deepEqual({ ...again.properties, '@ns:com:here:xyz': undefined }, { ...stored.properties, '@ns:com:here:xyz': undefined });
      assert.deepEqual(namespaceOf(again).tags, ['a', 'b']);
      const patched = await call(hub, 'PATCH', `/ogc/collections/${target}/items/q1`, { ...bearer(tokenA), body: { type: 'Feature', properties: { tags: ['c'], updatedAt: 'x' } } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(namespaceOf((await call(hub, 'GET', `/hub/spaces/${target}/features/q1`)).body as unknown as FeatureJson).tags, ['c']);
    });
  });
}
