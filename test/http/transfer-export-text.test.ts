// The export's text path (issue 25, section 3) on both engines: the CLI's GeoJSON and GeoJSONSeq exports, export jobs and `Accept: application/geo+json-seq` copy the stored feature texts with the hub's namespace cut out, and give each feature exactly as parsing it would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { cli } from '../helpers/transfer-cli.js';

const NS = '@ns:com:here:xyz';
const ENV = { HUB_JOBS_POLL: '50ms' };

/** Features whose texts test the byte scanner: quotes, braces and brackets in strings, escapes, non-ASCII, a nested key named like the namespace, integer keys, empty and null values. */
const TRICKY = [
  {
    type: 'Feature', id: 'a', geometry: { type: 'Point', coordinates: [1.5, 2.25] },
    properties: {
      text: 'brace } quote " backslash \\ line\nbreak tab\t ü 😀 ,"@ns:com:here:xyz":{',
      nested: { [NS]: { keep: true }, list: [1, '}', { a: ']' }, [], {}] },
      7: 'integer key', empty: {}, none: null, half: 0.5, big: 12345678901234, yes: true,
    },
  },
  { type: 'Feature', id: 'b', geometry: null, properties: {} },
  { type: 'Feature', id: 'c "}\\ ü', geometry: { type: 'LineString', coordinates: [[0, 0, 5], [1, 1, 6]] }, properties: { [`${NS}x`]: 'not the namespace' } },
  // A foreign member: the export leaves it out (it parses such a feature instead of copying its text).
  { type: 'Feature', id: 'd', geometry: { type: 'Point', coordinates: [3, 4] }, properties: { p: 1 }, foreign: { [NS]: 1, q: '}' } },
];
const PLAIN = Array.from({ length: 25 }, (_, i) => ({ type: 'Feature', id: `p${i}`, geometry: { type: 'Point', coordinates: [i, 0.5 - i] }, properties: { i } }));

/** What an export holds for a written feature: its id, the geometry in 3D (as the hub stores it), the properties without the namespace, nothing else. */
function expected(feature: (typeof TRICKY)[number] | (typeof PLAIN)[number]): object {
  const pad = (value: unknown): unknown => (Array.isArray(value) && typeof value[0] === 'number' ? (value.length === 2 ? [...value, 0] : value) : Array.isArray(value) ? value.map(pad) : value);
  const geometry = feature.geometry === null ? null : { type: feature.geometry.type, coordinates: pad(feature.geometry.coordinates) };
  return { type: 'Feature', id: feature.id, geometry, properties: feature.properties };
}

const ALL = [...TRICKY, ...PLAIN];
const WANT = ALL.map(expected);

/** Each line parsed, after checking that it is compact JSON as the hub serializes it (no text left over, nothing re-spaced). */
function parsedLines(text: string, separator = ''): object[] {
  const lines = text.split('\n');
  assert.equal(lines.pop(), '', 'ends in a line feed');
  return lines.map((line) => {
    assert.ok(line.startsWith(separator), 'record separator');
    const body = line.slice(separator.length);
    const value = JSON.parse(body) as object;
    assert.equal(JSON.stringify(value), body, 'compact, as JSON.stringify writes it');
    return value;
  });
}

describe('export by feature texts', () => {
  for (const backend of BACKENDS) {
    describe(backend, { concurrency: 4 }, () => {
      let hub: HubProcess;
      let space: string;
      before(async () => {
        hub = await startHub({ backend, env: ENV });
        space = await createSpaceWith(hub, ALL);
      });
      after(async () => {
        await hub?.stop();
      });

      test('the CLI writes GeoJSONSeq and GeoJSON over several pages with each feature as written, without the namespace', async () => {
        const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '3']);
        assert.equal(seq.code, 0, seq.stderr);
        assert.deepEqual(parsedLines(seq.stdout), WANT);
        const collection = await cli(hub, ['export', '--space', space, '--format', 'geojson', '--chunk', '7']);
        assert.equal(collection.code, 0, collection.stderr);
        assert.deepEqual((JSON.parse(collection.stdout) as { features: object[] }).features, WANT);
      });

      test('--bbox still filters on the text path', async () => {
        const seq = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--bbox', '0.5,-3.5,3.5,4.5']);
        assert.equal(seq.code, 0, seq.stderr);
        assert.deepEqual(parsedLines(seq.stdout).map((feature) => (feature as { id: string }).id), ['a', 'c "}\\ ü', 'd', 'p1', 'p2', 'p3']);
      });

      test('iterate with Accept: application/geo+json-seq gives the same features', async () => {
        const answer = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1000`, { headers: { accept: 'application/geo+json-seq' } });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(parsedLines(answer.text, '\u001e'), WANT);
      });

      test('an export job writes the same GeoJSONSeq', async () => {
        const created = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOJSONSEQ' } } });
        assert.equal(created.status, 200, created.text);
        const id = created.body.id as string;
        let state = '';
        for (let i = 0; i < 400 && !['SUCCEEDED', 'FAILED'].includes(state); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          state = (await call(hub, 'GET', `/hub/jobs/${id}/status`)).body.state as string;
        }
        assert.equal(state, 'SUCCEEDED');
        const output = await call(hub, 'GET', `/hub/jobs/${id}/outputs`);
        assert.equal(output.status, 200);
        assert.deepEqual(parsedLines(output.text), WANT);
      });
    });
  }
});
