// MapLibre GL in headless Chromium draws the hub's vector tiles: no outline along tile edges (issue 27 §1), and a space from its TileJSON alone (issue 26 §2).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

/** Debian's package; playwright-core never downloads a browser of its own. */
const CHROMIUM = '/usr/bin/chromium';
/** As root in a container Chromium needs --no-sandbox; SwiftShader gives MapLibre a software WebGL. */
const CHROMIUM_ARGS = ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];
const chromiumMissing = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium)`;
if (chromiumMissing && process.env.CI) throw new Error(`The vector tiles must be tested in a browser in CI, but ${chromiumMissing}`);

/** A page on the hub's own origin (answered by the browser, not the hub) that loads the MapLibre the hub serves to its viewer. */
const MAP_PAGE = '/maplibre-test-page.html';
const PAGE_HTML = `<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/viewer/lib/maplibre-gl.css"><script src="/viewer/lib/maplibre-gl.js"></script>
<style>body { margin: 0 } #map { width: 512px; height: 512px }</style></head><body><div id="map"></div></body></html>`;

const FILL = '#a0c8f0';
const LINE = '#d00000';
const BACKGROUND = '#ffffff';
const hex = (colour: string) => [1, 3, 5].map((start) => parseInt(colour.slice(start, start + 2), 16));
/** Largest channel difference: anti-aliasing moves a channel by a few units. */
const distance = (a: number[], b: number[]) => Math.max(...a.map((value, index) => Math.abs(value - b[index])));

/** A square of 40° around (0, 0): at zoom 3 the tile edges at longitude 0 and latitude 0 cross it. */
const SQUARE = { type: 'Feature', id: 'square', properties: { name: 'square', rank: 1 },
  geometry: { type: 'Polygon', coordinates: [[[-20, -20], [20, -20], [20, 20], [-20, 20], [-20, -20]]] } };

interface Rendered {
  /** The RGB colour at each asked [lon, lat], and a pixel either side of it along x and y. */
  colours: number[][][];
  /** Names of the features MapLibre rendered. */
  names: string[];
}

/** Draws `style` at `zoom` around (0, 0) and reads the colours at `places` once every tile is drawn. */
async function render(page: Page, style: object, zoom: number, places: Array<[number, number]>): Promise<Rendered> {
  return page.evaluate(async ({ style, zoom, places }) => {
    interface MapLike {
      once(event: string, listener: () => void): void;
      on(event: string, listener: (event: { error?: Error }) => void): void;
      project(lonLat: [number, number]): { x: number; y: number };
      getCanvas(): HTMLCanvasElement;
      queryRenderedFeatures(): Array<{ properties: { name?: string } }>;
      remove(): void;
    }
    const library = (window as unknown as { maplibregl: { Map: new (options: object) => MapLike } }).maplibregl;
    const map = new library.Map({ container: 'map', style, center: [0, 0], zoom, fadeDuration: 0, attributionControl: false,
      canvasContextAttributes: { preserveDrawingBuffer: true } });
    // A tile or TileJSON the map cannot load fails the render at once (it would never become idle).
    await new Promise<void>((resolve, reject) => {
      map.once('idle', resolve);
      map.on('error', (event) => reject(new Error(`the map reports: ${String(event.error?.message ?? event.error)}`)));
    });
    const canvas = map.getCanvas();
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const context = copy.getContext('2d');
    if (!context) throw new Error('no 2d context');
    context.drawImage(canvas, 0, 0);
    const scale = canvas.width / canvas.clientWidth;
    const at = (x: number, y: number) => Array.from(context.getImageData(Math.round(x * scale), Math.round(y * scale), 1, 1).data.slice(0, 3));
    const colours = places.map((place) => {
      const { x, y } = map.project(place);
      return [at(x, y), at(x - 1, y), at(x + 1, y), at(x, y - 1), at(x, y + 1)];
    });
    const names = [...new Set(map.queryRenderedFeatures().map((feature) => String(feature.properties.name)))].sort();
    map.remove();
    return { colours, names };
  }, { style, zoom, places });
}

/** A fill and an outline of one vector source's layer over a white background. */
function polygonStyle(source: object, layer: string): object {
  return {
    version: 8,
    sources: { s: source },
    layers: [
      { id: 'background', type: 'background', paint: { 'background-color': BACKGROUND } },
      { id: 'fill', type: 'fill', source: 's', 'source-layer': layer, paint: { 'fill-color': FILL, 'fill-antialias': false } },
      { id: 'outline', type: 'line', source: 's', 'source-layer': layer, paint: { 'line-color': LINE, 'line-width': 3 } },
    ],
  };
}

describe('vector tiles in MapLibre GL (headless Chromium)', { skip: chromiumMissing, timeout: 240_000 }, () => {
  let browser: Browser;
  before(async () => { browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }); });
  after(async () => { await browser?.close(); });

  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      let page: Page;
      let token: string;
      const problems: string[] = [];
      const requested: string[] = [];

      before(async () => {
        hub = await startHub({ backend });
        const aid = `tiles-${Date.now()}`;
        token = (await issueToken(hub, { aid, urm: ownerRights(aid) })).token;
        const headers = { authorization: `Bearer ${token}` };
        const created = await call(hub, 'POST', '/hub/spaces', { body: { id: 'seams', title: 'A square over four tiles' }, headers });
        assert.equal(created.status, 200, created.text);
        const written = await call(hub, 'PUT', '/hub/spaces/seams/features', { body: { type: 'FeatureCollection', features: [SQUARE] }, headers });
        assert.equal(written.status, 200, written.text);
        page = await browser.newPage({ viewport: { width: 512, height: 512 } });
        await page.route(`${hub.url}${MAP_PAGE}`, (route) => route.fulfill({ contentType: 'text/html', body: PAGE_HTML }));
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        page.on('request', (request) => requested.push(request.url()));
        await page.goto(`${hub.url}${MAP_PAGE}`);
        await page.waitForFunction(() => 'maplibregl' in window);
      });
      after(async () => {
        await page?.close();
        await hub?.stop();
      });

      test('an outlined polygon across tile edges shows no stroke along the edges, only along its own', async () => {
        const tiles = `${hub.url}/hub/spaces/seams/tile/web/{z}_{x}_{y}.mvt?access_token=${token}`;
        const style = polygonStyle({ type: 'vector', tiles: [tiles], maxzoom: 24 }, 'seams');
        // Along the tile edges at longitude 0 and latitude 0, away from the square's own edges; then inside, then on its edges.
        const seams: Array<[number, number]> = [-15, -10, -5, 5, 10, 15].flatMap((along): Array<[number, number]> => [[0, along], [along, 0]]);
        const inside: Array<[number, number]> = [[-10, -10], [10, 10]];
        const edges: Array<[number, number]> = [[-20, 10], [20, -10], [10, 20], [-10, -20]];
        const { colours } = await render(page, style, 3, [...seams, ...inside, ...edges]);
        const seamColours = colours.slice(0, seams.length);
        const insideColours = colours.slice(seams.length, seams.length + inside.length).map((around) => around[0]);
        const edgeColours = colours.slice(seams.length + inside.length);
        for (const colour of insideColours) assert.ok(distance(colour, hex(FILL)) <= 8, `inside the square is filled: ${colour}`);
        edgeColours.forEach((around, index) => {
          assert.ok(around.some((colour) => distance(colour, hex(LINE)) <= 40), `the square's own edge at ${edges[index]} is stroked: ${JSON.stringify(around)}`);
        });
        seamColours.forEach((around, index) => {
          for (const colour of around) {
            assert.ok(distance(colour, insideColours[0]) <= 8, `at ${seams[index]} on a tile edge the pixels are those inside the square, no stroke: ${JSON.stringify(around)}`);
          }
        });
        assert.deepEqual(problems, []);
      });

      test('a map given only the TileJSON URL (token as access_token) draws the space, and its tiles carry the token the same way', async () => {
        const tileJson = `${hub.url}/hub/spaces/seams/tilejson.json?access_token=${token}`;
        const style = polygonStyle({ type: 'vector', url: tileJson }, 'seams');
        const { colours, names } = await render(page, style, 2, [[10, 10], [-10, -10], [30, 30]]);
        assert.ok(distance(colours[0][0], hex(FILL)) <= 8, `the square is drawn: ${colours[0][0]}`);
        assert.ok(distance(colours[1][0], hex(FILL)) <= 8, `the square is drawn: ${colours[1][0]}`);
        assert.ok(distance(colours[2][0], hex(BACKGROUND)) <= 8, `outside it the background: ${JSON.stringify(colours[2])}`);
        assert.deepEqual(names, ['square']);
        assert.ok(requested.some((url) => url.startsWith(`${hub.url}/hub/spaces/seams/tile/web/2_`)), `tiles were asked for: ${requested.join(' ')}`);
        assert.ok(requested.every((url) => url.startsWith(hub.url)), 'only the hub is asked');
        assert.deepEqual(problems, []);
      });
    });
  }
});
