// Every route of the route table against every kind of caller (API.md 8.3): the expected status, and nothing changed when refused.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Method, routes } from '../../src/http/routes.js';
import { call, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { deleteStoredToken, issueToken, ownerRights } from '../helpers/tokens.js';

type Caller = 'full' | 'readOnly' | 'otherSpace' | 'otherAccount' | 'otherOnShared' | 'expired' | 'deleted' | 'malformed' | 'none';
const CALLERS: Caller[] = ['full', 'readOnly', 'otherSpace', 'otherAccount', 'otherOnShared', 'expired', 'deleted', 'malformed', 'none'];

/**
 * What a route does to A's space: `public` needs nothing; `read` needs readFeatures (none on a shared space);
 * `insert`, `update` and `remove` need the feature action; `view` any right on the space; `manage` manageSpaces;
 * `list` any hub right; `create` manageSpaces for a new space of the caller's own.
 */
type Kind = 'public' | 'read' | 'insert' | 'update' | 'remove' | 'view' | 'manage' | 'list' | 'create' | ProjectKind | SessionKind | JobKind;
/**
 * The Project API needs no urm right (docs/decisions.md, "Projects"): any valid token lists and creates its account's
 * projects, A's tokens read and change A's projects, other accounts read them only when published (the `otherOnShared`
 * caller gets a published project) and never change them.
 */
type ProjectKind = 'projectList' | 'projectCreate' | 'projectRead' | 'projectChange';
/**
 * A job of A's (docs/jobs.md) on A's space, made with A's full token: `jobRead` a SUCCEEDED export (readFeatures on the space),
 * `jobWrite` an import waiting for its input (createFeatures and updateFeatures). Another account's caller finds no such job (404).
 */
type JobKind = 'jobRead' | 'jobWrite';
/** The Account and Token APIs authenticate by the login session (API.md 9.1): a bearer token is no session, whoever's it is. */
type SessionKind = 'session';

interface Case {
  kind: Kind;
  /** The request against `target`: A's space holding features f1 and f2, or for project kinds A's project. */
  request(target: string): { path: string; body?: unknown };
  /** An answer that never ends (an event stream): only its status and first bytes are read. */
  stream?: true;
}

const feature = (id: string) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [8.5, 50.1] }, properties: { n: 1 } });
const SPACE = '/hub/spaces/:spaceId';
const FEATURE = `${SPACE}/features/:featureId`;
const COLLECTION = '/ogc/collections/:spaceId';
const ITEM = `${COLLECTION}/items/:featureId`;
const JOB = '/hub/jobs/:jobId';

/** A subscription to a name that never resolves (RFC 2606), so that nothing is sent anywhere. */
const SUBSCRIPTION = { destination: 'https://subscriber.invalid/hook', config: { type: 'PER_TRANSACTION' } };

/** One row per route of the table, keyed `METHOD path`. */
const CASES: Record<string, Case> = {
  'GET /': { kind: 'public', request: () => ({ path: '/' }) },
  'GET /hub': { kind: 'public', request: () => ({ path: '/hub' }) },
  'GET /hub/health-status': { kind: 'public', request: () => ({ path: '/hub/health-status' }) },
  'GET /hub/static/openapi/stable.yaml': { kind: 'public', request: () => ({ path: '/hub/static/openapi/stable.yaml' }) },
  // Not a token's rights but HUB_METRICS decides (docs/operations.md): by default every loopback caller, as the tests are.
  'GET /metrics': { kind: 'public', request: () => ({ path: '/metrics' }) },
  'GET /hub/spaces': { kind: 'list', request: () => ({ path: '/hub/spaces' }) },
  'POST /hub/spaces': { kind: 'create', request: () => ({ path: '/hub/spaces', body: { title: 'new' } }) },
  [`GET ${SPACE}`]: { kind: 'view', request: (s) => ({ path: `/hub/spaces/${s}` }) },
  [`PATCH ${SPACE}`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}`, body: { title: 'patched' } }) },
  [`DELETE ${SPACE}`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}` }) },
  [`GET ${SPACE}/features`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/features?id=f1` }) },
  [`PUT ${SPACE}/features`]: { kind: 'insert', request: (s) => ({ path: `/hub/spaces/${s}/features`, body: { type: 'FeatureCollection', features: [feature('f9')] } }) },
  [`POST ${SPACE}/features`]: { kind: 'insert', request: (s) => ({ path: `/hub/spaces/${s}/features`, body: { type: 'FeatureCollection', features: [feature('f9')] } }) },
  [`DELETE ${SPACE}/features`]: { kind: 'remove', request: (s) => ({ path: `/hub/spaces/${s}/features?id=f1` }) },
  [`GET ${FEATURE}`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/features/f1` }) },
  [`PUT ${FEATURE}`]: { kind: 'update', request: (s) => ({ path: `/hub/spaces/${s}/features/f1`, body: { ...feature('f1'), properties: { n: 2 } } }) },
  [`PATCH ${FEATURE}`]: { kind: 'update', request: (s) => ({ path: `/hub/spaces/${s}/features/f1`, body: { type: 'Feature', properties: { n: 3 } } }) },
  [`DELETE ${FEATURE}`]: { kind: 'remove', request: (s) => ({ path: `/hub/spaces/${s}/features/f1` }) },
  [`GET ${SPACE}/search`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/search` }) },
  [`GET ${SPACE}/iterate`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/iterate` }) },
  [`GET ${SPACE}/count`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/count` }) },
  [`GET ${SPACE}/statistics`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/statistics` }) },
  [`GET ${SPACE}/bbox`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/bbox?west=8&south=50&east=9&north=51` }) },
  [`GET ${SPACE}/tile/:type/:tileId`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/tile/web/0_0_0` }) },
  [`GET ${SPACE}/tilejson.json`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/tilejson.json` }) },
  [`GET ${SPACE}/spatial`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/spatial?lat=50.1&lon=8.5&radius=100` }) },
  [`POST ${SPACE}/spatial`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/spatial`, body: { type: 'Point', coordinates: [8.5, 50.1] } }) },
  [`GET ${SPACE}/changesets`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/changesets` }) },
  [`DELETE ${SPACE}/changesets`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/changesets?version=lt=1` }) },
  [`GET ${SPACE}/changesets/tiles`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/changesets/tiles?startVersion=0&type=web&level=3` }) },
  [`GET ${SPACE}/changesets/:version`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/changesets/0` }) },
  [`GET ${SPACE}/events`]: { kind: 'read', stream: true, request: (s) => ({ path: `/hub/spaces/${s}/events?since=-1` }) },
  [`GET ${SPACE}/tags`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/tags` }) },
  [`POST ${SPACE}/tags`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/tags`, body: { id: 'new-tag' } }) },
  [`GET ${SPACE}/tags/:tagId`]: { kind: 'read', request: (s) => ({ path: `/hub/spaces/${s}/tags/first` }) },
  [`PATCH ${SPACE}/tags/:tagId`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/tags/first`, body: { version: 1 } }) },
  [`DELETE ${SPACE}/tags/:tagId`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/tags/first` }) },
  // Subscriptions: manageSpaces, and readFeatures too to create or change one (docs/subscriptions.md); A's space has one, s1.
  [`GET ${SPACE}/subscriptions`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/subscriptions` }) },
  [`POST ${SPACE}/subscriptions`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/subscriptions`, body: SUBSCRIPTION }) },
  [`GET ${SPACE}/subscriptions/:subscriptionId`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/subscriptions/s1` }) },
  [`PUT ${SPACE}/subscriptions/:subscriptionId`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/subscriptions/s1`, body: SUBSCRIPTION }) },
  [`DELETE ${SPACE}/subscriptions/:subscriptionId`]: { kind: 'manage', request: (s) => ({ path: `/hub/spaces/${s}/subscriptions/s1` }) },
  'GET /ogc': { kind: 'public', request: () => ({ path: '/ogc' }) },
  'GET /ogc/conformance': { kind: 'public', request: () => ({ path: '/ogc/conformance' }) },
  'GET /ogc/api': { kind: 'list', request: () => ({ path: '/ogc/api' }) },
  'GET /ogc/collections': { kind: 'list', request: () => ({ path: '/ogc/collections' }) },
  [`GET ${COLLECTION}`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}` }) },
  [`GET ${COLLECTION}/queryables`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/queryables` }) },
  [`GET ${COLLECTION}/sortables`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/sortables` }) },
  [`GET ${COLLECTION}/items`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/items?bbox=8,50,9,51` }) },
  [`POST ${COLLECTION}/items`]: { kind: 'insert', request: (s) => ({ path: `/ogc/collections/${s}/items`, body: feature('f9') }) },
  [`GET ${ITEM}`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/items/f1` }) },
  [`PUT ${ITEM}`]: { kind: 'update', request: (s) => ({ path: `/ogc/collections/${s}/items/f1`, body: { ...feature('f1'), properties: { n: 2 } } }) },
  [`PATCH ${ITEM}`]: { kind: 'update', request: (s) => ({ path: `/ogc/collections/${s}/items/f1`, body: { type: 'Feature', properties: { n: 3 } } }) },
  [`DELETE ${ITEM}`]: { kind: 'remove', request: (s) => ({ path: `/ogc/collections/${s}/items/f1` }) },
  'GET /ogc/tileMatrixSets': { kind: 'public', request: () => ({ path: '/ogc/tileMatrixSets' }) },
  'GET /ogc/tileMatrixSets/:tileMatrixSetId': { kind: 'public', request: () => ({ path: '/ogc/tileMatrixSets/WebMercatorQuad' }) },
  [`GET ${COLLECTION}/tiles`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/tiles` }) },
  [`GET ${COLLECTION}/tiles/:tileMatrixSetId`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/tiles/WebMercatorQuad` }) },
  [`GET ${COLLECTION}/tiles/:tileMatrixSetId/:tileMatrix/:tileRow/:tileCol`]: { kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/tiles/WebMercatorQuad/0/0/0` }) },
  'GET /hub/jobs': { kind: 'list', request: () => ({ path: '/hub/jobs' }) },
  'POST /hub/jobs': { kind: 'insert', request: (s) => ({ path: '/hub/jobs', body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: s } } }) },
  [`GET ${JOB}`]: { kind: 'jobRead', request: (j) => ({ path: `/hub/jobs/${j}` }) },
  [`DELETE ${JOB}`]: { kind: 'jobWrite', request: (j) => ({ path: `/hub/jobs/${j}` }) },
  [`GET ${JOB}/status`]: { kind: 'jobRead', request: (j) => ({ path: `/hub/jobs/${j}/status` }) },
  [`PATCH ${JOB}/status`]: { kind: 'jobWrite', request: (j) => ({ path: `/hub/jobs/${j}/status`, body: { desiredAction: 'CANCEL' } }) },
  [`POST ${JOB}/inputs`]: { kind: 'jobWrite', request: (j) => ({ path: `/hub/jobs/${j}/inputs`, body: { type: 'Feature' } }) },
  [`GET ${JOB}/outputs`]: { kind: 'jobRead', request: (j) => ({ path: `/hub/jobs/${j}/outputs` }) },
  [`GET ${JOB}/outputs/:name`]: { kind: 'jobRead', request: (j) => ({ path: `/hub/jobs/${j}/outputs/part-00001.geojsonl` }) },
  'GET /project-api/projects': { kind: 'projectList', request: () => ({ path: '/project-api/projects' }) },
  'POST /project-api/projects': { kind: 'projectCreate', request: () => ({ path: '/project-api/projects', body: { title: 'new' } }) },
  'GET /project-api/projects/:projectId': { kind: 'projectRead', request: (p) => ({ path: `/project-api/projects/${p}` }) },
  'PUT /project-api/projects/:projectId': { kind: 'projectChange', request: (p) => ({ path: `/project-api/projects/${p}`, body: { title: 'replaced' } }) },
  'PATCH /project-api/projects/:projectId': { kind: 'projectChange', request: (p) => ({ path: `/project-api/projects/${p}`, body: { title: 'patched' } }) },
  'DELETE /project-api/projects/:projectId': { kind: 'projectChange', request: (p) => ({ path: `/project-api/projects/${p}` }) },
  // Wrong credentials: whatever token comes along, a login needs a username and its password. A new unknown username
  // each time: the login throttle slows repeated failures of one username (up to 2 s each), which is not this test's subject.
  'POST /account-api/login': { kind: 'session', request: () => ({ path: '/account-api/login', body: { username: `nobody-${randomBytes(4).toString('hex')}`, password: 'wrong-password' } }) },
  'POST /account-api/logout': { kind: 'session', request: () => ({ path: '/account-api/logout', body: {} }) },
  'GET /account-api/me': { kind: 'session', request: () => ({ path: '/account-api/me' }) },
  'POST /account-api/accounts': { kind: 'session', request: () => ({ path: '/account-api/accounts', body: { username: 'new-user', password: 'new-password-123' } }) },
  'GET /token-api/tokens/:token': { kind: 'public', request: () => ({ path: `/token-api/tokens/${lookedUp}.json` }) },
  'GET /token-api/tokens': { kind: 'session', request: () => ({ path: '/token-api/tokens' }) },
  'POST /token-api/tokens': { kind: 'session', request: () => ({ path: '/token-api/tokens', body: { urm: { 'xyz-hub': { readFeatures: [{}] } } } }) },
  'DELETE /token-api/tokens/:token': { kind: 'session', request: () => ({ path: `/token-api/tokens/${lookedUp}` }) },
  'GET /viewer/': { kind: 'public', request: () => ({ path: '/viewer/' }) },
  'GET /viewer/:file': { kind: 'public', request: () => ({ path: '/viewer/viewer.js' }) },
  'GET /viewer/lib/:file': { kind: 'public', request: () => ({ path: '/viewer/lib/maplibre-gl.css' }) },
};

/**
 * The same routes in their other answer formats (docs/output-formats.md, docs/jsonfg.md): a format is written by its own
 * code after the read, so each is checked against every caller too.
 */
const FORMAT_CASES: Record<string, Case[]> = {
  [`GET ${COLLECTION}/items`]: ['jsonfg', 'jsonseq', 'csv', 'fgb', 'html'].map((f): Case => ({ kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/items?bbox=8,50,9,51&f=${f}` }) })),
  [`GET ${ITEM}`]: ['jsonfg', 'html'].map((f): Case => ({ kind: 'read', request: (s) => ({ path: `/ogc/collections/${s}/items/f1?f=${f}` }) })),
};

/** The token the public token lookup asks about: A's full token, known once the tokens are issued. */
let lookedUp = '';

const isProjectKind = (kind: Kind): kind is ProjectKind => kind.startsWith('project');
const isJobKind = (kind: Kind): kind is JobKind => kind.startsWith('job');

const OK = 'ok';
type Expected = typeof OK | 401 | 403 | 404;

/** The answer each caller must get for each kind; the callers of another account see A's space shared only in `otherOnShared`. */
function expected(kind: Kind, caller: Caller): Expected {
  if (kind === 'public') return OK;
  if (kind === 'session') return 401;
  if (caller === 'expired' || caller === 'deleted' || caller === 'malformed' || caller === 'none') return 401;
  if (kind === 'list' || kind === 'projectList' || kind === 'projectCreate') return OK;
  const ofA = caller === 'full' || caller === 'readOnly' || caller === 'otherSpace';
  if (kind === 'projectRead') return ofA || caller === 'otherOnShared' ? OK : 403;
  if (kind === 'projectChange') return ofA ? OK : 403;
  if (kind === 'jobRead' || kind === 'jobWrite') return !ofA ? 404 : caller === 'full' || (caller === 'readOnly' && kind === 'jobRead') ? OK : 403;
  if (caller === 'full') return OK;
  if (kind === 'create') return caller === 'otherAccount' || caller === 'otherOnShared' ? OK : 403;
  if (caller === 'readOnly') return kind === 'read' || kind === 'view' ? OK : 403;
  if (caller === 'otherOnShared') return kind === 'read' || kind === 'view' ? OK : 403;
  return 403;
}

/** The status of a GET whose answer may never end, and its first piece of text; the request is then dropped. */
async function streamStart(hub: HubProcess, path: string, headers: Record<string, string>): Promise<TestResponse> {
  const controller = new AbortController();
  const response = await fetch(hub.url + path, { headers, signal: controller.signal });
  const reader = response.body?.getReader();
  const first = await reader?.read();
  controller.abort();
  const text = first?.value ? new TextDecoder().decode(first.value) : '';
  let body: TestResponse['body'] = {};
  try {
    body = JSON.parse(text) as TestResponse['body'];
  } catch {
    body = {};
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** What a refused request must leave as it was: the space's definition and features, read with the admin token. */
async function snapshot(hub: HubProcess, space: string): Promise<string> {
  const definition = await call(hub, 'GET', `/hub/spaces/${space}`);
  const features = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=100`);
  const { updatedAt: _updated, ...stable } = definition.body;
  return JSON.stringify([definition.status, stable, features.body.features]);
}

for (const backend of BACKENDS) {
  describe(`authorization matrix (${backend})`, () => {
    let hub: HubProcess;
    const tokens = new Map<Caller, string | undefined>();
    const ownerA = `acc-a-${randomBytes(4).toString('hex')}`;
    const ownerB = `acc-b-${randomBytes(4).toString('hex')}`;

    before(async () => {
      // Jobs start within 20 ms, so that an export job of A's has its output at once.
      hub = await startHub({ backend, env: { HUB_JOBS_POLL: '20ms' } });
      const readOnly = { 'xyz-hub': { readFeatures: [{ owner: ownerA }] } };
      const otherSpace = { 'xyz-hub': Object.fromEntries(Object.entries(ownerRights(ownerA)['xyz-hub']).map(([action]) => [action, [{ space: 'some-other-space' }]])) };
      tokens.set('full', (await issueToken(hub, { aid: ownerA, urm: ownerRights(ownerA) })).token);
      lookedUp = tokens.get('full') ?? '';
      tokens.set('readOnly', (await issueToken(hub, { aid: ownerA, urm: readOnly })).token);
      tokens.set('otherSpace', (await issueToken(hub, { aid: ownerA, urm: otherSpace })).token);
      const b = (await issueToken(hub, { aid: ownerB, urm: ownerRights(ownerB) })).token;
      tokens.set('otherAccount', b);
      tokens.set('otherOnShared', b);
      tokens.set('expired', (await issueToken(hub, { aid: ownerA, urm: ownerRights(ownerA), exp: Math.floor(Date.now() / 1000) - 60 })).token);
      const deleted = await issueToken(hub, { aid: ownerA, urm: ownerRights(ownerA) });
      await deleteStoredToken(hub, deleted.tid);
      tokens.set('deleted', deleted.token);
      tokens.set('malformed', 'not a token!');
      tokens.set('none', undefined);
    });
    after(async () => { await hub?.stop(); });

    /** A fresh project of A's, published when asked; and what a refused request must leave as it was. */
    async function projectOfA(published: boolean): Promise<string> {
      const body = { title: 'matrix', status: published ? 'PUBLISHED' : 'UNPUBLISHED' };
      const created = await call(hub, 'POST', '/project-api/projects', { body, headers: { authorization: `Bearer ${tokens.get('full')}` } });
      assert.equal(created.status, 200, created.text);
      return created.body.id as string;
    }
    const projectSnapshot = async (id: string) =>
      (await call(hub, 'GET', `/project-api/projects/${id}`, { headers: { authorization: `Bearer ${tokens.get('full')}` } })).text;

    /** A job of A's on the space (see JobKind), made with A's full token; and what a refused request must leave as it was. */
    async function jobOfA(space: string, kind: JobKind): Promise<string> {
      const full = { authorization: `Bearer ${tokens.get('full')}` };
      // The export is partitioned (one feature a file), so that its outputs have names to read one by one.
      const body = kind === 'jobRead' ? { source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOJSONSEQ', maxFeaturesPerFile: 1 } }
        : { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } };
      const created = await call(hub, 'POST', '/hub/jobs', { body, headers: full });
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      while (kind === 'jobRead' && (await call(hub, 'GET', `/hub/jobs/${id}/status`, { headers: full })).body.state !== 'SUCCEEDED') {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return id;
    }
    const jobSnapshot = async (id: string) =>
      (await call(hub, 'GET', `/hub/jobs/${id}`, { headers: { authorization: `Bearer ${tokens.get('full')}` } })).text;

    /** A fresh space of A's with two features written in versions 0 and 1, a tag `first` at 0 and a subscription s1; shared when asked. */
    async function spaceOfA(shared: boolean): Promise<string> {
      const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'matrix', owner: ownerA, shared, versionsToKeep: 5 } });
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      for (const written of [feature('f1'), feature('f2')]) {
        const response = await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features: [written] } });
        assert.equal(response.status, 200, response.text);
      }
      const tagged = await call(hub, 'POST', `/hub/spaces/${id}/tags`, { body: { id: 'first', version: 0 } });
      assert.equal(tagged.status, 200, tagged.text);
      const subscribed = await call(hub, 'POST', `/hub/spaces/${id}/subscriptions`, { body: { ...SUBSCRIPTION, id: 's1' } });
      assert.equal(subscribed.status, 200, subscribed.text);
      return id;
    }

    /**
     * A GET changes nothing, so its rows share one target per kind of target (and per shared or not); the other methods
     * get a fresh one per caller, so that what an allowed request changed is not what the next caller finds. Sharing
     * halves the file's time (every fresh space takes two versioned writes, a tag and a subscription).
     */
    const readTargets = new Map<string, Promise<string>>();
    function targetOf(kind: Kind, shared: boolean, method: Method): Promise<string> {
      const make = () => {
        const job = isJobKind(kind) ? kind : undefined;
        return isProjectKind(kind) ? projectOfA(shared) : job ? spaceOfA(shared).then((space) => jobOfA(space, job)) : spaceOfA(shared);
      };
      if (method !== 'GET') return make();
      const key = `${isProjectKind(kind) ? 'project' : isJobKind(kind) ? kind : 'space'} ${shared}`;
      const known = readTargets.get(key) ?? make();
      readTargets.set(key, known);
      return known;
    }

    test('every route of the table has a row', () => {
      const missing = routes.map((route) => `${route.method} ${route.path}`).filter((key) => !(key in CASES));
      assert.deepEqual(missing, [], 'routes without authorization matrix rows');
    });

    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      if (!CASES[key]) continue;
      for (const [variant, row] of [CASES[key], ...(FORMAT_CASES[key] ?? [])].entries()) test(variant === 0 ? key : `${key} (${row.request(':spaceId').path.split('?')[1]})`, async () => {
        for (const caller of CALLERS) {
          const project = isProjectKind(row.kind);
          const job = isJobKind(row.kind) ? row.kind : undefined;
          const target = await targetOf(row.kind, caller === 'otherOnShared', route.method);
          const state = () => (project ? projectSnapshot(target) : job ? jobSnapshot(target) : snapshot(hub, target));
          const before = await state();
          const { path, body } = row.request(target);
          const token = tokens.get(caller);
          const headers = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
          const response: TestResponse = row.stream ? await streamStart(hub, path, headers)
            : await call(hub, route.method satisfies Method, path, { body, anonymous: token === undefined, headers });
          const want = expected(row.kind, caller);
          const context = `${caller}: ${route.method} ${path} → ${response.status} ${response.text.slice(0, 300)}`;
          if (want === OK) {
            assert.ok(response.status >= 200 && response.status < 300, context);
            continue;
          }
          assert.equal(response.status, want, context);
          assert.equal(await state(), before, `${context}: a refused request changed it`);
        }
      });
    }
  });
}
