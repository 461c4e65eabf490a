// JSON-FG on OGC items and one item (issue 26, section 3): the draft's schema, time from updatedAt, paging, filters and negotiation on both engines; GDAL reads the pages back.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type Body, call, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { plainFeatures } from '../helpers/transfer-cli.js';

const run = promisify(execFile);
const FG = 'application/vnd.ogc.fg+json';
const CORE = 'http://www.opengis.net/spec/json-fg-1/0.2/conf/core';
const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
/** Fastify adds the charset to a JSON type it does not know; either way the body is UTF-8 JSON. */
const isFg = (response: TestResponse) => /^application\/vnd\.ogc\.fg\+json(; charset=utf-8)?$/.test(response.headers.get('content-type') ?? '');
const GDAL_MISSING = spawnSync('ogr2ogr', ['--version']).error !== undefined;
/** GDAL has a JSONFG driver from 3.8 on; Debian 12's 3.6 has none, and reads the pages as GeoJSON, whose superset they are. */
const JSONFG_DRIVER = !GDAL_MISSING && /JSONFG/.test(spawnSync('ogrinfo', ['--formats']).stdout?.toString() ?? '');

const validate = new Ajv2020({ allErrors: true }).compile(JSON.parse(readFileSync(join(ROOT, 'test/fixtures/jsonfg-0.2.schema.json'), 'utf8')) as object);
const fixtureText = readFileSync(join(ROOT, 'test/fixtures/transfer-shapes.geo.json'), 'utf8').replace(/^\uFEFF/, '');

function assertJsonFg(body: unknown, context: string): void {
  assert.ok(validate(body), `${context}: ${JSON.stringify(validate.errors?.slice(0, 5))}`);
}

const linkOf = (body: Body, rel: string, type?: string) =>
  (body.links as Array<{ rel: string; href: string; type?: string }> | undefined)?.find((link) => link.rel === rel && (type === undefined || link.type === type));
const pathOf = (href: string) => new URL(href).pathname + new URL(href).search;

/**
 * A feature without the members JSON-FG gives: a JSON-FG feature as GeoJSON, and a GeoJSON feature without foreign
 * members of those names (the JSON-FG answer holds the hub's instead).
 */
function asGeoJson(feature: FeatureJson): FeatureJson {
  const { time: _time, place: _place, featureType: _type, coordRefSys: _crs, conformsTo: _conforms, ...rest } = feature;
  return rest as FeatureJson;
}
const plainPage = (page: TestResponse) => (page.body.features ?? []).map(asGeoJson);

describe('JSON-FG items', () => {
  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      let space: string;
      let directory: string;
      /** The namespace's updatedAt of each feature, as /hub reads it. */
      const updatedAt = new Map<string, number>();

      before(async () => {
        hub = await startHub({ backend });
        directory = mkdtempSync(join(tmpdir(), 'ogc-jsonfg-'));
        space = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'jsonfg' } })).body.id as string;
        const shapes = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: fixtureText, headers: { 'content-type': 'application/geo+json' } });
        assert.equal(shapes.status, 200, shapes.text);
        // Written apart, so that they have other times; the last holds an updatedAt property and JSON-FG members of its own.
        const own = [
          { type: 'Feature', id: 'own-1', geometry: { type: 'Point', coordinates: [1, 2] }, properties: { rank: 1 } },
          { type: 'Feature', id: 'own-2', geometry: null, properties: { rank: 2 } },
          { type: 'Feature', id: 'own-3', geometry: { type: 'Point', coordinates: [3, 4, 5] }, properties: { rank: 3, updatedAt: 'its own' },
            place: { type: 'Point', coordinates: [7, 7] }, time: { date: '1999-01-01' }, featureType: 'other' },
        ];
        for (const feature of own) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [feature] } });
          assert.equal(written.status, 200, written.text);
        }
        const all = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1000`);
        for (const feature of all.body.features ?? []) updatedAt.set(feature.id, feature.properties['@ns:com:here:xyz']?.updatedAt ?? NaN);
      });
      after(async () => {
        await hub?.stop();
        if (directory) rmSync(directory, { recursive: true, force: true });
      });

      /** Every page of a walk by next links, and how each page came. */
      async function walk(path: string, headers: Record<string, string> = {}): Promise<TestResponse[]> {
        const pages: TestResponse[] = [];
        for (let next: string | undefined = path; next !== undefined && pages.length < 100;) {
          const response = await call(hub, 'GET', next, { headers });
          assert.equal(response.status, 200, response.text);
          pages.push(response);
          const link = linkOf(response.body, 'next');
          next = link ? pathOf(link.href) : undefined;
        }
        return pages;
      }

      test('f=jsonfg pages: the draft schema, the root members, time from updatedAt, place null, and the GeoJSON pages\' features', async () => {
        const pages = await walk(`/ogc/collections/${space}/items?limit=4&f=jsonfg`);
        const geojson = await walk(`/ogc/collections/${space}/items?limit=4`);
        assert.equal(pages.length, geojson.length);
        assert.ok(pages.length >= 3, `${pages.length} pages`);
        for (const [index, page] of pages.entries()) {
          assert.ok(isFg(page), String(page.headers.get('content-type')));
          assertJsonFg(page.body, `page ${index}`);
          assert.deepEqual(page.body.conformsTo, [CORE]);
          assert.equal(page.body.featureType, space);
          assert.equal(page.body.coordRefSys, CRS84);
          assert.equal(linkOf(page.body, 'self')?.type, FG);
          assert.ok(linkOf(page.body, 'alternate', 'application/geo+json'));
          const next = linkOf(page.body, 'next');
          if (next) assert.equal(new URL(next.href).searchParams.get('f'), 'jsonfg');
          // Each feature is the GeoJSON page's, with time and place: the same bytes but for those two members.
          assert.deepEqual(page.body.features?.map(asGeoJson), plainPage(geojson[index]));
          for (const feature of page.body.features ?? []) {
            assert.equal(feature.place, null, feature.id);
            assert.deepEqual(feature.time, { timestamp: new Date(updatedAt.get(feature.id) ?? NaN).toISOString() }, feature.id);
          }
          // No member twice: a feature's own `place`, `time` or `featureType` is not copied beside the hub's.
          for (const member of ['"place":', '"time":', '"featureType":']) {
            assert.equal(page.text.split(member).length - 1, member === '"featureType":' ? 1 : page.body.features?.length, `${member} in ${page.text}`);
          }
        }
        const own = pages.flatMap((page) => page.body.features ?? []).find((feature) => feature.id === 'own-3');
        assert.equal(own?.properties.updatedAt, 'its own', 'a property of that name stays the property');
        const stored = geojson.flatMap((page) => page.body.features ?? []).find((feature) => feature.id === 'own-3');
        assert.deepEqual(stored?.place, { type: 'Point', coordinates: [7, 7] }, 'GeoJSON keeps the foreign member the JSON-FG answer replaces');
        assert.ok(pages.some((page) => page.body.features?.some((feature) => feature.geometry === null)), 'a feature without geometry');
      });

      test('Accept chooses JSON-FG or GeoJSON by which it names first; f wins', async () => {
        const items = `/ogc/collections/${space}/items?limit=2`;
        const fg = await call(hub, 'GET', items, { headers: { accept: `${FG}, application/geo+json;q=0.9` } });
        assert.ok(isFg(fg), String(fg.headers.get('content-type')));
        assertJsonFg(fg.body, 'by Accept');
        const next = linkOf(fg.body, 'next');
        assert.equal(next && new URL(next.href).searchParams.get('f'), 'jsonfg', 'the next page stays JSON-FG without the header');
        const geo = await call(hub, 'GET', items, { headers: { accept: `application/geo+json, ${FG}` } });
        assert.equal(geo.headers.get('content-type'), 'application/geo+json');
        const forced = await call(hub, 'GET', `${items}&f=json`, { headers: { accept: FG } });
        assert.equal(forced.headers.get('content-type'), 'application/geo+json');
        const item = await call(hub, 'GET', `/ogc/collections/${space}/items/own-1`, { headers: { accept: FG } });
        assert.ok(isFg(item), String(item.headers.get('content-type')));
      });

      test('one item: a JSON-FG document with its own ETag, 304 on it', async () => {
        const path = `/ogc/collections/${space}/items/own-1?f=jsonfg`;
        const item = await call(hub, 'GET', path);
        assert.equal(item.status, 200, item.text);
        assert.ok(isFg(item), String(item.headers.get('content-type')));
        assertJsonFg(item.body, 'one item');
        assert.equal(item.body.featureType, space);
        assert.deepEqual(item.body.conformsTo, [CORE]);
        assert.deepEqual(item.body.time, { timestamp: new Date(updatedAt.get('own-1') ?? NaN).toISOString() });
        const plain = await call(hub, 'GET', `/ogc/collections/${space}/items/own-1`);
        const { conformsTo: _c, featureType: _t, coordRefSys: _s, ...feature } = item.body;
        assert.deepEqual(asGeoJson(feature as FeatureJson), asGeoJson(plain.body as FeatureJson));
        const etag = item.headers.get('etag');
        assert.ok(etag && etag !== plain.headers.get('etag'), 'the ETag tells the formats apart');
        const again = await call(hub, 'GET', path, { headers: { 'if-none-match': etag } });
        assert.equal(again.status, 304);
        const wrong = await call(hub, 'GET', `/ogc/collections/${space}/items/own-1?f=csv`);
        assert.equal(wrong.status, 400, wrong.text);
        assert.equal(wrong.body.code, 'ogcInvalidFormat');
        assert.match(String(wrong.body.description), /json, html, jsonfg/);
        const missing = await call(hub, 'GET', `/ogc/collections/${space}/items/nothing?f=jsonfg`);
        assert.equal(missing.status, 404, missing.text);
      });

      test('filters, bbox, sortby and datetime apply as on GeoJSON; datetime selects on the instant time shows', async () => {
        for (const query of ['filter=rank>1', 'bbox=0,0,5,5', 'sortby=-rank&limit=2', 'filter=rank>=1&sortby=rank&limit=1']) {
          const fg = await walk(`/ogc/collections/${space}/items?${query}&f=jsonfg`);
          const geo = await walk(`/ogc/collections/${space}/items?${query}`);
          for (const page of fg) assertJsonFg(page.body, query);
          assert.deepEqual(fg.flatMap((page) => page.body.features ?? []).map(asGeoJson), geo.flatMap(plainPage), query);
        }
        const instant = new Date(updatedAt.get('own-2') ?? NaN).toISOString();
        const [at] = await walk(`/ogc/collections/${space}/items?datetime=${instant}&f=jsonfg`);
        assert.deepEqual(at.body.features?.map((feature) => feature.id), ['own-2']);
        assert.deepEqual(at.body.features?.[0].time, { timestamp: instant });
      });

      test('declared in the conformance classes and linked from the collection', async () => {
        const conformance = await call(hub, 'GET', '/ogc/conformance');
        assert.ok((conformance.body.conformsTo as string[]).includes(CORE));
        const collection = await call(hub, 'GET', `/ogc/collections/${space}`);
        const items = linkOf(collection.body, 'items', FG);
        assert.ok(items, collection.text);
        const page = await call(hub, 'GET', pathOf(items.href));
        assert.ok(isFg(page), String(page.headers.get('content-type')));
        const other = await call(hub, 'GET', `/ogc/collections/${space}/items?f=jsonfg`, { headers: { authorization: 'Bearer nobody' } });
        assert.equal(other.status, 401, other.text);
      });

      test('GDAL reads each page back: ids, properties and geometries as the GeoJSON pages hold them', { skip: GDAL_MISSING ? 'ogr2ogr not found: install gdal-bin' : false }, async () => {
        const pages = await walk(`/ogc/collections/${space}/items?limit=5&f=jsonfg`);
        const geojson = await walk(`/ogc/collections/${space}/items?limit=5`);
        const hubMembers = ({ createdAt, updatedAt, tags, ...own }: Record<string, unknown>) => ({ own, times: [createdAt, updatedAt].map((time) => typeof time), tags });
        for (const [index, page] of pages.entries()) {
          const stem = join(directory, `page-${backend}-${index}`);
          writeFileSync(`${stem}.json`, page.text);
          await run('ogr2ogr', ['-f', 'GeoJSON', `${stem}.out.json`, JSONFG_DRIVER ? `JSONFG:${stem}.json` : `${stem}.json`]);
          const read = plainFeatures(JSON.parse(readFileSync(`${stem}.out.json`, 'utf8')) as Parameters<typeof plainFeatures>[0]);
          const expected = plainFeatures(geojson[index].body as Parameters<typeof plainFeatures>[0]);
          assert.deepEqual([...read.keys()], [...expected.keys()]);
          for (const [id, want] of expected) {
            const got = read.get(id);
            // The own-3 feature's "updatedAt" is its own text, which GDAL keeps as text too.
            assert.deepEqual(hubMembers(got?.properties ?? {}).own, hubMembers(want.properties).own, id);
            assert.deepEqual(hubMembers(got?.properties ?? {}).tags, want.properties.tags, id);
            assert.deepEqual(hubMembers(got?.properties ?? {}).times, ['string', 'string'], id);
            assert.deepEqual(got?.geometry, want.geometry, id);
          }
        }
      });
    });
  }
});
