// Round trips through GDAL (issue 25, sections 1 and 4): ogr2ogr writes each format from test/fixtures, `spatial-hub import` loads it, `spatial-hub export` writes it, ogr2ogr reads it back: same ids, properties and geometries within 1e-9.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { BACKENDS, type HubProcess, MAIN, ROOT, startHub } from '../helpers/hub-process.js';
import { assertSameFeatures, cli, plainFeatures } from '../helpers/transfer-cli.js';
import { readBackFlatGeobuf } from '../helpers/flatgeobuf-read-back.js';

const run = promisify(execFile);
const GDAL_MISSING = spawnSync('ogr2ogr', ['--version']).error !== undefined;

/** GDAL driver, file extension, creation options, whether the format keeps only text (CSV), and the export's extension. */
const FORMATS = [
  { name: 'geojson', driver: 'GeoJSON', extension: 'geojson', options: [] as string[], textOnly: false, out: 'geojson' },
  { name: 'geojsonseq', driver: 'GeoJSONSeq', extension: 'geojsonl', options: ['-lco', 'COORDINATE_PRECISION=15'], textOnly: false, out: 'geojsonl' },
  { name: 'csv', driver: 'CSV', extension: 'csv', options: ['-lco', 'GEOMETRY=AS_WKT'], textOnly: true, out: 'csv' },
  { name: 'flatgeobuf', driver: 'FlatGeobuf', extension: 'fgb', options: [], textOnly: false, out: 'fgb' },
  { name: 'geopackage', driver: 'GPKG', extension: 'gpkg', options: [], textOnly: false, out: 'gpkg' },
];
const FIXTURES = ['chicago_parks.geo.json', 'transfer-shapes.geo.json'];

/** An export's standard output as bytes, through a pipe (the test helper's cli() decodes it as text). */
function exportToPipe(hub: HubProcess, args: string[]): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, 'export', ...args, '--url', hub.url], { env: { ...process.env, HUB_TOKEN: hub.token }, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr })));
}

const fixture = (name: string) => plainFeatures(JSON.parse(readFileSync(join(ROOT, 'test/fixtures', name), 'utf8').replace(/^\uFEFF/, '')) as Parameters<typeof plainFeatures>[0]);

async function readBack(file: string, directory: string): Promise<ReturnType<typeof plainFeatures>> {
  const back = join(directory, `back-${Math.random().toString(36).slice(2)}.json`);
  await run('ogr2ogr', ['-f', 'GeoJSON', back, file, ...(file.endsWith('.csv') ? ['-oo', 'KEEP_GEOM_COLUMNS=NO'] : [])]);
  return plainFeatures(JSON.parse(readFileSync(back, 'utf8')) as Parameters<typeof plainFeatures>[0]);
}

describe('import and export round trips through GDAL', { skip: GDAL_MISSING ? 'ogr2ogr not found: install gdal-bin' : false }, () => {
  for (const backend of BACKENDS) {
    // Each test has its own space and files: they run side by side, most of their time is spent waiting on processes.
    describe(backend, { concurrency: 4 }, () => {
      let hub: HubProcess;
      let directory: string;
      before(async () => {
        hub = await startHub({ backend });
        directory = mkdtempSync(join(tmpdir(), 'transfer-gdal-'));
      });
      after(async () => {
        await hub?.stop();
        if (directory) rmSync(directory, { recursive: true, force: true });
      });

      for (const format of FORMATS) {
        // The 3D parks where a binary encoding could lose the third coordinate; JSON passes it through as it is.
        for (const name of format.name.startsWith('geojson') ? FIXTURES.slice(1) : FIXTURES) {
          test(`${format.name}: ${name} written by ogr2ogr, imported, exported and read back by ogr2ogr`, async () => {
            const stem = `${format.name}-${name.split('.')[0]}`;
            const input = join(directory, `${stem}-in.${format.extension}`);
            const output = join(directory, `${stem}-out.${format.out}`);
            await run('ogr2ogr', ['-f', format.driver, input, join(ROOT, 'test/fixtures', name), ...format.options]);
            const space = stem.replace(/[^A-Za-z0-9]/g, '');
            const loaded = await cli(hub, ['import', input, '--space', space, '--create', stem]);
            assert.equal(loaded.code, 0, loaded.stderr);
            assert.match(loaded.stderr, new RegExp(`"format":"${format.name}","written":${fixture(name).size},"failed":0`));
            const saved = await cli(hub, ['export', '--space', space, '--output', output]);
            assert.equal(saved.code, 0, saved.stderr);
            assertSameFeatures(await readBack(output, directory), fixture(name), { textOnly: format.textOnly });
            assert.ok(!(loaded.stderr + saved.stderr).includes(hub.token), 'the token is never printed');
          });
        }
      }

      test('a GeoPackage export has an R-tree that GDAL uses for a spatial filter, and that stays current when GDAL adds to the file', async () => {
        const input = join(ROOT, 'test/fixtures/transfer-shapes.geo.json');
        assert.equal((await cli(hub, ['import', input, '--space', 'indexed', '--create', 'indexed'])).code, 0);
        const file = join(directory, 'indexed.gpkg');
        const saved = await cli(hub, ['export', '--space', 'indexed', '--output', file]);
        assert.equal(saved.code, 0, saved.stderr);
        const index = await run('ogrinfo', ['-q', file, '-sql', "SELECT HasSpatialIndex('features', 'geom')"]);
        assert.match(index.stdout, /HasSpatialIndex \(Integer\) = 1/);
        const ids = async (box: string[]) => [...(await run('ogrinfo', ['-q', '-al', '-spat', ...box, file])).stdout.matchAll(/^ {2}id \(String\) = (.+)$/gm)].map((m) => m[1]).sort();
        // The box meets only the far corner of the multipolygon's second part: an index entry with a wrong box misses it.
        assert.deepEqual(await ids(['12.5', '52.2', '14', '54']), ['mp-4']);
        const added = join(directory, 'added.geojson');
        writeFileSync(added, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: { id: 'new-7' }, geometry: { type: 'Point', coordinates: [13.5, 53.5, 0] } }] }));
        await run('ogr2ogr', ['-append', '-nln', 'features', file, added]);
        assert.deepEqual(await ids(['12.5', '52.2', '14', '54']), ['mp-4', 'new-7']);
        const rtree = await run('ogrinfo', ['-q', file, '-sql', 'SELECT count(*) AS n FROM rtree_features_geom']);
        assert.match(rtree.stdout, /n \(Integer\) = 7/, 'the six exported features and the added one');
      });

      test('flatgeobuf: features without a geometry are exported so that GDAL reads every feature, and import back without one', async () => {
        const input = join(directory, 'nulls.geojson');
        writeFileSync(input, JSON.stringify({ type: 'FeatureCollection', features: [
          { type: 'Feature', id: 'p-1', properties: { n: 1 }, geometry: { type: 'Point', coordinates: [1, 2] } },
          { type: 'Feature', id: 'none-2', properties: { n: 2 }, geometry: null },
          { type: 'Feature', id: 'l-3', properties: { n: 3 }, geometry: { type: 'LineString', coordinates: [[1, 2], [3, 4]] } },
          { type: 'Feature', id: 'none-4', properties: { n: 4 }, geometry: null },
        ] }));
        assert.equal((await cli(hub, ['import', input, '--space', 'nulls', '--create', 'nulls'])).code, 0);
        const file = join(directory, 'nulls.fgb');
        const saved = await cli(hub, ['export', '--space', 'nulls', '--output', file]);
        assert.equal(saved.code, 0, saved.stderr);
        const back = await readBack(file, directory);
        assert.deepEqual([...back.keys()].sort(), ['l-3', 'none-2', 'none-4', 'p-1'], 'GDAL reads past the features without a geometry');
        assert.equal(back.get('none-2')?.geometry, null);
        assert.equal(back.get('p-1')?.geometry?.type, 'Point');
        assert.equal((await cli(hub, ['import', file, '--space', 'nullsback', '--create', 'nullsback'])).code, 0);
        const again = await cli(hub, ['export', '--space', 'nullsback', '--format', 'geojsonseq']);
        const geometries = new Map(again.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; geometry: unknown }).map((f) => [f.id, f.geometry]));
        assert.equal(geometries.size, 4);
        assert.equal(geometries.get('none-4'), null);
      });

      test('flatgeobuf to a file (the header written into the room left before the features, or the file written again when a later page outgrows it) and to a pipe: GDAL and the library read each back', async () => {
        // Five features with one column, then ten with sixty long-named columns more: their header does not fit the
        // room left after the first page (--chunk 5), so the file is written again; the first ten alone fit.
        const wide = (i: number) => Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`a rather long column name, number ${k}`, `v${i}-${k}`]));
        const features = Array.from({ length: 15 }, (_, i) => ({
          type: 'Feature', id: `w-${i}`, geometry: { type: 'Point', coordinates: [i / 7, -i / 3] }, properties: { n: i, ...(i >= 5 ? wide(i) : {}) },
        }));
        const input = join(directory, 'wide.geojson');
        writeFileSync(input, JSON.stringify({ type: 'FeatureCollection', features }));
        assert.equal((await cli(hub, ['import', input, '--space', 'wide', '--create', 'wide'])).code, 0);
        const want = plainFeatures({ features });
        const inFile = join(directory, 'wide.fgb');
        const saved = await cli(hub, ['export', '--space', 'wide', '--output', inFile, '--chunk', '5']);
        assert.equal(saved.code, 0, saved.stderr);
        assertSameFeatures(await readBack(inFile, directory), want);
        const piped = await exportToPipe(hub, ['--space', 'wide', '--format', 'flatgeobuf', '--chunk', '5']);
        assert.equal(piped.code, 0, piped.stderr);
        const pipeFile = join(directory, 'wide-piped.fgb');
        writeFileSync(pipeFile, piped.stdout);
        assertSameFeatures(await readBack(pipeFile, directory), want);
        const fromFile = readBackFlatGeobuf(readFileSync(inFile));
        assert.deepStrictEqual(readBackFlatGeobuf(piped.stdout), fromFile);
        assert.equal(fromFile.features.length, 15);
        // The first ten features: one page of ten with every column, the header written into its room.
        const head = join(directory, 'wide-head.fgb');
        const first = await cli(hub, ['export', '--space', 'wide', '--output', head, '--chunk', '10', '--bbox', '-1,-3.1,1.3,0.1']);
        assert.equal(first.code, 0, first.stderr);
        assertSameFeatures(await readBack(head, directory), plainFeatures({ features: features.slice(0, 10) }));
      });

      test('export to stdout by --format, with --tags and --bbox', async () => {
        const input = join(ROOT, 'test/fixtures/transfer-shapes.geo.json');
        assert.equal((await cli(hub, ['import', input, '--space', 'tagged', '--create', 'tagged', '--tags', 'shapes'])).code, 0);
        const all = await cli(hub, ['export', '--space', 'tagged', '--format', 'geojsonseq', '--tags', 'shapes']);
        assert.equal(all.stdout.trim().split('\n').length, 6);
        const none = await cli(hub, ['export', '--space', 'tagged', '--format', 'geojsonseq', '--tags', 'other']);
        assert.equal(none.stdout, '');
        // The box meets the multipolygon, and the envelope of the world-wide multipoint (docs/import-export.md: envelopes).
        const boxed = await cli(hub, ['export', '--space', 'tagged', '--format', 'geojsonseq', '--bbox', '9,49,14,54']);
        assert.deepEqual(boxed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id).sort(), ['mp-4', 'mt-6']);
        const away = await cli(hub, ['export', '--space', 'tagged', '--format', 'geojsonseq', '--bbox', '-88.5,41.5,-87.9,41.7']);
        assert.deepEqual(away.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id).sort(), ['mt-6', 'pg-3']);
      });
    });
  }
});
