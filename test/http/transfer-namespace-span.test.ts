// The namespace span (issue 25 §3; docs/import-export.md, "Export, fourth round" and "sixth round") on both engines: each row records where its namespace member is, GeoJSON sequences are cut from it in the database, and rows without a fitting span answer the same.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { setSpan, spanRows } from '../helpers/namespace-spans.js';
import { cli } from '../helpers/transfer-cli.js';

const NS = '@ns:com:here:xyz';
const SEQ = 'application/geo+json-seq';

interface Written {
  type: 'Feature';
  id: string;
  geometry: { type: string; coordinates: unknown } | null;
  properties: Record<string, unknown>;
  foreign?: unknown;
}

const point = (x: number, y: number) => ({ type: 'Point', coordinates: [x, y] });

/** Texts a span counted in bytes or UTF-16 units instead of characters would cut elsewhere, and members that look like the namespace. */
const FEATURES: Written[] = [
  {
    type: 'Feature', id: 'é😀', geometry: point(1, 2),
    properties: { text: 'ü 中 😀 \u2028 "} ,"@ns:com:here:xyz":{', nested: { [NS]: { keep: '😀' } }, [`${NS}x`]: 'not the namespace' },
  },
  // The namespace alone in `properties`: no comma before it.
  { type: 'Feature', id: 'empty', geometry: null, properties: {} },
  // A member of the namespace's name: the namespace takes its place, not the end (no span).
  { type: 'Feature', id: 'own', geometry: point(3, 4), properties: { [NS]: { tags: ['mine'] }, after: 'ü' } },
  // A foreign member after `properties`: no span (the export leaves the member out, so it parses such a feature).
  { type: 'Feature', id: 'foreign', geometry: point(5, 6), properties: { p: 1 }, foreign: { [NS]: 1 } },
  ...Array.from({ length: 12 }, (_, i): Written => ({ type: 'Feature', id: `p${i}`, geometry: point(i, -i), properties: { i, s: 'ö'.repeat(i) } })),
];
/** Written again after the others, with a tag outside the Basic Multilingual Plane in the namespace (`@` keeps it as written): one gains a span (its own namespace member gone), one loses it (a foreign member). */
const UPDATES: Written[] = [
  { type: 'Feature', id: 'own', geometry: point(3, 4), properties: { after: 'ü😀' } },
  { type: 'Feature', id: 'p0', geometry: point(0, 0), properties: { i: 0 }, foreign: 'x' },
  // A new row in the same write (PostgreSQL: the COPY path, where the updates above take UPDATE_ROWS).
  { type: 'Feature', id: 'new', geometry: point(7, 8), properties: { n: 'ß' } },
];
const isNew = (update: Written) => !FEATURES.some((feature) => feature.id === update.id);
const FINAL = [...FEATURES.map((feature) => UPDATES.find((update) => update.id === feature.id) ?? feature), ...UPDATES.filter(isNew)];

/** The feature as a GeoJSON sequence holds it: geometry padded to 3D, the properties without the namespace, no foreign member. */
function plainText(feature: Written): string {
  const pad = (value: unknown): unknown => (Array.isArray(value) && typeof value[0] === 'number' ? (value.length === 2 ? [...value, 0] : value) : Array.isArray(value) ? value.map(pad) : value);
  const geometry = feature.geometry === null ? null : { type: feature.geometry.type, coordinates: pad(feature.geometry.coordinates) };
  const { [NS]: _namespace, ...properties } = feature.properties;
  return JSON.stringify({ type: 'Feature', id: feature.id, geometry, properties });
}

/** The records of a GeoJSON text sequence (RFC 8142). */
function records(body: string): string[] {
  assert.ok(body === '' || (body.startsWith('\u001e') && body.endsWith('\n')), 'each record after a separator, ending in a line feed');
  return body.split('\u001e').slice(1).map((record) => record.slice(0, -1));
}

/** Every page of iterate as a sequence, following the `Link` header, `limit` features a page. */
async function iterateAll(hub: HubProcess, space: string, limit: number): Promise<string[]> {
  const all: string[] = [];
  let path: string | undefined = `/hub/spaces/${space}/iterate?limit=${limit}`;
  while (path !== undefined) {
    const page = await call(hub, 'GET', path, { headers: { accept: SEQ } });
    assert.equal(page.status, 200, page.text);
    all.push(...records(page.text));
    path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return all;
}

/** What the row of a stored text must hold: its namespace member's length (with the comma before it), in bytes. */
function spanOf(text: string): number {
  const properties = (JSON.parse(text) as { properties: Record<string, unknown> }).properties;
  const member = `${JSON.stringify(NS)}:${JSON.stringify(properties[NS])}`;
  const cut = Object.keys(properties).length === 1 ? member : `,${member}`;
  return Buffer.byteLength(cut);
}

describe('namespace spans', () => {
  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      before(async () => {
        hub = await startHub({ backend });
      });
      after(async () => {
        await hub?.stop();
      });

      /** A space with FEATURES written, then UPDATES. */
      async function written(): Promise<string> {
        const space = await createSpaceWith(hub, FEATURES);
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features?addTags=${encodeURIComponent('@tag😀中')}`, { body: { type: 'FeatureCollection', features: UPDATES } });
        assert.equal(put.status, 200, put.text);
        return space;
      }

      test('each row holds its namespace member\'s length in the engine\'s unit, none where the namespace does not end the text', async () => {
        const rows = await spanRows(hub, await written());
        assert.deepEqual(rows.map((row) => row.id), FINAL.map((feature) => feature.id));
        assert.ok(rows.find((row) => row.id === 'own')?.text.includes('@tag😀中'), 'the tag is in the namespace');
        assert.ok(rows.find((row) => row.id === 'new')?.text.includes('@tag😀中'), 'the tag is in the new row\'s namespace');
        for (const row of rows) {
          const expected = row.id === 'foreign' || row.id === 'p0' ? null : spanOf(row.text);
          assert.equal(row.cut, expected, `${row.id}: ${row.text}`);
        }
      });

      test('iterate, search and the CLI export as a sequence give each feature as written, without the namespace', async () => {
        const space = await written();
        const want = FINAL.map(plainText);
        // Pages of 3: some all cut by the storage, some with a row it could not cut.
        assert.deepEqual(await iterateAll(hub, space, 3), want);
        assert.deepEqual(await iterateAll(hub, space, 100), want);
        const search = await call(hub, 'GET', `/hub/spaces/${space}/search?limit=100`, { headers: { accept: SEQ } });
        assert.deepEqual(records(search.text), want);
        const exported = await cli(hub, ['export', '--space', space, '--format', 'geojsonseq', '--chunk', '4']);
        assert.equal(exported.code, 0, exported.stderr);
        assert.equal(exported.stdout, want.map((text) => `${text}\n`).join(''));
      });

      test('rows without a span (written before it was stored) or with one that does not fit their text answer the same', async () => {
        const space = await written();
        const rows = await spanRows(hub, space);
        const spanned = (id: string) => rows.find((row) => row.id === id)?.cut as number;
        // None, as before the migration; one byte or character too many or too few (the cut would start inside the text or at the namespace's key).
        await setSpan(hub, space, 'p1', null);
        await setSpan(hub, space, 'é😀', spanned('é😀') + 1);
        await setSpan(hub, space, 'p2', spanned('p2') - 1);
        await setSpan(hub, space, 'empty', spanned('empty') + 1);
        assert.deepEqual(await iterateAll(hub, space, 3), FINAL.map(plainText));
      });
    });
  }
});
