// Black-box tests of the web viewer: the browser redirect of `/`, the files it is made of, and the page itself in headless Chromium.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

/** Debian's package; playwright-core never downloads a browser of its own. */
const CHROMIUM = '/usr/bin/chromium';
/** As root in a container Chromium needs --no-sandbox; SwiftShader gives MapLibre a software WebGL. */
const CHROMIUM_ARGS = ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const MAPLIBRE_DIST = dirname(createRequire(import.meta.url).resolve('maplibre-gl'));

/** fetch without following redirects, so that the redirect itself is seen. */
async function get(hub: HubProcess, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(hub.url + path, { headers, redirect: 'manual' });
}

/** node:http, because fetch adds `cache-control: no-cache` to conditional requests, which rightly defeats them. */
function statusOf(hub: HubProcess, path: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    request(hub.url + path, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode);
    }).on('error', reject).end();
  });
}

async function assertNotFound(hub: HubProcess, path: string): Promise<void> {
  const response = await get(hub, path);
  assert.equal(response.status, 404, path);
  const body = await response.json() as { type: string; code: string };
  assert.equal(body.type, 'error', path);
  assert.equal(body.code, 'routeNotFound', path);
}

for (const backend of BACKENDS) {
  describe(`web viewer routes (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    test('GET / from a browser (Accept: text/html) is redirected to the viewer', async () => {
      for (const accept of [BROWSER_ACCEPT, 'text/html', 'TEXT/HTML; charset=utf-8']) {
        const response = await get(hub, '/', { accept });
        assert.equal(response.status, 303, accept);
        assert.equal(response.headers.get('location'), '/viewer/');
        assert.match(response.headers.get('vary') ?? '', /Accept/);
      }
    });

    test('GET / from an API client keeps answering the service info', async () => {
      for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/plain, */*', 'text/html;q=0']) {
        const response = await get(hub, '/', accept === undefined ? {} : { accept });
        assert.equal(response.status, 200, String(accept));
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        assert.match(response.headers.get('vary') ?? '', /Accept/);
        const body = await response.json() as { reporter: { name: string } };
        assert.equal(body.reporter.name, 'Spatial Data Hub');
      }
      const hubPath = await get(hub, '/hub', { accept: BROWSER_ACCEPT });
      assert.equal(hubPath.status, 200, '/hub stays the API even for a browser');
    });

    test('the viewer page and its files are served without a token, with their content types and cache headers', async () => {
      const files: Array<[string, RegExp, RegExp, string]> = [
        ['/viewer/', /^text\/html/, /no-cache/, join(ROOT, 'viewer/index.html')],
        ['/viewer', /^text\/html/, /no-cache/, join(ROOT, 'viewer/index.html')],
        ['/viewer/index.html', /^text\/html/, /no-cache/, join(ROOT, 'viewer/index.html')],
        ['/viewer/viewer.js', /^(application|text)\/javascript/, /no-cache/, join(ROOT, 'viewer/viewer.js')],
        ['/viewer/viewer.css', /^text\/css/, /no-cache/, join(ROOT, 'viewer/viewer.css')],
        ['/viewer/world-110m.geojson', /^application\/geo\+json/, /max-age=86400/, join(ROOT, 'viewer/world-110m.geojson')],
        ['/viewer/lib/maplibre-gl.js', /^(application|text)\/javascript/, /max-age=86400/, join(MAPLIBRE_DIST, 'maplibre-gl.js')],
        ['/viewer/lib/maplibre-gl.css', /^text\/css/, /max-age=86400/, join(MAPLIBRE_DIST, 'maplibre-gl.css')],
      ];
      for (const [path, type, cache, file] of files) {
        const response = await get(hub, path);
        assert.equal(response.status, 200, path);
        assert.match(response.headers.get('content-type') ?? '', type, path);
        assert.match(response.headers.get('cache-control') ?? '', cache, path);
        assert.ok(response.headers.get('etag'), `${path}: ETag`);
        assert.equal(await response.text(), readFileSync(file, 'utf8'), path);
      }
    });

    test('the page loads MapLibre from the hub itself, never from another host', async () => {
      const page = readFileSync(join(ROOT, 'viewer/index.html'), 'utf8');
      assert.match(page, /<script src="\/viewer\/lib\/maplibre-gl\.js">/);
      assert.match(page, /href="\/viewer\/lib\/maplibre-gl\.css"/);
      for (const file of ['viewer/index.html', 'viewer/viewer.js', 'viewer/viewer.css']) {
        assert.doesNotMatch(readFileSync(join(ROOT, file), 'utf8'), /(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}\//i, `${file} names another host`);
      }
    });

    test('the world outline is a FeatureCollection of country polygons', async () => {
      const outline = await (await get(hub, '/viewer/world-110m.geojson')).json() as { type: string; features: Array<{ geometry: { type: string } }> };
      assert.equal(outline.type, 'FeatureCollection');
      assert.equal(outline.features.length, 180);
      assert.ok(outline.features.every((feature) => ['Polygon', 'MultiPolygon'].includes(feature.geometry.type)));
    });

    test('the files answer conditional requests and are compressed when asked', async () => {
      for (const path of ['/viewer/', '/viewer/lib/maplibre-gl.js']) {
        const first = await get(hub, path);
        assert.equal(await statusOf(hub, path, { 'if-none-match': first.headers.get('etag') ?? '' }), 304, path);
        assert.equal(await statusOf(hub, path, { 'if-modified-since': first.headers.get('last-modified') ?? '' }), 304, path);
      }
      const zipped = await get(hub, '/viewer/lib/maplibre-gl.js', { 'accept-encoding': 'gzip' });
      assert.equal(zipped.headers.get('content-encoding'), 'gzip');
    });

    test('nothing but the viewer files is reachable under /viewer/', async () => {
      for (const path of ['/viewer/nope.js', '/viewer/lib/maplibre-gl.js.map', '/viewer/lib/maplibre-gl-dev.js', '/viewer/lib/package.json',
        '/viewer/..%2Fpackage.json', '/viewer/lib/..%2F..%2Fpackage.json', '/viewer/lib/..%2Fmaplibre-gl.d.ts', '/viewer/.%2Fviewer.js', '/viewer/lib/']) {
        await assertNotFound(hub, path);
      }
      const posted = await fetch(`${hub.url}/viewer/viewer.js`, { method: 'POST' });
      assert.equal(posted.status, 405);
    });
  });
}

/** Reads the colours at `points` (page pixels) of a PNG screenshot, decoding it in a blank page of the same browser. */
async function pixelsAt(browser: Browser, png: Buffer, points: Array<{ x: number; y: number }>): Promise<number[][]> {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async ({ data, at }) => {
      const image = new Image();
      image.src = `data:image/png;base64,${data}`;
      await image.decode();
      const canvas = new OffscreenCanvas(image.width, image.height);
      const context = canvas.getContext('2d');
      if (!context) throw new Error('no 2d context');
      context.drawImage(image, 0, 0);
      return at.map(({ x, y }) => Array.from(context.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3)));
    }, { data: png.toString('base64'), at: points });
  } finally {
    await page.close();
  }
}

const hex = (colour: string) => [1, 3, 5].map((start) => parseInt(colour.slice(start, start + 2), 16));
/** Largest channel difference: anti-aliasing and colour management move a channel by a few units. */
const distance = (a: number[], b: number[]) => Math.max(...a.map((value, index) => Math.abs(value - b[index])));
const FEATURE = hex('#d62d20');
const LAND = hex('#f3f0e8');
const WATER = hex('#dbe9f3');

/** Nine parks, all points; the file starts with a byte-order mark. */
const FIXTURE = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/chicago_parks.geo.json'), 'utf8').replace(/^\uFEFF/, '')) as {
  features: Array<{ id: string; geometry: { coordinates: number[] } }>;
};
const PARKS: Array<{ id: string; coordinates: [number, number] }> = FIXTURE.features
  .map((feature) => ({ id: feature.id, coordinates: [feature.geometry.coordinates[0], feature.geometry.coordinates[1]] }));
const LAKEFRONT = new Set(['BP', 'GP', 'JP']);

/** Skipped with one line without Chromium, except in CI, where .ci/run installs it and the page must be tested. */
const chromiumMissing = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium)`;
if (chromiumMissing && process.env.CI) throw new Error(`The web viewer must be tested in CI, but ${chromiumMissing}`);

describe('web viewer in headless Chromium', { skip: chromiumMissing, timeout: 180_000 }, () => {
  let hub: HubProcess;
  let browser: Browser;
  let page: Page;
  let token: string;
  const problems: string[] = [];
  const requested: string[] = [];
  const authorization = () => ({ authorization: `Bearer ${token}` });

  before(async () => {
    hub = await startHub({ backend: BACKENDS.includes('sqlite') ? 'sqlite' : BACKENDS[0] });
    const aid = `viewer-${Date.now()}`;
    token = (await issueToken(hub, { aid, urm: ownerRights(aid) })).token;
    for (const space of [{ id: 'parks', title: 'Chicago parks' }, { id: 'empty-space', title: 'Nothing yet' }]) {
      const created = await call(hub, 'POST', '/hub/spaces', { body: space, headers: authorization() });
      assert.equal(created.status, 200, created.text);
    }
    const parks = readFileSync(join(ROOT, 'test/fixtures/chicago_parks.geo.json'));
    const written = await call(hub, 'PUT', '/hub/spaces/parks/features?addTags=park', { rawBody: parks, headers: authorization() });
    assert.equal(written.status, 200, written.text);
    const lakefront = { type: 'FeatureCollection', features: FIXTURE.features.filter((feature) => LAKEFRONT.has(feature.id)) };
    const tagged = await call(hub, 'PUT', '/hub/spaces/parks/features?addTags=park,lakefront', { body: lakefront, headers: authorization() });
    assert.equal(tagged.status, 200, tagged.text);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('request', (request) => requested.push(request.url()));
  });
  after(async () => {
    await browser?.close();
    await hub?.stop();
  });

  /** Waits until the map has drawn everything it is loading (MapLibre's `idle`, after a repaint). */
  /**
   * Waits until the map has drawn what its sources hold: its `idle` event, or (should a frame never come, as a
   * headless page may skip one) its own word that the style and every tile are loaded, asked every 50 ms.
   */
  const settled = () => page.evaluate(() => new Promise<void>((resolve) => {
    const { map } = (window as unknown as { hubViewer: { map: { once(event: string, listener: () => void): void; triggerRepaint(): void; loaded(): boolean; areTilesLoaded(): boolean } } }).hubViewer;
    const check = () => {
      if (map.loaded() && map.areTilesLoaded()) resolve();
      else setTimeout(check, 50);
    };
    map.once('idle', () => resolve());
    map.triggerRepaint();
    setTimeout(check, 50);
  }));
  /** The page pixel of each [lon, lat], through the map's own projection. */
  const project = async (coordinates: Array<[number, number]>) => {
    const box = await page.locator('#map').boundingBox();
    assert.ok(box);
    const points = await page.evaluate((lonLats) => {
      const { map } = (window as unknown as { hubViewer: { map: { project(lonLat: [number, number]): { x: number; y: number } } } }).hubViewer;
      return lonLats.map((lonLat) => map.project(lonLat));
    }, coordinates);
    return points.map((point) => ({ x: box.x + point.x, y: box.y + point.y }));
  };
  const renderedIds = () => page.evaluate(() => {
    const { map } = (window as unknown as { hubViewer: { map: { queryRenderedFeatures(options: object): Array<{ properties: { id: string } }> } } }).hubViewer;
    return [...new Set(map.queryRenderedFeatures({ layers: ['features-point'] }).map((feature) => feature.properties.id))].sort();
  });

  test('the page loads without console errors and draws the world outline offline', async () => {
    const response = await page.goto(`${hub.url}/`);
    assert.equal(response?.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/viewer/');
    assert.ok(await page.isVisible('#sign-in'));
    await page.waitForFunction(() => 'hubViewer' in window);
    await settled();
    // Inner Australia is land (no border near), the middle of the Pacific is water, at the world view the page opens with.
    const [australia, pacific] = await project([[134, -25], [-150, 0]]);
    const [land, water] = await pixelsAt(browser, await page.screenshot(), [australia, pacific]);
    assert.ok(distance(land, LAND) <= 6, `land is drawn: ${land}`);
    assert.ok(distance(water, WATER) <= 6, `water is drawn: ${water}`);
    assert.deepEqual(problems, []);
    assert.ok(requested.every((url) => url.startsWith(hub.url) || url.startsWith('data:') || url.startsWith('blob:')), `only the hub is asked: ${requested.join(' ')}`);
  });

  test('after sign-in the space list matches GET /hub/spaces, with counts, bounding boxes and last updates', async () => {
    await page.fill('#token', token);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#spaces tr');
    const listed = await call(hub, 'GET', '/hub/spaces?owner=*', { headers: authorization() });
    const own = await call(hub, 'GET', '/hub/spaces', { headers: authorization() });
    const spaces = JSON.parse(listed.text) as Array<{ id: string; title: string; contentUpdatedAt: number }>;
    assert.deepEqual(spaces.map((space) => space.id), (JSON.parse(own.text) as Array<{ id: string }>).map((space) => space.id));
    const rows = await page.locator('#spaces tr').evaluateAll((elements) => elements.map((row) => ({
      id: (row as HTMLElement).dataset.spaceId, cells: Array.from((row as HTMLTableRowElement).cells, (cell) => cell.textContent),
    })));
    assert.deepEqual(rows.map((row) => row.id), spaces.map((space) => space.id));
    for (const space of spaces) {
      const row = rows.find((candidate) => candidate.id === space.id);
      const statistics = (await call(hub, 'GET', `/hub/spaces/${space.id}/statistics`, { headers: authorization() })).body as { count: { value: number }; bbox: { value: number[] } };
      assert.equal(row?.cells[0], space.title);
      assert.equal(row?.cells[1], String(statistics.count.value));
      assert.equal(row?.cells[2], statistics.bbox.value.length === 4 ? statistics.bbox.value.map((value) => value.toFixed(4)).join(', ') : '—');
      assert.equal(row?.cells[3], `${new Date(space.contentUpdatedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`);
    }
    assert.equal(rows.find((row) => row.id === 'parks')?.cells[1], '9');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('spatial-hub-token')), token);
    assert.equal(await page.inputValue('#token'), '', 'the token field is emptied');
    assert.ok(!(await page.isVisible('#intro')));
    assert.deepEqual(problems, []);
  });

  test('opening the parks space zooms to its extent and draws every park (screenshot pixels)', async () => {
    await page.click('#spaces tr[data-space-id="parks"]');
    await page.waitForSelector('#space:not([hidden])');
    await settled();
    const view = await page.evaluate(() => {
      const { map } = (window as unknown as { hubViewer: { map: { getZoom(): number; getBounds(): { toArray(): number[][] } } } }).hubViewer;
      return { zoom: map.getZoom(), bounds: map.getBounds().toArray() };
    });
    const [[west, south], [east, north]] = view.bounds;
    for (const park of PARKS) {
      const [lon, lat] = park.coordinates;
      assert.ok(lon > west && lon < east && lat > south && lat < north, `${park.id} is in view ${view.bounds}`);
    }
    // The extent is about 0.24° by 0.22°: zoomed to it, not left at the world view.
    assert.ok(view.zoom > 9, `zoom ${view.zoom}`);
    assert.ok(east - west < 1, `view ${view.bounds}`);
    const parks = await project(PARKS.map((park) => park.coordinates));
    // Away from every park: the background (land; the 1:110m outline has no lakes).
    const background = { x: parks[0].x + 60, y: parks[0].y - 30 };
    const colours = await pixelsAt(browser, await page.screenshot(), [...parks, background]);
    const backgroundColour = colours.pop() ?? [];
    assert.ok(distance(backgroundColour, LAND) <= 6, `background ${backgroundColour}`);
    colours.forEach((colour, index) => {
      assert.ok(distance(colour, FEATURE) <= 12, `${PARKS[index].id} drawn in the feature colour: ${colour}`);
      assert.ok(distance(colour, backgroundColour) > 60, `${PARKS[index].id} differs from the background: ${colour}`);
    });
    assert.equal(await page.textContent('#stat-count'), '9');
    assert.equal(await page.textContent('#stat-geometry-types'), 'Point');
    assert.equal(await page.textContent('#stat-property-keys'), 'area, description, title');
    assert.deepEqual(await renderedIds(), PARKS.map((park) => park.id).sort());
    assert.deepEqual(problems, []);
  });

  test('clicking a feature shows its id, properties, tags and namespace', async () => {
    const lincoln = PARKS.find((park) => park.id === 'LP');
    const burnham = PARKS.find((park) => park.id === 'BP');
    assert.ok(lincoln && burnham);
    const [lincolnPoint, burnhamPoint] = await project([lincoln.coordinates, burnham.coordinates]);
    await page.mouse.click(lincolnPoint.x, lincolnPoint.y);
    await page.waitForFunction(() => document.getElementById('feature-id')?.textContent === 'LP');
    assert.ok(await page.isVisible('#feature'));
    assert.match(await page.textContent('#feature-properties') ?? '', /Lincoln Park/);
    assert.equal(await page.textContent('#feature-tags'), 'park');
    assert.equal((JSON.parse(await page.textContent('#feature-namespace') ?? '{}') as { space: string }).space, 'parks');
    await page.mouse.click(burnhamPoint.x, burnhamPoint.y);
    await page.waitForFunction(() => document.getElementById('feature-id')?.textContent === 'BP');
    assert.equal(await page.textContent('#feature-tags'), 'park, lakefront');
    assert.deepEqual(problems, []);
  });

  test('the tag filter and the property search narrow the map, and clearing them shows every feature again', async () => {
    await page.fill('#tag-filter', 'lakefront');
    await page.click('#apply-filter');
    await settled();
    assert.deepEqual(await renderedIds(), [...LAKEFRONT].sort());
    const lincoln = PARKS.find((park) => park.id === 'LP');
    assert.ok(lincoln);
    const [lincolnPoint] = await project([lincoln.coordinates]);
    const [hidden] = await pixelsAt(browser, await page.screenshot(), [lincolnPoint]);
    assert.ok(distance(hidden, LAND) <= 6, `a filtered-out park is no longer drawn: ${hidden}`);

    await page.fill('#tag-filter', 'lakefront+park,nothing');
    await page.selectOption('#property-key', 'title');
    await page.fill('#property-value', 'Grant Park');
    await page.click('#apply-filter');
    await settled();
    assert.deepEqual(await renderedIds(), ['GP']);
    assert.match(await page.textContent('#filter-state') ?? '', /lakefront\+park,nothing.*title = Grant Park/);

    // Quoted, the value is text (API.md 5.5): every area is a string in the fixture.
    await page.fill('#tag-filter', '');
    await page.selectOption('#property-key', 'area');
    await page.selectOption('#property-operator', '!=');
    await page.fill('#property-value', '"1200"');
    await page.click('#apply-filter');
    await settled();
    assert.deepEqual(await renderedIds(), PARKS.map((park) => park.id).filter((id) => id !== 'LP').sort());

    await page.click('#clear-filter');
    await settled();
    assert.deepEqual(await renderedIds(), PARKS.map((park) => park.id).sort());
    assert.deepEqual(problems, []);
  });

  test('the token never appears in a URL the browser requested', () => {
    assert.ok(requested.some((url) => url.includes('/hub/spaces/parks/tile/web/')), 'the map asked for vector tiles');
    assert.deepEqual(requested.filter((url) => url.includes(token)), []);
    assert.ok(!hub.stdout.includes(token) && !hub.stderr.includes(token));
  });

  test('the OGC API HTML pages open in the browser: landing page, collections, a collection\'s items', async () => {
    const ogc = await browser.newPage({ extraHTTPHeaders: authorization() });
    const errors: string[] = [];
    ogc.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    ogc.on('pageerror', (error) => errors.push(error.message));
    try {
      const landing = await ogc.goto(`${hub.url}/ogc`);
      assert.equal(landing?.status(), 200);
      assert.match(landing?.headers()['content-type'] ?? '', /^text\/html/);
      assert.match(await ogc.textContent('body') ?? '', /OGC API Features/);
      await ogc.goto(`${hub.url}/ogc/collections`);
      assert.match(await ogc.textContent('body') ?? '', /Chicago parks/);
      const items = await ogc.goto(`${hub.url}/ogc/collections/parks/items?limit=20`);
      assert.equal(items?.status(), 200);
      const text = await ogc.textContent('body') ?? '';
      for (const feature of FIXTURE.features) assert.ok(text.includes(feature.id), `item ${feature.id} is shown`);
      assert.deepEqual(errors, []);
    } finally {
      await ogc.close();
    }
  });

  test('a wrong token shows a clear message and lists nothing', async () => {
    const other = await browser.newPage();
    try {
      await other.goto(`${hub.url}/viewer/`);
      await other.fill('#token', 'not-a-valid-token');
      await other.click('#sign-in button[type=submit]');
      await other.waitForSelector('#message:not([hidden])');
      assert.match(await other.textContent('#message') ?? '', /refused this token \(401 Unauthorized\)/);
      assert.ok(await other.isVisible('#sign-in'), 'the sign-in form is back');
      assert.ok(await other.isVisible('#intro'));
      assert.ok(!(await other.isVisible('#space-list')));
      assert.equal(await other.evaluate(() => sessionStorage.getItem('spatial-hub-token')), null);
    } finally {
      await other.close();
    }
  });

  test('a reload keeps the session and reopens the space named in the address', async () => {
    assert.equal(new URL(page.url()).hash, '#parks');
    await page.reload();
    await page.waitForSelector('#space:not([hidden])');
    await settled();
    assert.equal(await page.textContent('#space-title'), 'Chicago parks');
    assert.ok(!(await page.isVisible('#sign-in')));
    assert.deepEqual(await renderedIds(), PARKS.map((park) => park.id).sort());
    assert.deepEqual(problems, []);
  });

  test('a write through the API appears on the map without a reload, and the page counts the changes', async () => {
    const created = await call(hub, 'POST', '/hub/spaces', { body: { id: 'live-map', title: 'Live map', versionsToKeep: 10 }, headers: authorization() });
    assert.equal(created.status, 200, created.text);
    const write = async (method: string, path: string, body?: object) => {
      const response = await call(hub, method, `/hub/spaces/live-map${path}`, { body, headers: authorization() });
      assert.ok(response.status === 200 || response.status === 204, response.text);
    };
    const parkPoint = (id: string, coordinates: [number, number]) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates }, properties: {} });
    await write('PUT', '/features', { type: 'FeatureCollection', features: [parkPoint('A', [-87.64, 41.86]), parkPoint('B', [-87.6, 41.9])] });
    await page.goto(`${hub.url}/viewer/#live-map`);
    await page.reload();
    await page.waitForSelector('#live:not([hidden])');
    await settled();
    assert.deepEqual(await renderedIds(), ['A', 'B']);
    assert.equal(await page.textContent('#live-count'), '0 changes');
    await page.evaluate(() => { (window as unknown as { notReloaded: boolean }).notReloaded = true; });
    /** Until the map draws `ids`: the redraw follows the event by a moment. */
    const drawn = async (ids: string[]) => {
      for (let tries = 0; JSON.stringify(await renderedIds()) !== JSON.stringify(ids); tries++) {
        assert.ok(tries < 100, `the map draws ${ids.join(', ')}, not ${(await renderedIds()).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        await settled();
      }
    };
    await write('PUT', '/features/C', parkPoint('C', [-87.62, 41.88]));
    await page.waitForFunction(() => document.getElementById('live-count')?.textContent === '1 change');
    await drawn(['A', 'B', 'C']);
    await write('DELETE', '/features/B');
    await page.waitForFunction(() => document.getElementById('live-count')?.textContent === '2 changes');
    await drawn(['A', 'C']);
    assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'the page was not reloaded');
    assert.deepEqual(problems, []);
  });

  test('signing out forgets the token', async () => {
    await page.click('#sign-out');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('spatial-hub-token')), null);
    assert.ok(await page.isVisible('#sign-in'));
    assert.ok(!(await page.isVisible('#space-list')));
    assert.ok(!(await page.isVisible('#space')));
  });
});
