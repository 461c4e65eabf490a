// Items as FlatGeobuf, CSV and GeoJSON text sequences (issue 26, section 3): GDAL reads each page back with the features written, on both engines; pages link by the Link header.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { assertSameFeatures, type PlainFeature, plainFeatures } from '../helpers/transfer-cli.js';

const run = promisify(execFile);
const GDAL_MISSING = spawnSync('ogr2ogr', ['--version']).error !== undefined;

/** `f` value, media type, file extension, and whether GDAL gives back text only (CSV). */
const FORMATS = [
  { f: 'jsonseq', type: 'application/geo+json-seq', extension: 'geojsons', textOnly: false },
  { f: 'csv', type: 'text/csv; charset=utf-8', extension: 'csv', textOnly: true },
  { f: 'fgb', type: 'application/flatgeobuf', extension: 'fgb', textOnly: false },
];
const FIXTURES = ['chicago_parks.geo.json', 'transfer-shapes.geo.json'];

const fixtureText = (name: string) => readFileSync(join(ROOT, 'test/fixtures', name), 'utf8').replace(/^\uFEFF/, '');
const fixture = (name: string) => plainFeatures(JSON.parse(fixtureText(name)) as Parameters<typeof plainFeatures>[0]);

/** The `next` link of a `Link` header, as a path on the hub. */
function nextOf(link: string | null): string | undefined {
  const href = /<([^>]+)>; rel="next"/.exec(link ?? '')?.[1];
  return href === undefined ? undefined : new URL(href).pathname + new URL(href).search;
}

describe('OGC items in file formats, read back by GDAL', { skip: GDAL_MISSING ? 'ogr2ogr not found: install gdal-bin' : false }, () => {
  for (const backend of BACKENDS) {
    describe(backend, { concurrency: 3 }, () => {
      let hub: HubProcess;
      let directory: string;
      const spaces = new Map<string, string>();

      /** Writes an answer to a file and has ogr2ogr turn it into GeoJSON: the features as GDAL reads them. */
      async function gdalRead(body: ArrayBuffer, extension: string): Promise<Map<string, PlainFeature>> {
        const stem = join(directory, Math.random().toString(36).slice(2));
        writeFileSync(`${stem}.${extension}`, Buffer.from(body));
        await run('ogr2ogr', ['-f', 'GeoJSON', `${stem}.json`, `${stem}.${extension}`, ...(extension === 'csv' ? ['-oo', 'KEEP_GEOM_COLUMNS=NO'] : [])]);
        return plainFeatures(JSON.parse(readFileSync(`${stem}.json`, 'utf8')) as Parameters<typeof plainFeatures>[0]);
      }

      /**
       * An OGC answer read back, as the hub stores it: its createdAt, updatedAt and tags columns checked and left out,
       * its positions given the z = 0 the OGC form leaves out (docs/ogc-output.md).
       */
      async function ogcRead(body: ArrayBuffer, extension: string): Promise<Map<string, PlainFeature>> {
        const read = await gdalRead(body, extension);
        const to3D = (coordinates: unknown): unknown => (Array.isArray(coordinates) && typeof coordinates[0] === 'number'
          ? (coordinates.length === 2 ? [...coordinates, 0] : coordinates) : Array.isArray(coordinates) ? coordinates.map(to3D) : coordinates);
        for (const feature of read.values()) {
          const { createdAt, updatedAt, tags, ...own } = feature.properties;
          assert.ok(typeof createdAt === 'string' && typeof updatedAt === 'string' && tags !== undefined, `the hub's columns: ${JSON.stringify(feature.properties)}`);
          feature.properties = own;
          if (feature.geometry) feature.geometry = { ...feature.geometry, coordinates: to3D(feature.geometry.coordinates) as typeof feature.geometry.coordinates };
        }
        return read;
      }

      const get = (path: string, headers: Record<string, string> = {}) => fetch(`${hub.url}${path}`, { headers: { authorization: `Bearer ${hub.token}`, ...headers } });

      before(async () => {
        hub = await startHub({ backend });
        directory = mkdtempSync(join(tmpdir(), 'ogc-formats-'));
        for (const name of FIXTURES) {
          const space = (await call(hub, 'POST', '/hub/spaces', { body: { title: name } })).body.id as string;
          const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: fixtureText(name), headers: { 'content-type': 'application/geo+json' } });
          assert.equal(written.status, 200, written.text);
          spaces.set(name, space);
        }
      });
      after(async () => {
        await hub?.stop();
        if (directory) rmSync(directory, { recursive: true, force: true });
      });

      for (const format of FORMATS) {
        test(`f=${format.f}: every page by the Link header's next, read back by GDAL, holds the features written`, async () => {
          for (const name of FIXTURES) {
            const read = new Map<string, PlainFeature>();
            let pages = 0;
            let path: string | undefined = `/ogc/collections/${spaces.get(name)}/items?limit=4&f=${format.f}`;
            while (path) {
              const response = await get(path);
              assert.equal(response.status, 200, await response.clone().text());
              assert.equal(response.headers.get('content-type'), format.type);
              for (const [id, feature] of await ogcRead(await response.arrayBuffer(), format.extension)) read.set(id, feature);
              pages++;
              path = nextOf(response.headers.get('link'));
            }
            assert.equal(pages, Math.ceil(fixture(name).size / 4) + (fixture(name).size % 4 === 0 ? 1 : 0));
            assertSameFeatures(read, fixture(name), { textOnly: format.textOnly });
          }
        });
      }

      test('Accept picks the format by its media type; a sorted sequence streams in its order, and links its next page', async () => {
        const space = spaces.get('chicago_parks.geo.json')!;
        for (const format of FORMATS) {
          const response = await get(`/ogc/collections/${space}/items`, { accept: `${format.type.split(';')[0]}, application/json;q=0.5` });
          assert.equal(response.status, 200);
          assert.equal(response.headers.get('content-type'), format.type);
          assert.equal((await gdalRead(await response.arrayBuffer(), format.extension)).size, 9);
        }
        const sorted = await get(`/ogc/collections/${space}/items?sortby=-id&limit=5&f=jsonseq`);
        const text = await sorted.text();
        assert.ok(text.startsWith('\u001e{') && text.endsWith('}\n'), 'RFC 8142 records');
        const ids = text.split('\u001e').filter(Boolean).map((record) => (JSON.parse(record) as { id: string }).id);
        assert.deepEqual(ids, [...fixture('chicago_parks.geo.json').keys()].sort().reverse().slice(0, 5));
        const next = nextOf(sorted.headers.get('link'));
        assert.ok(next?.includes('f=jsonseq'), String(sorted.headers.get('link')));
        const rest = (await (await get(next!)).text()).split('\u001e').filter(Boolean).map((record) => (JSON.parse(record) as { id: string }).id);
        assert.deepEqual([...ids, ...rest], [...fixture('chicago_parks.geo.json').keys()].sort().reverse());
        // The hub's namespace stays in the hub, as in an export.
        assert.ok(!text.includes('@ns:com:here:xyz'));
      });

      test('iterate by Accept pages by the Link header, and search answers in the format asked for', async () => {
        for (const format of FORMATS) {
          // The shapes (every geometry type, two pages): the pages are the items test's, only their links differ.
          for (const name of FIXTURES.slice(1)) {
            const read = new Map<string, PlainFeature>();
            let path: string | undefined = `/hub/spaces/${spaces.get(name)}/iterate?limit=4`;
            while (path) {
              const response = await get(path, { accept: format.type.split(';')[0] });
              assert.equal(response.status, 200, await response.clone().text());
              assert.equal(response.headers.get('content-type'), format.type);
              for (const [id, feature] of await gdalRead(await response.arrayBuffer(), format.extension)) read.set(id, feature);
              const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
              path = next;
            }
            assertSameFeatures(read, fixture(name), { textOnly: format.textOnly });
          }
          const search = await get(`/hub/spaces/${spaces.get('chicago_parks.geo.json')}/search?p.title=Lincoln%20Park`, { accept: format.type.split(';')[0] });
          assert.equal(search.headers.get('content-type'), format.type);
          const found = await gdalRead(await search.arrayBuffer(), format.extension);
          const wanted = [...fixture('chicago_parks.geo.json')].filter(([, feature]) => feature.properties.title === 'Lincoln Park');
          assert.ok(wanted.length > 0);
          assertSameFeatures(found, new Map(wanted), { textOnly: format.textOnly });
        }
        const json = await get(`/hub/spaces/${spaces.get('chicago_parks.geo.json')}/iterate`, { accept: 'application/geo+json, application/flatgeobuf' });
        assert.equal(json.headers.get('content-type'), 'application/geo+json');
      });

      test('whole numbers beyond 64-bit integers are doubles in every format, not a failed answer', async () => {
        // FlatGeobuf and Parquet integer columns are 64-bit; a property that once held 1e21 made the FlatGeobuf page a 500.
        const huge = [1e21, 12345678901234567000, -1e300, 9007199254740992];
        const space = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'huge numbers' } })).body.id as string;
        const features = [...huge, 7].map((n, i) => ({ type: 'Feature', id: `n${i}`, geometry: { type: 'Point', coordinates: [i, i] }, properties: { n } }));
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } })).status, 200);
        for (const format of FORMATS) {
          for (const [path, headers] of [[`/ogc/collections/${space}/items?f=${format.f}`, {}], [`/hub/spaces/${space}/iterate`, { accept: format.type.split(';')[0] }]] as const) {
            const response = await get(path, headers);
            assert.equal(response.status, 200, `${path} ${format.f}: ${await response.clone().text()}`);
            const read = await gdalRead(await response.arrayBuffer(), format.extension);
            assert.deepEqual([...read.values()].map((feature) => Number(feature.properties.n)).sort((a, b) => a - b), [...huge, 7].sort((a, b) => a - b), `${path} ${format.f}`);
          }
        }
      });

      test('an unknown f is a 400 listing the formats served; JSON and HTML stay the default', async () => {
        const space = spaces.get('chicago_parks.geo.json')!;
        const bad = await call(hub, 'GET', `/ogc/collections/${space}/items?f=shp`);
        assert.equal(bad.status, 400, bad.text);
        assert.equal(bad.body.code, 'ogcInvalidFormat');
        for (const name of ['json', 'html', 'jsonseq', 'csv', 'fgb']) assert.ok(String(bad.body.description).includes(name), bad.text);
        const landing = await call(hub, 'GET', '/ogc?f=csv');
        assert.equal(landing.status, 400, landing.text);
        assert.ok(!String(landing.body.description).includes('csv'), 'only the items serve files');
        const plain = await get(`/ogc/collections/${space}/items`);
        assert.equal(plain.headers.get('content-type'), 'application/geo+json');
        const other = await call(hub, 'GET', `/ogc/collections/${space}/items?f=fgb`, { headers: { authorization: 'Bearer nobody' } });
        assert.equal(other.status, 401, other.text);
      });
    });
  }
});
