// The web viewer: signs in with a hub token, lists the spaces, draws a space from the hub's vector tiles over a world outline, and redraws it as it changes.
/* global maplibregl */

/** sessionStorage: the token lives as long as the tab, and never goes into a URL (it would end up in logs). */
const TOKEN_KEY = 'spatial-hub-token';
const FEATURE_COLOR = '#d62d20';
const WORLD_OUTLINE = '/viewer/world-110m.geojson';
/** Statistics are asked for a few spaces at a time, so that a long list does not flood the hub. */
const STATISTICS_PARALLEL = 4;
/** Changes coming in a burst are drawn together: the tiles are asked for again at most this often. */
const REDRAW_MS = 250;
/** A broken event stream is opened again after this long, from the last version it delivered. */
const RECONNECT_MS = 2000;

const $ = (id) => document.getElementById(id);

class Unauthorized extends Error {}

let token = sessionStorage.getItem(TOKEN_KEY);
/** The open space: its id, its statistics, its tile URL and its event stream. */
let current;

const map = new maplibregl.Map({
  container: 'map',
  center: [0, 20],
  zoom: 1,
  attributionControl: { compact: true, customAttribution: 'World outline: Natural Earth (public domain)' },
  style: {
    version: 8,
    sources: { world: { type: 'geojson', data: WORLD_OUTLINE } },
    layers: [
      { id: 'water', type: 'background', paint: { 'background-color': '#dbe9f3' } },
      { id: 'land', type: 'fill', source: 'world', paint: { 'fill-color': '#f3f0e8' } },
      { id: 'borders', type: 'line', source: 'world', paint: { 'line-color': '#b8b0a0', 'line-width': 0.8 } },
    ],
  },
  // Only the hub's own API calls carry the token, in the Authorization header.
  transformRequest: (url) => (token && url.startsWith(`${location.origin}/hub/`) ? { url, headers: { authorization: `Bearer ${token}` } } : { url }),
});
map.addControl(new maplibregl.NavigationControl(), 'top-right');
map.on('error', (event) => showMessage(`Map: ${event.error?.message ?? 'an error occurred'}`));
const mapLoaded = new Promise((resolve) => map.once('load', resolve));
// For browser tests and console scripting: the map's view and rendered features.
window.hubViewer = { map };

function showMessage(text) {
  $('message').textContent = text;
  $('message').hidden = false;
}

function clearMessage() {
  $('message').hidden = true;
  $('message').textContent = '';
}

/** One hub API call with the token; a 401 ends the session with a clear message. */
async function api(path) {
  const response = await fetch(path, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  if (response.status === 401) throw new Unauthorized();
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(`${path.split('?')[0]} answered ${response.status}: ${body.errorMessage ?? body.message ?? response.statusText}`);
  }
  return response.json();
}

function failed(error) {
  if (error instanceof Unauthorized) {
    signOut();
    showMessage('The hub refused this token (401 Unauthorized): it is wrong or expired. Check it and sign in again.');
    return;
  }
  showMessage(error.message);
}

const formatBbox = (bbox) => (bbox && bbox.length === 4 ? bbox.map((value) => value.toFixed(4)).join(', ') : '—');
const formatTime = (ms) => (ms ? `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—');

/** Runs `task` over `items`, `parallel` at a time, keeping the order of the results. */
async function inBatches(items, parallel, task) {
  const results = [];
  for (let start = 0; start < items.length; start += parallel) {
    results.push(...await Promise.all(items.slice(start, start + parallel).map(task)));
  }
  return results;
}

async function listSpaces() {
  const spaces = await api('/hub/spaces?owner=*');
  const statistics = await inBatches(spaces, STATISTICS_PARALLEL, (space) => api(`/hub/spaces/${encodeURIComponent(space.id)}/statistics`));
  const rows = spaces.map((space, index) => {
    const row = document.createElement('tr');
    row.dataset.spaceId = space.id;
    row.tabIndex = 0;
    const cells = [space.title ?? space.id, String(statistics[index].count.value), formatBbox(statistics[index].bbox.value),
      formatTime(space.contentUpdatedAt ?? space.updatedAt)];
    for (const text of cells) row.insertCell().textContent = text;
    const open = () => openSpace(space, statistics[index]).catch(failed);
    row.addEventListener('click', open);
    row.addEventListener('keydown', (event) => { if (event.key === 'Enter') open(); });
    return row;
  });
  $('spaces').replaceChildren(...rows);
  $('no-spaces').hidden = rows.length > 0;
  $('space-list').hidden = false;
  return spaces;
}

async function signIn() {
  $('sign-in').hidden = true;
  $('intro').hidden = true;
  $('sign-out').hidden = false;
  const spaces = await listSpaces();
  const wanted = decodeURIComponent(location.hash.slice(1));
  const space = spaces.find((candidate) => candidate.id === wanted);
  if (space) await openSpace(space, await api(`/hub/spaces/${encodeURIComponent(space.id)}/statistics`));
}

function signOut() {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  closeSpace();
  $('spaces').replaceChildren();
  $('space-list').hidden = true;
  $('sign-in').hidden = false;
  $('intro').hidden = false;
  $('sign-out').hidden = true;
}

const LAYERS = [
  { id: 'features-fill', type: 'fill', geometry: 'Polygon', paint: { 'fill-color': FEATURE_COLOR, 'fill-opacity': 0.35 } },
  { id: 'features-line', type: 'line', geometry: ['LineString', 'Polygon'], paint: { 'line-color': FEATURE_COLOR, 'line-width': 2 } },
  { id: 'features-point', type: 'circle', geometry: 'Point',
    paint: { 'circle-color': FEATURE_COLOR, 'circle-radius': 6, 'circle-stroke-color': '#ffffff', 'circle-stroke-width': 1.5 } },
];
const LAYER_IDS = LAYERS.map((layer) => layer.id);

/** The tile URL template with the filters as query parameters; `+` and `,` of the tag expression stay unencoded (API.md 5.4). */
function tileUrl(spaceId, filters) {
  const query = [];
  if (filters.tags) {
    const expression = filters.tags.split(',').map((group) => group.split('+').map((tag) => encodeURIComponent(tag.trim())).join('+')).join(',');
    query.push(`tags=${expression}`);
  }
  if (filters.key) query.push(`p.${encodeURIComponent(filters.key)}${filters.operator}${encodeURIComponent(filters.value)}`);
  return `${location.origin}/hub/spaces/${encodeURIComponent(spaceId)}/tile/web/{z}_{x}_{y}.mvt${query.length ? `?${query.join('&')}` : ''}`;
}

function closeSpace() {
  current?.live?.abort();
  $('live').hidden = true;
  for (const id of LAYER_IDS) if (map.getLayer(id)) map.removeLayer(id);
  if (map.getSource('space')) map.removeSource('space');
  current = undefined;
  $('space').hidden = true;
  $('feature').hidden = true;
  for (const row of $('spaces').rows) row.classList.remove('open');
}

function showStatistics(statistics) {
  $('stat-count').textContent = `${statistics.count.value}${statistics.count.estimated ? ' (estimated)' : ''}`;
  $('stat-geometry-types').textContent = statistics.geometryTypes.value.join(', ') || '—';
  const keys = statistics.properties.value.map((property) => property.key);
  $('stat-property-keys').textContent = keys.join(', ') || '—';
  $('property-key').replaceChildren(new Option('(none)', ''), ...keys.map((key) => new Option(key, key)));
  $('known-tags').replaceChildren(...statistics.tags.value.map((tag) => new Option(`${tag.count} features`, tag.key)));
}

async function openSpace(space, statistics) {
  await mapLoaded;
  closeSpace();
  clearMessage();
  current = { id: space.id, statistics };
  history.replaceState(null, '', `#${encodeURIComponent(space.id)}`);
  for (const row of $('spaces').rows) row.classList.toggle('open', row.dataset.spaceId === space.id);
  $('space-title').textContent = space.title ?? space.id;
  showStatistics(statistics);
  $('filters').reset();
  $('filter-state').textContent = '';
  current.tiles = tileUrl(space.id, {});
  map.addSource('space', { type: 'vector', tiles: [current.tiles], maxzoom: 18 });
  for (const layer of LAYERS) {
    const types = [layer.geometry].flat();
    // The vector tile's one layer is named after the space id (API.md 6.2).
    map.addLayer({ id: layer.id, type: layer.type, source: 'space', 'source-layer': space.id, paint: layer.paint,
      filter: ['in', ['geometry-type'], ['literal', types]] });
  }
  $('space').hidden = false;
  if (hasOwnHistory(space)) follow(current);
  const bbox = statistics.bbox.value;
  if (bbox.length === 4) map.fitBounds([[bbox[0], bbox[1]], [bbox[2], bbox[3]]], { padding: 40, maxZoom: 16, animate: false });
}

/** Spaces keeping history have an event stream; one keeping one version, or made of layers, has none (docs/events.md). */
const hasOwnHistory = (space) => (space.versionsToKeep ?? 1) > 1 && !space.extends && space.storage?.id !== 'virtualspace';

/** The events of one `text/event-stream` text, and what is left of it (an event not complete yet). */
function parseEvents(text) {
  const blocks = text.split('\n\n');
  const rest = blocks.pop();
  const events = blocks.map((block) => {
    const event = { type: 'message', data: '' };
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon === 0) continue;
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event.type = value;
      else if (field === 'id') event.id = value;
      else if (field === 'data') event.data += value;
    }
    return event;
  });
  // Blocks without data (comments such as the heartbeat) are no events.
  return { events: events.filter((event) => event.data !== '' || event.id !== undefined), rest };
}

/** The tiles are asked for again (the hub answers them no-cache, so revalidated by ETag); the map keeps the old ones until the new ones come. */
function redraw(space) {
  if (space.redrawing) return;
  space.redrawing = setTimeout(() => {
    space.redrawing = undefined;
    if (current === space) map.getSource('space')?.setTiles([space.tiles]);
  }, REDRAW_MS);
}

function showChanges(space) {
  $('live-count').textContent = `${space.changes} change${space.changes === 1 ? '' : 's'}`;
}

/**
 * Follows the space's event stream from now on and redraws on each change. Read with fetch, not EventSource,
 * because EventSource cannot send the Authorization header and the token must not go into a URL; it resumes after
 * a break from the last version it got (Last-Event-ID), as EventSource would.
 */
async function follow(space) {
  const live = new AbortController();
  space.live = live;
  space.changes = 0;
  showChanges(space);
  let lastEventId;
  while (!live.signal.aborted) {
    try {
      const headers = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const response = await fetch(`/hub/spaces/${encodeURIComponent(space.id)}/events`, { headers, signal: live.signal });
      if (response.status === 401) throw new Unauthorized();
      if (!response.ok) {
        $('live').hidden = true;
        return;
      }
      // Shown once the stream is open: the hub has fixed where it starts (HEAD then, or the last version received).
      $('live').hidden = false;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        const { events, rest } = parseEvents(text + chunk.value);
        text = rest;
        for (const event of events) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.type === 'message' && event.data !== '') {
            space.changes++;
            showChanges(space);
          }
          if (event.type === 'message' || event.type === 'reset') redraw(space);
        }
      }
    } catch (error) {
      if (live.signal.aborted) return;
      if (error instanceof Unauthorized) return failed(error);
    }
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}

function applyFilters(event) {
  event.preventDefault();
  if (!current) return;
  const filters = {
    tags: $('tag-filter').value.trim(),
    key: $('property-key').value,
    operator: $('property-operator').value,
    value: $('property-value').value,
  };
  current.tiles = tileUrl(current.id, filters);
  map.getSource('space').setTiles([current.tiles]);
  const parts = [];
  if (filters.tags) parts.push(`tags ${filters.tags}`);
  if (filters.key) parts.push(`${filters.key} ${$('property-operator').selectedOptions[0].textContent} ${filters.value}`);
  $('filter-state').textContent = parts.length ? `Showing features with ${parts.join(' and ')}.` : '';
}

function clearFilters() {
  $('filters').reset();
  if (current) {
    current.tiles = tileUrl(current.id, {});
    map.getSource('space').setTiles([current.tiles]);
  }
  $('filter-state').textContent = '';
}

/** The clicked feature in full, from the hub: the tile holds only its top-level properties. */
async function showFeature(featureId) {
  const feature = await api(`/hub/spaces/${encodeURIComponent(current.id)}/features/${encodeURIComponent(featureId)}`);
  const { '@ns:com:here:xyz': namespace = {}, ...properties } = feature.properties ?? {};
  $('feature-id').textContent = feature.id;
  const rows = Object.entries(properties).map(([key, value]) => {
    const row = document.createElement('tr');
    row.insertCell().textContent = key;
    row.insertCell().textContent = typeof value === 'string' ? value : JSON.stringify(value);
    return row;
  });
  $('feature-properties').replaceChildren(...rows);
  $('feature-tags').textContent = (namespace.tags ?? []).join(', ') || '—';
  $('feature-namespace').textContent = JSON.stringify(namespace, null, 2);
  $('feature').hidden = false;
}

map.on('click', (event) => {
  if (!current) return;
  const [feature] = map.queryRenderedFeatures(event.point, { layers: LAYER_IDS });
  if (feature) showFeature(String(feature.properties.id)).catch(failed);
});
map.on('mousemove', (event) => {
  const hit = current && map.queryRenderedFeatures(event.point, { layers: LAYER_IDS }).length > 0;
  map.getCanvas().style.cursor = hit ? 'pointer' : '';
});

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  clearMessage();
  token = $('token').value.trim();
  $('token').value = '';
  sessionStorage.setItem(TOKEN_KEY, token);
  signIn().catch(failed);
});
$('sign-out').addEventListener('click', () => { signOut(); clearMessage(); });
$('filters').addEventListener('submit', applyFilters);
$('clear-filter').addEventListener('click', clearFilters);

if (token) signIn().catch(failed);
