// OGC API Tiles and TileJSON on both engines: the documents and their links, MVT tiles equal to the XYZ route's, errors, rights, and GDAL reading them.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { call, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const run = promisify(execFile);
const GDAL_VERSION = /GDAL (\d+)\.(\d+)/.exec(spawnSync('ogrinfo', ['--version'], { encoding: 'utf8' }).stdout ?? '');
const REL = 'http://www.opengis.net/def/rel/ogc/1.0';
const MVT = 'application/vnd.mapbox-vector-tile';
const SPACE = 'world';

interface Link { href: string; rel: string; type: string; templated?: boolean }
const linkOf = (body: unknown, rel: string, type?: string): Link | undefined =>
  ((body as { links: Link[] }).links).find((link) => link.rel === rel && (type === undefined || link.type === type));

/** The world's countries (the viewer's outline), with ids. */
const WORLD = JSON.parse(readFileSync(join(ROOT, 'viewer/world-110m.geojson'), 'utf8')) as { features: Array<{ id?: string; properties: object }> };
WORLD.features.forEach((feature, index) => { feature.id = `c${index}`; });

/** A binary GET by node:http (fetch adds `cache-control: no-cache` to conditional requests). */
function binary(hub: HubProcess, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type?: string; etag?: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    request(hub.url + path, { headers: { authorization: `Bearer ${hub.token}`, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({
        status: response.statusCode ?? 0, type: response.headers['content-type'], etag: response.headers.etag, bytes: Buffer.concat(chunks),
      }));
    }).on('error', reject).end();
  });
}

/** The `id` attributes of an MVT tile's one layer. */
function tileIds(bytes: Buffer): string[] {
  const layer = new VectorTile(new PbfReader(bytes)).layers[SPACE];
  return Array.from({ length: layer?.length ?? 0 }, (_, i) => String(layer.feature(i).properties.id)).sort();
}

function assertOgcError(response: TestResponse, status: number, code: string, text: RegExp): void {
  assert.equal(response.status, status, response.text);
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description'], response.text);
  assert.equal(response.body.code, code);
  assert.match(String(response.body.description), text);
}

for (const backend of BACKENDS) {
  describe(`OGC API Tiles and TileJSON (${backend})`, () => {
    let hub: HubProcess;
    let other: string;
    let directory: string;

    before(async () => {
      hub = await startHub({ backend });
      directory = mkdtempSync(join(tmpdir(), 'ogc-tiles-'));
      assert.equal((await call(hub, 'POST', '/hub/spaces', { body: { id: SPACE, title: 'Countries', description: 'The world at 1:110m' } })).status, 200);
      const written = await call(hub, 'PUT', `/hub/spaces/${SPACE}/features`, { body: { type: 'FeatureCollection', features: WORLD.features } });
      assert.equal(written.status, 200, written.text.slice(0, 300));
      other = (await issueToken(hub, { aid: 'someone-else', urm: ownerRights('someone-else') })).token;
    });
    after(async () => {
      await hub?.stop();
      if (directory) rmSync(directory, { recursive: true, force: true });
    });

    test('conformance, landing page and collection lead to the tilesets, the tileset to its tiles and tile matrix set', async () => {
      const classes = (await call(hub, 'GET', '/ogc/conformance', { anonymous: true })).body.conformsTo as string[];
      for (const name of ['core', 'tileset', 'tilesets-list', 'geodata-tilesets', 'mvt']) {
        assert.ok(classes.includes(`http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/${name}`), name);
      }
      assert.ok(classes.includes('http://www.opengis.net/spec/tms/2.0/conf/tilematrixset'));
      const landing = await call(hub, 'GET', '/ogc', { anonymous: true });
      assert.equal(linkOf(landing.body, `${REL}/tiling-schemes`)?.href, `${hub.url}/ogc/tileMatrixSets`);

      const collection = await call(hub, 'GET', `/ogc/collections/${SPACE}`);
      const tilesetsHref = linkOf(collection.body, `${REL}/tilesets-vector`, 'application/json')?.href;
      assert.equal(tilesetsHref, `${hub.url}/ogc/collections/${SPACE}/tiles`);
      const list = await call(hub, 'GET', tilesetsHref.slice(hub.url.length));
      assert.equal(list.status, 200, list.text);
      const tilesets = list.body.tilesets as Array<{ dataType: string; tileMatrixSetURI: string; links: Link[] }>;
      assert.equal(tilesets.length, 1);
      assert.equal(tilesets[0].dataType, 'vector');
      assert.equal(tilesets[0].tileMatrixSetURI, 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad');
      const tilesetHref = tilesets[0].links.find((link) => link.rel === 'self')?.href ?? '';
      assert.equal(tilesetHref, `${hub.url}/ogc/collections/${SPACE}/tiles/WebMercatorQuad`);

      const tileset = await call(hub, 'GET', tilesetHref.slice(hub.url.length));
      assert.equal(tileset.status, 200, tileset.text);
      const item = linkOf(tileset.body, 'item', MVT);
      assert.equal(item?.href, `${hub.url}/ogc/collections/${SPACE}/tiles/WebMercatorQuad/{tileMatrix}/{tileRow}/{tileCol}`);
      assert.equal(item?.templated, true);
      assert.equal(linkOf(tileset.body, `${REL}/geodata`)?.href, `${hub.url}/ogc/collections/${SPACE}`);
      assert.equal(linkOf(tileset.body, 'alternate')?.href, `${hub.url}/hub/spaces/${SPACE}/tilejson.json`);
      const statistics = await call(hub, 'GET', `/hub/spaces/${SPACE}/statistics`);
      const [west, south, east, north] = (statistics.body.bbox as { value: number[] }).value;
      assert.deepEqual(tileset.body.boundingBox, { lowerLeft: [west, south], upperRight: [east, north], crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' });
      const limits = tileset.body.tileMatrixSetLimits as Array<{ tileMatrix: string; minTileRow: number; maxTileRow: number; minTileCol: number; maxTileCol: number }>;
      assert.equal(limits.length, 25);
      assert.deepEqual(limits[0], { tileMatrix: '0', minTileRow: 0, maxTileRow: 0, minTileCol: 0, maxTileCol: 0 });
      // The countries span every longitude and reach 83.65°N: at level 4 every column, and the first row.
      assert.deepEqual(limits[4], { tileMatrix: '4', minTileRow: 0, maxTileRow: 15, minTileCol: 0, maxTileCol: 15 });
      const layer = (tileset.body.layers as Array<{ id: string; propertiesSchema: { properties: Record<string, { type?: string }> } }>)[0];
      assert.equal(layer.id, SPACE);
      assert.deepEqual(layer.propertiesSchema.properties.name, { type: 'string' });
      assert.deepEqual(layer.propertiesSchema.properties.id, { type: 'string' });

      const definitionHref = linkOf(tileset.body, `${REL}/tiling-scheme`, 'application/json')?.href ?? '';
      assert.equal(definitionHref, `${hub.url}/ogc/tileMatrixSets/WebMercatorQuad`);
      const definition = await call(hub, 'GET', definitionHref.slice(hub.url.length), { anonymous: true });
      assert.equal(definition.status, 200);
      assert.equal(definition.body.crs, 'http://www.opengis.net/def/crs/EPSG/0/3857');
      const matrices = definition.body.tileMatrices as Array<{ id: string; matrixWidth: number; matrixHeight: number; scaleDenominator: number; pointOfOrigin: number[] }>;
      assert.equal(matrices.length, 25);
      matrices.forEach((matrix, level) => {
        assert.equal(matrix.id, String(level));
        assert.equal(matrix.matrixWidth, 2 ** level);
        assert.equal(matrix.matrixHeight, 2 ** level);
        assert.ok(Math.abs(matrix.scaleDenominator - 559082264.0287178 / 2 ** level) < 1e-3 * 2 ** -level, `${level}: ${matrix.scaleDenominator}`);
        assert.deepEqual(matrix.pointOfOrigin, [-20037508.3427892, 20037508.3427892]);
      });
      const sets = await call(hub, 'GET', '/ogc/tileMatrixSets', { anonymous: true });
      assert.deepEqual((sets.body.tileMatrixSets as Array<{ id: string }>).map((set) => set.id), ['WebMercatorQuad']);
    });

    test('a tile is the XYZ web tile z/x/y with x the column and y the row: the same bytes, ETag, 304, and 204 when empty', async () => {
      for (const [z, row, col] of [[0, 0, 0], [3, 2, 4], [3, 3, 1], [5, 9, 16]]) {
        const ogc = await binary(hub, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/${z}/${row}/${col}`);
        const xyz = await binary(hub, `/hub/spaces/${SPACE}/tile/web/${z}_${col}_${row}.mvt`);
        assert.equal(ogc.status, 200, `${z}/${row}/${col}`);
        assert.equal(ogc.type, MVT);
        assert.ok(tileIds(ogc.bytes).length > 0, `${z}/${row}/${col} holds countries`);
        assert.deepEqual(ogc.bytes, xyz.bytes, `${z}/${row}/${col}`);
        assert.equal(ogc.etag, xyz.etag);
        assert.equal((await binary(hub, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/${z}/${row}/${col}`, { 'if-none-match': ogc.etag ?? '' })).status, 304);
      }
      // Swapped, 3/4/2 is another tile (row 4 is south of the equator, column 2 west of Africa).
      assert.notDeepEqual(tileIds((await binary(hub, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/3/4/2`)).bytes), tileIds((await binary(hub, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/3/2/4`)).bytes));
      // Mid-Pacific at level 6: no country.
      const empty = await binary(hub, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/6/30/2`);
      assert.equal(empty.status, 204);
      assert.equal(empty.bytes.length, 0);
    });

    test('MVT tiles keep 64 units beyond their edges (issue 27 §1), and margin widens that by 16 units a pixel', async () => {
      // web/3_4_2 (0°–45°E, 41°–66.5°N): France and Spain cross its west edge, Russia its east edge.
      const span = async (path: string) => {
        const layer = new VectorTile(new PbfReader((await binary(hub, path)).bytes)).layers[SPACE];
        const xs = Array.from({ length: layer.length }, (_, i) => layer.feature(i).loadGeometry().flat().map((point) => point.x)).flat();
        return [Math.min(...xs), Math.max(...xs)];
      };
      for (const [path, buffer] of [[`/ogc/collections/${SPACE}/tiles/WebMercatorQuad/3/2/4`, 64], [`/hub/spaces/${SPACE}/tile/web/3_4_2.mvt`, 64],
        [`/hub/spaces/${SPACE}/tile/web/3_4_2.mvt?margin=4`, 128]] as const) {
        const [min, max] = await span(path);
        assert.ok(Math.abs(min + buffer) <= 1 && Math.abs(max - 4096 - buffer) <= 1, `${path}: x from ${min} to ${max}, a buffer of ${buffer}`);
      }
    });

    test('bad tile coordinates are a 400, tiles outside the matrix set and unknown tile matrix sets a 404, in the OGC error shape', async () => {
      const tiles = `/ogc/collections/${SPACE}/tiles`;
      assertOgcError(await call(hub, 'GET', `${tiles}/WebMercatorQuad/25/0/0`), 404, 'ogcTileNotFound', /no tile 25\/0\/0.*0 to 24/);
      assertOgcError(await call(hub, 'GET', `${tiles}/WebMercatorQuad/3/8/0`), 404, 'ogcTileNotFound', /no tile 3\/8\/0/);
      assertOgcError(await call(hub, 'GET', `${tiles}/WebMercatorQuad/3/0/8`), 404, 'ogcTileNotFound', /no tile 3\/0\/8/);
      for (const [path, name] of [['x/0/0', 'tileMatrix'], ['3/-1/0', 'tileRow'], ['3/0/1e2', 'tileCol'], ['3/0/%20', 'tileCol'], ['99999999999/0/0', 'tileMatrix'], ['3/0.5/0', 'tileRow']]) {
        assertOgcError(await call(hub, 'GET', `${tiles}/WebMercatorQuad/${path}`), 400, 'ogcInvalidTile', new RegExp(`Invalid ${name}`));
      }
      assertOgcError(await call(hub, 'GET', `${tiles}/WorldCRS84Quad`), 404, 'ogcTileMatrixSetNotFound', /WorldCRS84Quad.*WebMercatorQuad/);
      assertOgcError(await call(hub, 'GET', `${tiles}/WorldCRS84Quad/0/0/0`), 404, 'ogcTileMatrixSetNotFound', /WorldCRS84Quad/);
      assertOgcError(await call(hub, 'GET', '/ogc/tileMatrixSets/Nope', { anonymous: true }), 404, 'ogcTileMatrixSetNotFound', /Nope/);
      assert.equal((await call(hub, 'GET', `/ogc/collections/no-such-space/tiles/WebMercatorQuad/0/0/0`)).status, 404);
      assert.equal((await call(hub, 'GET', `/hub/spaces/no-such-space/tilejson.json`)).status, 404);
    });

    test('rights: another account\'s token gets what the XYZ tile route gives it, and no feature; no token is a 401', async () => {
      const xyz = await call(hub, 'GET', `/hub/spaces/${SPACE}/tile/web/0_0_0.mvt`, { headers: { authorization: `Bearer ${other}` } });
      assert.ok(xyz.status === 403 || xyz.status === 404, xyz.text);
      for (const path of [`/ogc/collections/${SPACE}/tiles`, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad`,
        `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/0/0/0`, `/hub/spaces/${SPACE}/tilejson.json`]) {
        const refused = await call(hub, 'GET', path, { headers: { authorization: `Bearer ${other}` } });
        assert.equal(refused.status, xyz.status, `${path}: ${refused.text}`);
        assert.doesNotMatch(refused.text, /Countries|c17|tileMatrixSetLimits|vector_layers/, path);
        assert.equal((await call(hub, 'GET', path, { anonymous: true })).status, 401, path);
      }
    });

    test('TileJSON 3.0.0: the XYZ tile URL (with the token only when it came as access_token), bounds, zooms and the layer\'s fields', async () => {
      const viaQuery = await call(hub, 'GET', `/hub/spaces/${SPACE}/tilejson.json?access_token=${hub.token}`, { anonymous: true });
      assert.equal(viaQuery.status, 200, viaQuery.text);
      assert.match(viaQuery.headers.get('content-type') ?? '', /^application\/json/);
      const body = viaQuery.body as { tilejson: string; name: string; description: string; tiles: string[]; minzoom: number; maxzoom: number; bounds: number[];
        vector_layers: Array<{ id: string; fields: Record<string, string> }> };
      assert.equal(body.tilejson, '3.0.0');
      assert.equal(body.name, 'Countries');
      assert.equal(body.description, 'The world at 1:110m');
      assert.deepEqual(body.tiles, [`${hub.url}/hub/spaces/${SPACE}/tile/web/{z}_{x}_{y}.mvt?access_token=${hub.token}`]);
      assert.equal(body.minzoom, 0);
      assert.equal(body.maxzoom, 24);
      const [west, south, east, north] = ((await call(hub, 'GET', `/hub/spaces/${SPACE}/statistics`)).body.bbox as { value: number[] }).value;
      assert.deepEqual(body.bounds, [west, Math.max(south, -85.0511287798066), east, Math.min(north, 85.0511287798066)]);
      assert.deepEqual(body.vector_layers.map((layer) => layer.id), [SPACE]);
      assert.deepEqual(body.vector_layers[0].fields, { name: 'String', '@ns:com:here:xyz': 'String', id: 'String' });
      // The tile URL works as given, and its attributes are the fields.
      const tile = await binary(hub, body.tiles[0].slice(hub.url.length).replace('{z}_{x}_{y}', '1_1_0'), { authorization: '' });
      assert.equal(tile.status, 200);
      const layer = new VectorTile(new PbfReader(tile.bytes)).layers[SPACE];
      assert.deepEqual(Object.keys(layer.feature(0).properties).sort(), Object.keys(body.vector_layers[0].fields).sort());

      const viaHeader = await call(hub, 'GET', `/hub/spaces/${SPACE}/tilejson.json?access_token=${hub.token}`);
      assert.equal(viaHeader.status, 200);
      assert.deepEqual(viaHeader.body.tiles, [`${hub.url}/hub/spaces/${SPACE}/tile/web/{z}_{x}_{y}.mvt`], 'a header token never goes into a URL');
      assert.ok(!viaHeader.text.includes(hub.token));
      const empty = await call(hub, 'POST', '/hub/spaces', { body: { title: 'nothing' } });
      const nothing = await call(hub, 'GET', `/hub/spaces/${empty.body.id as string}/tilejson.json`);
      assert.deepEqual(nothing.body.bounds, [-180, -85.0511287798066, 180, 85.0511287798066], 'an empty space: the whole world');
      assert.deepEqual((nothing.body.vector_layers as Array<{ fields: object }>)[0].fields, { '@ns:com:here:xyz': 'String', id: 'String' });
    });

    test('GDAL: the MVT driver reads the tiles of the OGC route; the OGCAPI driver follows the tiles links down to the tile matrix set', { skip: GDAL_VERSION ? false : 'ogrinfo not found: install gdal-bin' }, async () => {
      const env = { ...process.env, GDAL_HTTP_HEADERS: `Authorization: Bearer ${hub.token}`, CPL_DEBUG: 'ON' };
      for (const [z, row, col] of [[3, 2, 4], [4, 5, 8]]) {
        const tile = await binary(hub, `/ogc/collections/${SPACE}/tiles/WebMercatorQuad/${z}/${row}/${col}`);
        const file = join(directory, `${z}-${row}-${col}.mvt`);
        writeFileSync(file, tile.bytes);
        const { stdout } = await run('ogrinfo', ['-ro', '-al', '-q', '-oo', `Z=${z}`, '-oo', `X=${col}`, '-oo', `Y=${row}`, `MVT:${file}`], { env, maxBuffer: 64 << 20 });
        const read = [...stdout.matchAll(/^\s+id \(String\) = (\S+)$/gm)].map((match) => match[1]).sort();
        assert.ok(read.length > 0, stdout.slice(0, 500));
        assert.deepEqual(read, tileIds(tile.bytes));
      }
      const opened = await run('ogrinfo', ['-ro', '-so', '-oo', 'API=TILES', `OGCAPI:${hub.url}/ogc/collections/${SPACE}`], { env, maxBuffer: 64 << 20 })
        .then(({ stdout, stderr }) => ({ ok: true, stdout, stderr }), (error: { stdout: string; stderr: string }) => ({ ok: false, stdout: error.stdout, stderr: error.stderr }));
      const fetched = [...opened.stderr.matchAll(/HTTP: Fetch\((.*)\)/g)].map((match) => match[1]);
      assert.deepEqual(fetched.slice(0, 4), [`${hub.url}/ogc/collections/${SPACE}`, `${hub.url}/ogc/collections/${SPACE}/tiles`,
        `${hub.url}/ogc/collections/${SPACE}/tiles/WebMercatorQuad`, `${hub.url}/ogc/tileMatrixSets/WebMercatorQuad`]);
      assert.doesNotMatch(opened.stderr, /ERROR/, 'GDAL understood every document, the tile matrix set too');
      // Debian 12's GDAL 3.6.2 was built without the driver's vector-tile branch, so it opens no layer (docs/vector-tiles.md); a later GDAL must.
      const [major, minor] = [Number(GDAL_VERSION?.[1]), Number(GDAL_VERSION?.[2])];
      if (major > 3 || (major === 3 && minor >= 7)) assert.ok(opened.ok && /Zoom level/.test(opened.stdout), opened.stdout + opened.stderr);
    });
  });
}
