// GeoParquet in and out (issue 25, sections 1 and 4) on both engines: files written by pyarrow (the GeoParquet repository's examples) load with the features their WKT says; our exports carry valid `geo` metadata, stream in row groups and load back the same; bad files get exit code 2 and change nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { parseWkt } from '../../src/transfer/formats/wkt.js';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { assertSameFeatures, cli, type PlainFeature, plainFeatures } from '../helpers/transfer-cli.js';

const FIXTURES = join(ROOT, 'test/fixtures/geoparquet');
const TYPES = ['point', 'linestring', 'polygon', 'multipoint', 'multilinestring', 'multipolygon'];
const EXAMPLES = ['example-1.0.parquet', 'example-1.1.parquet', 'example-1.2.parquet', 'example-2.0.parquet'];
const ENV = { HUB_JOBS_POLL: '50ms', HUB_JOBS_LEASE: '1500ms' };

/** The expected features from a CSV with a WKT `geometry` column: an empty or missing geometry is null (docs/import-export.md). */
function expected(csv: string, idColumn: string, numbers: string[]): Map<string, PlainFeature> {
  const rows = parse(readFileSync(join(FIXTURES, csv), 'utf8'), { columns: true }) as Array<Record<string, string>>;
  return new Map(rows.map((row) => {
    const { geometry, [idColumn]: id, ...rest } = row;
    const properties: Record<string, unknown> = { ...rest };
    for (const name of numbers) properties[name] = Number(properties[name]);
    const shape = geometry === '' || / EMPTY$/.test(geometry) ? null : parseWkt(geometry) as PlainFeature['geometry'];
    return [id, { id, geometry: shape, properties }];
  }));
}

/** Compares features, those without a geometry apart: the shared helper compares coordinates. */
function assertSame(actual: Map<string, PlainFeature>, want: Map<string, PlainFeature>): void {
  const located = (map: Map<string, PlainFeature>, has: boolean) => new Map([...map].filter(([, feature]) => (feature.geometry !== null) === has));
  assertSameFeatures(located(actual, true), located(want, true));
  assert.deepEqual(located(actual, false), located(want, false));
}

describe('GeoParquet in and out', () => {
  for (const backend of BACKENDS) {
    describe(backend, { concurrency: 4 }, () => {
      let hub: HubProcess;
      let directory: string;
      before(async () => {
        hub = await startHub({ backend, env: ENV });
        directory = mkdtempSync(join(tmpdir(), 'transfer-geoparquet-'));
      });
      after(async () => {
        await hub?.stop();
        if (directory) rmSync(directory, { recursive: true, force: true });
      });
      const exported = async (space: string) => {
        const saved = await cli(hub, ['export', '--space', space, '--format', 'geojson']);
        assert.equal(saved.code, 0, saved.stderr);
        return plainFeatures(JSON.parse(saved.stdout) as Parameters<typeof plainFeatures>[0]);
      };

      for (const type of TYPES) {
        test(`${type}: pyarrow's GeoParquet 1.1 file loads with the features of its WKT (an empty and a null geometry load as null)`, async () => {
          const space = `gp${type}`;
          const want = expected(`data-${type}-wkt.csv`, 'col', []);
          const loaded = await cli(hub, ['import', join(FIXTURES, `data-${type}-encoding_wkb.parquet`), '--space', space, '--create', space, '--id-property', 'col']);
          assert.equal(loaded.code, 0, loaded.stderr);
          assert.match(loaded.stderr, new RegExp(`"format":"geoparquet","written":${want.size},"failed":0`));
          assertSame(await exported(space), want);
        });
      }

      for (const example of EXAMPLES) {
        test(`${example}: the GeoParquet repository's example (detected by its first bytes) loads as its CSV says`, async () => {
          const space = example.replace(/[^a-z0-9]/g, '');
          const loaded = await cli(hub, ['import', join(FIXTURES, example), '--space', space, '--create', space, '--id-property', 'iso_a3']);
          assert.equal(loaded.code, 0, loaded.stderr);
          assertSame(await exported(space), expected('example.csv', 'iso_a3', ['pop_est', 'gdp_md_est']));
        });
      }

      test('an export is GeoParquet 1.1 in row groups of --row-group-size with valid geo metadata, and loads back the same', async () => {
        const space = await createSpace(hub);
        const count = 3_500;
        for (let from = 0; from < count; from += 2_000) {
          const features = Array.from({ length: Math.min(2_000, count - from) }, (_, k) => {
            const i = from + k;
            return { type: 'Feature', id: `p${i}`, geometry: { type: 'Point', coordinates: [(i % 3600) / 10 - 180, (i % 1700) / 10 - 85] }, properties: { n: i, name: `point ${i}`, even: i % 2 === 0, tags: { i } } };
          });
          assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } })).status, 200);
        }
        const file = join(directory, 'points.parquet');
        const saved = await cli(hub, ['export', '--space', space, '--output', file, '--row-group-size', '1000']);
        assert.equal(saved.code, 0, saved.stderr);

        const metadata = await parquetMetadataAsync(await asyncBufferFromFile(file));
        assert.equal(metadata.num_rows, BigInt(count));
        assert.deepEqual(metadata.row_groups.map((group) => Number(group.num_rows)), [1_000, 1_000, 1_000, 500], 'written a row group at a time');
        assert.deepEqual(metadata.schema.slice(1).map(({ name, type }) => `${name} ${type}`), ['id BYTE_ARRAY', 'n INT64', 'name BYTE_ARRAY', 'even BOOLEAN', 'tags BYTE_ARRAY', 'geometry BYTE_ARRAY']);
        const geo = JSON.parse(metadata.key_value_metadata?.find(({ key }) => key === 'geo')?.value ?? 'null') as Record<string, unknown>;
        assert.deepEqual(geo, {
          version: '1.1.0', primary_column: 'geometry',
          columns: { geometry: { encoding: 'WKB', geometry_types: ['Point Z'], bbox: [-180, -85, 169.9, 84.9] } },
        });
        // hyparquet decodes the WKB by the geo metadata: an independent reading of the geometry column.
        const [row] = await parquetReadObjects({ file: await asyncBufferFromFile(file), rowStart: 3_234, rowEnd: 3_235 });
        assert.deepEqual({ ...row, n: Number(row.n) }, { id: 'p3234', n: 3_234, name: 'point 3234', even: true, tags: { i: 3_234 }, geometry: { type: 'Point', coordinates: [143.4, 68.4, 0] } });

        const back = await cli(hub, ['import', file, '--space', 'gpback', '--create', 'back']);
        assert.equal(back.code, 0, back.stderr);
        const [before, after] = [await exported(space), await exported('gpback')];
        assert.equal(after.size, count);
        assert.deepEqual(after, before);
      });

      test('jobs: a GeoParquet upload is imported, and an export job downloads GeoParquet', async () => {
        const space = await createSpace(hub);
        const created = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files', idProperty: 'iso_a3' }, target: { type: 'Space', id: space } } });
        assert.equal(created.status, 200, created.text);
        const job = created.body.id as string;
        assert.equal((await call(hub, 'POST', `/hub/jobs/${job}/inputs`, { rawBody: readFileSync(join(FIXTURES, 'example-1.1.parquet')), headers: { 'content-type': 'application/octet-stream' } })).status, 200);
        assert.equal((await call(hub, 'PATCH', `/hub/jobs/${job}/status`, { body: { desiredAction: 'START' } })).status, 200);
        const done = async (id: string) => {
          for (let i = 0; i < 400; i++) {
            const status = (await call(hub, 'GET', `/hub/jobs/${id}/status`)).body;
            if (['SUCCEEDED', 'FAILED'].includes(status.state as string)) return status;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          throw new Error(`job ${id} did not finish`);
        };
        assert.equal((await done(job)).state, 'SUCCEEDED');
        assertSame(await exported(space), expected('example.csv', 'iso_a3', ['pop_est', 'gdp_md_est']));

        const exporting = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOPARQUET', rowGroupSize: 2 } } });
        assert.equal(exporting.status, 200, exporting.text);
        assert.equal((await done(exporting.body.id as string)).state, 'SUCCEEDED');
        const response = await fetch(`${hub.url}/hub/jobs/${exporting.body.id as string}/outputs`, { headers: { authorization: `Bearer ${hub.token}` } });
        assert.equal(response.headers.get('content-type'), 'application/vnd.apache.parquet');
        const file = join(directory, 'job.parquet');
        writeFileSync(file, new Uint8Array(await response.arrayBuffer()));
        const rows = await parquetReadObjects({ file: await asyncBufferFromFile(file) });
        assert.deepEqual(rows.map((row) => row.id).sort(), ['ESH', 'FJI', 'TZA', 'USA', 'CAN'].sort());
        const metadata = await parquetMetadataAsync(await asyncBufferFromFile(file));
        assert.deepEqual(metadata.row_groups.map((group) => Number(group.num_rows)), [2, 2, 1], 'target.rowGroupSize');
      });

      test('a row-group size that is not a whole number from 1 to 1,000,000, or for another format, is refused and writes nothing', async () => {
        const space = await createSpace(hub);
        for (const [args, message] of [
          [['--format', 'geoparquet', '--row-group-size', '0'], /--row-group-size takes a whole number of at least 1 and at most 1000000, not "0"/],
          [['--format', 'geoparquet', '--row-group-size', '1000001'], /at most 1000000/],
          [['--format', 'geojson', '--row-group-size', '10'], /--row-group-size is for GeoParquet; this export writes geojson/],
        ] as Array<[string[], RegExp]>) {
          const file = join(directory, 'refused.parquet');
          const saved = await cli(hub, ['export', '--space', space, '--output', file, ...args]);
          assert.equal(saved.code, 2, saved.stderr);
          assert.match(saved.stderr, message);
          assert.throws(() => readFileSync(file), 'no file written');
        }
        for (const [target, message] of [
          [{ format: 'GEOPARQUET', rowGroupSize: 0 }, /target.rowGroupSize is 0; expected a whole number of rows from 1 to 1000000/],
          [{ format: 'GEOPARQUET', rowGroupSize: 2.5 }, /target.rowGroupSize is 2.5/],
          [{ format: 'GEOJSON', rowGroupSize: 10 }, /target.rowGroupSize is for GEOPARQUET; this export writes GEOJSON/],
        ] as Array<[Record<string, unknown>, RegExp]>) {
          const refused = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', ...target } } });
          assert.equal(refused.status, 400, refused.text);
          assert.match(refused.text, message);
        }
      });

      test('bad files: exit code 2 naming the problem, and nothing written', async () => {
        const space = await createSpace(hub);
        const example = readFileSync(join(FIXTURES, 'example-1.1.parquet'));
        const plain = parquetWriteBuffer({ columnData: [{ name: 'name', data: ['a'], type: 'STRING' }] });
        const withGeo = (geo: object) => parquetWriteBuffer({ columnData: [{ name: 'geometry', data: [new Uint8Array(21)], type: 'BYTE_ARRAY' }], kvMetadata: [{ key: 'geo', value: JSON.stringify(geo) }] });
        const cases: Array<[string, Uint8Array, RegExp]> = [
          ['cut.parquet', example.subarray(0, example.length - 100), /feature|Parquet/],
          ['plain.parquet', new Uint8Array(plain), /without GeoParquet "geo" metadata/],
          ['native.parquet', new Uint8Array(withGeo({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'point', geometry_types: [] } } })), /encoded as "point"; only WKB/],
          ['mercator.parquet', new Uint8Array(withGeo({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: [], crs: { id: { authority: 'EPSG', code: 3857 } } } } })), /EPSG:3857.*reproject/],
        ];
        for (const [name, bytes, message] of cases) {
          const file = join(directory, name);
          writeFileSync(file, bytes);
          const loaded = await cli(hub, ['import', file, '--space', space]);
          assert.equal(loaded.code, 2, `${name}: ${loaded.stderr}`);
          assert.match(loaded.stderr, message, name);
          assert.ok(!loaded.stderr.includes('    at '), 'no stack trace');
        }
        assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count, 0);
      });
    });
  }
});
