// Feature uploads above the 8 MiB streaming-parser threshold (~10 MB, just enough): plain, gzip-compressed, invalid and malformed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

/**
 * ~10 MB of polygons: past the streaming threshold by more than 1 MB, so that an error placed there is the
 * streaming parser's; and more rows than one insert statement of the PostgreSQL store takes (10,000).
 */
const FEATURES = 20_000;
const RING_POSITIONS = 16;
/** Bodies above the threshold of src/http/body/feature-body.ts are parsed as a stream. */
const STREAM_THRESHOLD = 8 * 1024 * 1024;

/** A closed ring around a point derived from the index; 3D positions, so the stored geometry equals the input. */
function polygon(index: number): FeatureJson {
  const cx = -170 + (index % 3400) / 10;
  const cy = -80 + Math.floor(index / 3400) / 10;
  const ring: number[][] = [];
  for (let k = 0; k < RING_POSITIONS; k++) {
    const angle = (2 * Math.PI * k) / RING_POSITIONS;
    ring.push([Number((cx + 0.04 * Math.cos(angle)).toFixed(6)), Number((cy + 0.04 * Math.sin(angle)).toFixed(6)), k]);
  }
  ring.push(ring[0]);
  return {
    type: 'Feature',
    id: `poly-${index}`,
    geometry: { type: 'Polygon', coordinates: [ring] },
    properties: { index, name: `polygon number ${index}`, even: index % 2 === 0 },
  };
}

/** The collection text, built feature by feature; `replace` swaps in another text at one position. */
function collectionText(count: number, replace?: { position: number; text: string }): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(replace?.position === i ? replace.text : JSON.stringify(polygon(i)));
  return `{"type":"FeatureCollection","features":[${parts.join(',')}]}`;
}

const NO_BODY = { accept: 'application/x-empty' };

for (const backend of BACKENDS) {
  describe(`large uploads (${backend})`, () => {
    let hub: HubProcess;
    let body: string;
    before(async () => {
      hub = await startHub({ backend });
      body = collectionText(FEATURES);
    });
    after(async () => { await hub.stop(); });

    async function assertAllStored(space: string): Promise<void> {
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.status, 200);
      assert.equal(count.body.count, FEATURES);
      for (const index of [0, 1, FEATURES / 2, FEATURES - 1]) {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/features/poly-${index}`);
        assert.equal(response.status, 200);
        const expected = polygon(index);
        assert.deepEqual(response.body.geometry, expected.geometry);
        const { '@ns:com:here:xyz': _namespace, ...properties } = (response.body as FeatureJson).properties;
        assert.deepEqual(properties, expected.properties);
      }
    }

    test('a FeatureCollection PUT above the streaming threshold stores every feature', async () => {
      assert.ok(body.length > STREAM_THRESHOLD + 1_000_000, `the body has only ${body.length} bytes`);
      const space = await createSpace(hub);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: body, headers: NO_BODY });
      assert.equal(response.status, 204);
      await assertAllStored(space);
    });

    test('the same body gzip-compressed is accepted (the threshold applies to the decompressed bytes)', async () => {
      const space = await createSpace(hub);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
        rawBody: gzipSync(body),
        headers: { ...NO_BODY, 'content-encoding': 'gzip' },
      });
      assert.equal(response.status, 204);
      await assertAllStored(space);
    });

    test('a body above the threshold with an invalid feature in the middle writes nothing', async () => {
      const space = await createSpace(hub);
      const middle = FEATURES / 2;
      const bad = { ...polygon(middle), geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 'x'], [1, 1], [0, 0]]] } };
      const text = collectionText(FEATURES, { position: middle, text: JSON.stringify(bad) });
      assert.ok(text.length > STREAM_THRESHOLD);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: text, headers: NO_BODY });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalidGeometry');
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, 0);
    });

    test('malformed JSON above the streaming threshold gets 400 Invalid JSON input string', async () => {
      const space = await createSpace(hub);
      // A stray character well past the first 8 MiB, so the error comes from the streaming parser.
      const cut = body.indexOf('},{', STREAM_THRESHOLD + 500_000);
      assert.ok(cut > 0);
      const broken = body.slice(0, cut + 1) + ';' + body.slice(cut + 1);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: broken, headers: NO_BODY });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalidJsonFeatures');
      assert.match(response.body.errorMessage ?? '', /^Invalid JSON input string/);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, 0);
    });

    test('a body cut off in the middle gets 400 Invalid JSON input string', async () => {
      const space = await createSpace(hub);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: body.slice(0, body.length - 1000), headers: NO_BODY });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalidJsonFeatures');
      assert.match(response.body.errorMessage ?? '', /^Invalid JSON input string/);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, 0);
    });
  });
}
