// GDAL's OAPIF driver against the hub's OGC API (issue 14): ogrinfo lists the collections, ogr2ogr pages through 10,000 features, -spat and -where match the hub.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { call, type TestResponse } from '../helpers/http-client.js';
import { collection, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { seededRandom } from '../helpers/seeded-random.js';

const run = promisify(execFile);
const GDAL_MISSING = spawnSync('ogrinfo', ['--version']).error !== undefined;
const BIG = 10_000;

/** Runs a GDAL command with its HTTP debug lines on stderr (the URLs it fetched); its wall time goes into the test log (never asserted). */
async function gdal(t: TestContext, command: string, args: string[]): Promise<{ stdout: string; fetched: string[] }> {
  const started = Date.now();
  const { stdout, stderr } = await run(command, args, { maxBuffer: 64 << 20, env: { ...process.env, CPL_DEBUG: 'ON' } });
  t.diagnostic(`${command} ${args.filter((arg) => !arg.startsWith('OAPIF:')).join(' ')}: ${Date.now() - started} ms`);
  const fetched = [...stderr.matchAll(/HTTP: Fetch\((.*)\)/g)].map((match) => match[1]);
  return { stdout, fetched };
}

const hubIds = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);

describe('OGC API Features with GDAL', { skip: GDAL_MISSING ? 'ogrinfo not found: install gdal-bin to run the GDAL tests' : false }, () => {
  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      let big: string;
      let parks: string;
      let countries: string;
      let directory: string;
      const source = () => `OAPIF:${hub.url}/ogc?access_token=${hub.token}`;
      /** The ids ogr2ogr wrote, in file order. */
      const copiedIds = (file: string): string[] =>
        (JSON.parse(readFileSync(join(directory, file), 'utf8')) as { features: Array<{ properties: { id: string } }> }).features.map((f) => f.properties.id);

      before(async () => {
        hub = await startHub({ backend });
        directory = mkdtempSync(join(tmpdir(), 'ogc-gdal-'));
        big = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'ten thousand points' } })).body.id as string;
        const random = seededRandom(14);
        const features = Array.from({ length: BIG }, (_, i) =>
          point(`p${i}`, { n: i, name: `k${i % 7}` }, [Number((random() * 360 - 180).toFixed(6)), Number((random() * 170 - 85).toFixed(6))]));
        const written = await call(hub, 'PUT', `/hub/spaces/${big}/features?respond=false`, { body: collection(...features), headers: { accept: 'application/x-empty' } });
        assert.equal(written.status, 204, written.text);
        parks = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'Chicago parks' } })).body.id as string;
        const fixture = readFileSync(join(ROOT, 'test/fixtures/chicago_parks.geo.json'), 'utf8');
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${parks}/features`, { rawBody: fixture })).status, 200);
        countries = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'countries' } })).body.id as string;
        // The fixture's two features with the id -99 get their own: a request may not repeat an id (API.md 1.7).
        const world = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/countries.geo.json'), 'utf8')) as { features: Array<{ id: string }> };
        for (const [index, feature] of world.features.entries()) if (feature.id === '-99') feature.id = `n${index}`;
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${countries}/features?addTags=world`, { body: world, headers: { accept: 'application/x-empty' } })).status, 204);
      });
      after(async () => {
        await hub?.stop();
        if (directory) rmSync(directory, { recursive: true, force: true });
      });

      test('ogrinfo -so lists the collections', async (t) => {
        const { stdout: output } = await gdal(t, 'ogrinfo', ['-so', '-ro', source()]);
        assert.match(output, new RegExp(`: ${big} \\(title: ten thousand points\\)`));
        assert.match(output, new RegExp(`: ${parks} \\(title: Chicago parks\\)`));
      });

      test('ogr2ogr copies the 10,000-feature collection through paging: same count, same ids as the hub', async (t) => {
        const { fetched } = await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', join(directory, 'all.json'), source(), big]);
        assert.ok(fetched.filter((url) => url.includes('handle=')).length >= 100, 'GDAL followed the next links');
        const copied = copiedIds('all.json');
        assert.equal(copied.length, BIG);
        const iterated = hubIds(await call(hub, 'GET', `/hub/spaces/${big}/iterate?limit=${BIG}`));
        assert.deepEqual(copied, iterated);
      });

      test('ogr2ogr with a page size of 1,000 gives the same ids', async (t) => {
        await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', '-oo', 'PAGE_SIZE=1000', join(directory, 'paged.json'), source(), big]);
        assert.deepEqual(copiedIds('paged.json'), copiedIds('all.json'));
      });

      test('-spat gives the ids of the hub bbox call', async (t) => {
        const { fetched } = await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', '-spat', '-30', '-20', '40', '35', join(directory, 'spat.json'), source(), big]);
        assert.ok(fetched.some((url) => /[?&]bbox=-30(\.0+)?,-20/.test(url)), 'the box went to the server');
        const expected = hubIds(await call(hub, 'GET', `/hub/spaces/${big}/bbox?west=-30&south=-20&east=40&north=35&limit=${BIG}`));
        assert.ok(expected.length > 100 && expected.length < BIG);
        assert.deepEqual(copiedIds('spat.json'), expected);
      });

      test('-where on a property gives the ids of the hub search', async (t) => {
        const { fetched } = await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', '-where', "name = 'k3'", join(directory, 'where.json'), source(), big]);
        // The API definition lists `filter-lang` with `cql-text`: GDAL 3.6 sends the -where as CQL (docs/ogc-filtering.md).
        assert.ok(fetched.some((url) => url.includes('filter=') && url.includes('k3')), 'the filter went to the server');
        const expected = hubIds(await call(hub, 'GET', `/hub/spaces/${big}/search?p.name=k3&limit=${BIG}`));
        assert.ok(expected.length > 1000);
        assert.deepEqual(copiedIds('where.json'), expected);
      });

      test('-spat with -where on the parks fixture', async (t) => {
        await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', '-spat', '-87.7', '41.8', '-87.6', '41.95', join(directory, 'parks.json'), source(), parks]);
        const expected = hubIds(await call(hub, 'GET', `/hub/spaces/${parks}/bbox?west=-87.7&south=41.8&east=-87.6&north=41.95&limit=1000`));
        assert.ok(expected.length > 0);
        assert.deepEqual(copiedIds('parks.json').sort(), [...expected].sort());
        await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', '-where', "area = '1200'", join(directory, 'area.json'), source(), parks]);
        assert.deepEqual(copiedIds('area.json'), hubIds(await call(hub, 'GET', `/hub/spaces/${parks}/search?p.area='1200'`)));
        assert.deepEqual(copiedIds('area.json'), ['LP']);
      });

      test('ogrinfo types countries written in 2D as 2D polygons, with flat columns: no namespace object, its times and tags as their own (issue 27)', async (t) => {
        const { stdout } = await gdal(t, 'ogrinfo', ['-so', '-ro', source(), countries]);
        // Polygons and multipolygons: the layer's type is "Unknown (any)", as it would be "3D Unknown (any)" in 3D.
        assert.match(stdout, /^Geometry: Unknown \(any\)$/m);
        const { stdout: summary } = await gdal(t, 'ogrinfo', ['-ro', '-geom=SUMMARY', source(), countries]);
        const types = [...summary.matchAll(/^ {2}([A-Z ]+) : /gm)].map((match) => match[1]);
        assert.equal(types.length, 180);
        assert.deepEqual([...new Set(types)].sort(), ['MULTIPOLYGON', 'POLYGON']);
        assert.doesNotMatch(stdout, /@ns/);
        assert.match(stdout, /^createdAt: DateTime/m);
        assert.match(stdout, /^updatedAt: DateTime/m);
        assert.match(stdout, /^tags: StringList/m);
        assert.match(stdout, /^name: String/m);
        // The XYZ API keeps its documented 3D positions (API.md 5.1).
        const [first] = (await call(hub, 'GET', `/hub/spaces/${countries}/iterate?limit=1`)).body.features ?? [];
        assert.match(JSON.stringify(first.geometry), /^{"type":"(Multi)?Polygon","coordinates":\[+-?[\d.]+,-?[\d.]+,0\]/);
      });

      test('a feature with a z that is not zero keeps its z on /ogc; ogr2ogr reads the tags back as a list', async (t) => {
        const space = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'heights' } })).body.id as string;
        const features = [point('low', { h: 0 }, [1, 2]), { ...point('high', { h: 5 }, [3, 4]), geometry: { type: 'Point', coordinates: [3, 4, 5] } }];
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features?addTags=a,b`, { body: collection(...features) })).status, 200);
        await gdal(t, 'ogr2ogr', ['-f', 'GeoJSON', join(directory, 'heights.json'), source(), space]);
        const copied = JSON.parse(readFileSync(join(directory, 'heights.json'), 'utf8')) as { features: Array<{ geometry: { coordinates: number[] }; properties: Record<string, unknown> }> };
        assert.deepEqual(copied.features.map((feature) => feature.geometry.coordinates), [[1, 2], [3, 4, 5]]);
        for (const feature of copied.features) {
          assert.deepEqual(feature.properties.tags, ['a', 'b']);
          assert.equal(Object.keys(feature.properties).some((key) => key.startsWith('@ns')), false);
        }
      });
    });
  }
});
