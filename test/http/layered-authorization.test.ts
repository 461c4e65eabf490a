// The authorization matrix over layered spaces (issue 21): no route, write option or error carries a byte of a space its caller may not read.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { call, type TestResponse } from '../helpers/http-client.js';
import { collection, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { readPausing } from '../helpers/paused-read.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const virtual = (operation: string, upstreams: string[]) => ({ storage: { id: 'virtualspace', params: { virtualspace: { [operation]: upstreams } } } });
const json = { 'content-type': 'application/json' };

/** A request Bob sends through a layered space `s`; `id` is a feature id the foreign space holds, `missing` one it does not. */
interface Probe {
  name: string;
  method: string;
  path(s: string, id: string, missing: string): string;
  body?(id: string, missing: string): unknown;
}

const feature = (id: string, properties: Record<string, unknown> = { bob: 1 }) => point(id, properties, [1, 1]);

/** Every route and write option that reads or returns features, against a foreign id and a missing one. */
const PROBES: Probe[] = [
  { name: 'read ?id=', method: 'GET', path: (s, id, missing) => `/hub/spaces/${s}/features?id=${id},${missing}` },
  { name: 'read by id', method: 'GET', path: (s, id) => `/hub/spaces/${s}/features/${id}` },
  { name: 'read missing id', method: 'GET', path: (s, _id, missing) => `/hub/spaces/${s}/features/${missing}` },
  { name: 'search', method: 'GET', path: (s) => `/hub/spaces/${s}/search` },
  { name: 'iterate', method: 'GET', path: (s) => `/hub/spaces/${s}/iterate` },
  { name: 'count', method: 'GET', path: (s) => `/hub/spaces/${s}/count` },
  { name: 'statistics', method: 'GET', path: (s) => `/hub/spaces/${s}/statistics` },
  { name: 'bbox', method: 'GET', path: (s) => `/hub/spaces/${s}/bbox?west=-180&south=-90&east=180&north=90` },
  { name: 'tile', method: 'GET', path: (s) => `/hub/spaces/${s}/tile/web/0_0_0` },
  { name: 'mvt', method: 'GET', path: (s) => `/hub/spaces/${s}/tile/web/0_0_0.mvt` },
  { name: 'spatial', method: 'GET', path: (s) => `/hub/spaces/${s}/spatial?lat=1&lon=1&radius=1000` },
  { name: 'spatial POST', method: 'POST', path: (s) => `/hub/spaces/${s}/spatial`, body: () => ({ type: 'Point', coordinates: [1, 1] }) },
  { name: 'ogc items', method: 'GET', path: (s) => `/ogc/collections/${s}/items` },
  { name: 'ogc items sorted', method: 'GET', path: (s) => `/ogc/collections/${s}/items?sortby=-secret,id&limit=1` },
  { name: 'ogc items sorted by id', method: 'GET', path: (s) => `/ogc/collections/${s}/items?sortby=-id&limit=1` },
  { name: 'ogc items in JSON-FG', method: 'GET', path: (s) => `/ogc/collections/${s}/items?f=jsonfg` },
  { name: 'ogc item', method: 'GET', path: (s, id) => `/ogc/collections/${s}/items/${id}` },
  { name: 'ogc collection', method: 'GET', path: (s) => `/ogc/collections/${s}` },
  { name: 'e=retain', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=retain`, body: (id) => collection({ type: 'Feature', id }) },
  { name: 'e=retain collection', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=retain`, body: (id) => collection(feature(id)) },
  { name: 'e=patch', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=patch`, body: (id) => collection(feature(id)) },
  { name: 'e=merge', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=merge`, body: (id) => collection(feature(id)) },
  { name: 'e=replace', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=replace`, body: (id) => collection(feature(id)) },
  { name: 'e=error', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=error&transactional=false`, body: (id) => collection(feature(id)) },
  { name: 'ne=retain', method: 'POST', path: (s) => `/hub/spaces/${s}/features?ne=retain`, body: (id, missing) => collection(feature(id), feature(missing)) },
  { name: 'ne=error', method: 'POST', path: (s) => `/hub/spaces/${s}/features?ne=error&transactional=false`, body: (id, missing) => collection(feature(id), feature(missing)) },
  { name: 'stale uuid', method: 'POST', path: (s) => `/hub/spaces/${s}/features?e=patch`, body: (id) => collection({ ...feature(id), properties: { '@ns:com:here:xyz': { uuid: 'stale' } } }) },
  { name: 'PUT collection', method: 'PUT', path: (s) => `/hub/spaces/${s}/features`, body: (id) => collection(feature(id)) },
  { name: 'PUT one', method: 'PUT', path: (s, id) => `/hub/spaces/${s}/features/${id}`, body: (id) => feature(id) },
  { name: 'PATCH one', method: 'PATCH', path: (s, id) => `/hub/spaces/${s}/features/${id}`, body: () => ({ type: 'Feature', properties: { bob: 2 } }) },
  { name: 'PATCH missing', method: 'PATCH', path: (s, _id, missing) => `/hub/spaces/${s}/features/${missing}`, body: () => ({ type: 'Feature', properties: { bob: 2 } }) },
  {
    name: 'modification list', method: 'POST', path: (s) => `/hub/spaces/${s}/features`,
    body: (id, missing) => ({
      type: 'FeatureModificationList',
      modifications: [
        { onFeatureExists: 'retain', onFeatureNotExists: 'retain', featureData: collection(feature(id), feature(missing)) },
        { onFeatureExists: 'delete', featureIds: [`${missing}-2`] },
      ],
    }),
  },
  { name: 'ogc PUT item', method: 'PUT', path: (s, id) => `/ogc/collections/${s}/items/${id}`, body: (id) => feature(id) },
  { name: 'ogc PATCH item', method: 'PATCH', path: (s, id) => `/ogc/collections/${s}/items/${id}`, body: () => ({ type: 'Feature', properties: { bob: 3 } }) },
  { name: 'ogc DELETE item', method: 'DELETE', path: (s, id) => `/ogc/collections/${s}/items/${id}` },
  { name: 'DELETE one', method: 'DELETE', path: (s, id) => `/hub/spaces/${s}/features/${id}` },
  { name: 'DELETE missing', method: 'DELETE', path: (s, _id, missing) => `/hub/spaces/${s}/features/${missing}` },
  { name: 'DELETE by ids', method: 'DELETE', path: (s, id, missing) => `/hub/spaces/${s}/features?id=${id}&id=${missing}` },
  { name: 'DELETE by tags', method: 'DELETE', path: (s) => `/hub/spaces/${s}/features?tags=*` },
];

for (const backend of BACKENDS) {
  describe(`layered spaces over a foreign space (${backend})`, () => {
    let hub: HubProcess;
    const alice = `alice-${randomBytes(4).toString('hex')}`;
    const bob = `bob-${randomBytes(4).toString('hex')}`;
    /** What no answer to Bob may hold: a property value and a coordinate only Alice's features carry. */
    const SECRET = `secret-${randomBytes(8).toString('hex')}`;
    const SECRET_COORDINATE = '12.3456789';
    let bobToken = '';
    let aliceSpace = '';
    let aliceLog = '';
    let bobSpace = '';
    /** Alice's log ids, which a composite over her log shows as feature ids. */
    let logIds: string[] = [];
    /** The layered spaces Bob owns over Alice's, made while it was allowed (the admin made them for Bob). */
    const layered = new Map<string, { space: string; id: string }>();

    const asBob = (method: string, path: string, body?: unknown): Promise<TestResponse> =>
      call(hub, method, path, { body, headers: { authorization: `Bearer ${bobToken}`, ...(body === undefined ? {} : json) } });

    /** Alice's space and her log, as stored, read with the admin token. */
    async function aliceState(): Promise<string> {
      const parts: string[] = [];
      for (const space of [aliceSpace, aliceLog]) {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1000`);
        assert.equal(response.status, 200, response.text);
        parts.push(JSON.stringify(response.body.features));
      }
      return parts.join('\n');
    }

    function assertClean(response: TestResponse, context: string): void {
      assert.ok(!response.text.includes(SECRET), `${context} → ${response.status}: the answer holds Alice's secret: ${response.text.slice(0, 400)}`);
      assert.ok(!response.text.includes(SECRET_COORDINATE), `${context} → ${response.status}: the answer holds Alice's geometry: ${response.text.slice(0, 400)}`);
      assert.ok(!response.text.includes(aliceSpace) || response.status === 403 || response.status === 409,
        `${context} → ${response.status}: the answer names Alice's space: ${response.text.slice(0, 400)}`);
    }

    before(async () => {
      hub = await startHub({ backend });
      const aliceToken = (await issueToken(hub, { aid: alice, urm: ownerRights(alice) })).token;
      const bobRights = ownerRights(bob);
      bobRights['xyz-hub'].accessConnectors = [{ id: 'virtualspace' }, { id: 'activity-log' }];
      bobToken = (await issueToken(hub, { aid: bob, urm: bobRights })).token;
      const created = await call(hub, 'POST', '/hub/spaces', {
        body: { title: 'private', owner: alice, enableUUID: true, listeners: { 'activity-log': [{ params: {} }] } },
      });
      assert.equal(created.status, 200, created.text);
      aliceSpace = created.body.id as string;
      aliceLog = `${aliceSpace}-activity-log`;
      const secretFeature = (id: string) => ({ ...point(id, { secret: SECRET }, [Number(SECRET_COORDINATE), 1]), tags: ['alice'] });
      const written = await call(hub, 'PUT', `/hub/spaces/${aliceSpace}/features`, {
        body: collection(secretFeature('a1'), secretFeature('a2')), headers: { authorization: `Bearer ${aliceToken}` },
      });
      assert.equal(written.status, 200, written.text);
      logIds = ((await call(hub, 'GET', `/hub/spaces/${aliceLog}/iterate`)).body.features ?? []).map((logged) => String(logged.id));
      assert.equal(logIds.length, 2);
      bobSpace = (await asBob('POST', '/hub/spaces', { title: 'bob' })).body.id as string;
      assert.ok(bobSpace);
      assert.equal((await asBob('PUT', `/hub/spaces/${bobSpace}/features`, collection(feature('c1')))).status, 200);
      const made: Array<[string, Record<string, unknown>, string]> = [
        ['composite over the space', { extends: { spaceId: aliceSpace } }, 'a1'],
        ['composite over the log', { extends: { spaceId: aliceLog } }, logIds[0]],
        ['group', virtual('group', [aliceSpace, bobSpace]), 'a1'],
        ['merge', virtual('merge', [aliceSpace, bobSpace]), 'a1'],
        ['override', virtual('override', [bobSpace, aliceSpace]), 'a1'],
      ];
      for (const [name, definition, id] of made) {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: name, owner: bob, ...definition } });
        assert.equal(response.status, 200, response.text);
        layered.set(name, { space: response.body.id as string, id });
      }
    });
    after(async () => { await hub?.stop(); });

    test('creating a layered space over a space the caller may not read is refused, and nothing is stored', async () => {
      const attempts: Array<[string, Record<string, unknown>]> = [
        ['composite over the space', { extends: { spaceId: aliceSpace } }],
        ['composite over the log', { extends: { spaceId: aliceLog } }],
        ['group', virtual('group', [bobSpace, aliceSpace])],
        ['merge', virtual('merge', [aliceSpace, bobSpace])],
        ['override', virtual('override', [aliceSpace])],
      ];
      for (const [name, definition] of attempts) {
        const id = `bob-${randomBytes(6).toString('hex')}`;
        const response = await asBob('POST', '/hub/spaces', { id, title: name, ...definition });
        assert.equal(response.status, 403, `${name}: ${response.text}`);
        assertClean(response, name);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).status, 404, `${name}: a refused space was stored`);
      }
    });

    test('patching a virtual space to read a foreign space is refused, and nothing changes', async () => {
      const own = (await asBob('POST', '/hub/spaces', { title: 'own group', ...virtual('group', [bobSpace]) })).body.id as string;
      assert.ok(own);
      const before = (await call(hub, 'GET', `/hub/spaces/${own}`)).body.storage;
      const response = await asBob('PATCH', `/hub/spaces/${own}`, virtual('group', [bobSpace, aliceSpace]));
      assert.equal(response.status, 403, response.text);
      assert.deepEqual((await call(hub, 'GET', `/hub/spaces/${own}`)).body.storage, before);
    });

    test('a refused layering or change tells Bob nothing of a foreign space\'s definition', async () => {
      const made = async (definition: Record<string, unknown>) => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'alice layered', owner: alice, ...definition } });
        assert.equal(response.status, 200, response.text);
        return response.body.id as string;
      };
      const aliceVirtual = await made(virtual('group', [aliceSpace]));
      const aliceComposite = await made({ extends: { spaceId: aliceSpace } });
      const attempts: Array<[string, string, string, Record<string, unknown>]> = [
        ['composite over her virtual space', 'POST', '/hub/spaces', { title: 'x', extends: { spaceId: aliceVirtual } }],
        ['virtual space over her composite', 'POST', '/hub/spaces', { title: 'x', ...virtual('group', [bobSpace, aliceComposite]) }],
        ['guessing her base, wrong', 'PATCH', `/hub/spaces/${aliceComposite}`, { extends: { spaceId: bobSpace } }],
        ['guessing her base, right', 'PATCH', `/hub/spaces/${aliceComposite}`, { extends: { spaceId: aliceSpace } }],
        ['making her composite virtual', 'PATCH', `/hub/spaces/${aliceComposite}`, virtual('group', [bobSpace])],
        ['her virtual space reading itself', 'PATCH', `/hub/spaces/${aliceVirtual}`, virtual('group', [aliceVirtual])],
      ];
      for (const [name, method, path, body] of attempts) {
        const response = await asBob(method, path, body);
        assert.equal(response.status, 403, `${name}: ${response.status} ${response.text}`);
        assert.equal(response.body.code, 'insufficientRights', `${name}: ${response.text}`);
      }
      // Over his own spaces the same definitions get their 400s (the walls are not everywhere).
      const own = (await asBob('POST', '/hub/spaces', { title: 'own virtual', ...virtual('group', [bobSpace]) })).body.id as string;
      assert.equal((await asBob('POST', '/hub/spaces', { title: 'x', extends: { spaceId: own } })).status, 400);
      assert.equal((await asBob('PATCH', `/hub/spaces/${bobSpace}`, { extends: { spaceId: own } })).status, 400);
    });

    test('a space Bob may not see answers 403 before its definition is looked into: no base, upstream, kind or read-only flag', async () => {
      const hidden = `alice-hidden-${randomBytes(4).toString('hex')}`;
      const made = async (definition: Record<string, unknown>, id?: string) => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'alice', owner: alice, ...(id ? { id } : {}), ...definition } });
        assert.equal(response.status, 200, response.text);
        return response.body.id as string;
      };
      // Alice's private spaces whose reads fail for her (a base or upstream deleted, custom) or whose writes do (read-only).
      const base = await made({}, `${hidden}-base`);
      const upstream = await made({}, `${hidden}-upstream`);
      const composite = await made({ extends: { spaceId: base } });
      const group = await made(virtual('group', [upstream]));
      const custom = await made(virtual('custom', [base]));
      const readOnly = await made({ readOnly: true });
      // A space Bob layered while it was shared, deleted and made again under its id as Alice's private virtual space.
      // Its id is in Bob's definition, so his 403 names it; what it is now is not his to learn.
      const reused = await made({ shared: true }, `alice-reused-${randomBytes(4).toString('hex')}`);
      const bobComposite = (await asBob('POST', '/hub/spaces', { title: 'over reused', extends: { spaceId: reused } })).body.id as string;
      assert.ok(bobComposite);
      for (const space of [base, upstream, reused]) assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}`)).status, 204);
      await made(virtual('group', [aliceSpace]), reused);
      const requests = (s: string): Array<[string, string, unknown?]> => [
        ['GET', `/hub/spaces/${s}/features/a1`], ['GET', `/hub/spaces/${s}/search`], ['GET', `/hub/spaces/${s}/tile/web/0_0_0`],
        ['GET', `/hub/spaces/${s}/statistics`], ['GET', `/ogc/collections/${s}/items`], ['PUT', `/hub/spaces/${s}/features`, collection(feature('x1'))],
        ['DELETE', `/hub/spaces/${s}/features?tags=*`],
        ['POST', '/hub/jobs', { source: { type: 'Space', id: s }, target: { type: 'Files', format: 'GEOJSONSEQ' } }],
      ];
      // The space's own history and subscriptions: Bob's composite has none (400), Alice's are not his to ask for.
      const ownOnly = (s: string): Array<[string, string, unknown?]> => [['GET', `/hub/spaces/${s}/changesets?startVersion=0`], ['GET', `/hub/spaces/${s}/subscriptions`]];
      for (const space of [composite, group, custom, readOnly, bobComposite]) {
        for (const [method, path, body] of [...requests(space), ...(space === bobComposite ? [] : ownOnly(space))]) {
          const response = await asBob(method, path, body);
          const context = `${method} ${path} → ${response.status} ${response.text.slice(0, 300)}`;
          assert.equal(response.status, 403, context);
          assert.equal(response.body.code, 'insufficientRights', context);
          assert.ok(!response.text.includes(hidden) && !response.text.includes('is a virtual'), context);
        }
      }
      // Alice, who may see them, gets what is wrong with them (the walls are not everywhere).
      assert.equal((await call(hub, 'GET', `/hub/spaces/${composite}/search`)).status, 409);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${custom}/search`)).status, 501);
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${readOnly}/features`, { body: collection(feature('x1')) })).status, 405);
    });

    test('a space id reserved for an activity log cannot be taken', async () => {
      const future = `bob-later-${randomBytes(4).toString('hex')}`;
      const squat = await asBob('POST', '/hub/spaces', { id: `${future}-activity-log`, title: 'squat' });
      assert.equal(squat.status, 400, squat.text);
      assert.equal(squat.body.code, 'spaceValidation', squat.text);
      const bare = await asBob('POST', '/hub/spaces', { id: `${aliceSpace}-activity-log`, title: 'squat' });
      assert.ok(bare.status === 400 || bare.status === 409, bare.text);
    });

    for (const name of ['composite over the space', 'composite over the log', 'group', 'merge', 'override']) {
      test(`every route through a ${name} answers 403 without a byte of Alice's features`, async () => {
        const { space, id } = layered.get(name) ?? assert.fail('made in before()');
        const before = await aliceState();
        for (const probe of PROBES) {
          const context = `${name}: ${probe.name}`;
          const response = await asBob(probe.method, probe.path(space, id, 'nope'), probe.body?.(id, 'nope'));
          assertClean(response, context);
          assert.equal(response.status, 403, `${context} → ${response.status} ${response.text.slice(0, 300)}`);
        }
        // A reference to a foreign feature through the layered space, from a search of Bob's own space.
        const referenced = await asBob('GET', `/hub/spaces/${bobSpace}/spatial?refSpaceId=${space}&refFeatureId=${id}&radius=10`);
        assertClean(referenced, `${name}: refSpaceId`);
        assert.equal(referenced.status, 403, referenced.text);
        const missing = await asBob('GET', `/hub/spaces/${bobSpace}/spatial?refSpaceId=${space}&refFeatureId=nope&radius=10`);
        assert.equal(missing.status, 403, `${name}: refSpaceId of a missing id: ${missing.text}`);
        assert.equal(await aliceState(), before, `${name}: Alice's space changed`);
      });
    }

    test('a plain foreign space tells Bob nothing of which ids it holds', async () => {
      for (const probe of PROBES) {
        const existing = await asBob(probe.method, probe.path(aliceSpace, 'a1', 'nope'), probe.body?.('a1', 'nope'));
        const missing = await asBob(probe.method, probe.path(aliceSpace, 'nope', 'nope-2'), probe.body?.('nope', 'nope-2'));
        assertClean(existing, `plain: ${probe.name}`);
        assert.equal(existing.status, 403, `plain: ${probe.name} → ${existing.status} ${existing.text.slice(0, 300)}`);
        assert.equal(missing.status, 403, `plain: ${probe.name} of a missing id → ${missing.status} ${missing.text.slice(0, 300)}`);
      }
    });

    test('history, version reads and OGC filters of a plain foreign space answer 403, whatever they name', async () => {
      const paths = [
        '/changesets?startVersion=0', '/changesets/1', '/changesets/99', '/changesets?versionRef=v1..HEAD', '/changesets/tiles?startVersion=0&type=web&level=2',
        '/tags', '/tags/v1', '/features/a1?version=*', '/features?id=a1&version=1', '/search?version=v1', '/iterate?version=99',
      ].map((path) => `/hub/spaces/${aliceSpace}${path}`);
      paths.push(...['filter=nosuch%3D1', `filter=secret%3D'${SECRET}'`, 'sortby=nosuch', 'secret=x', 'version=1'].map((query) => `/ogc/collections/${aliceSpace}/items?${query}`));
      const requests: Array<[string, string, unknown?]> = [
        ...paths.map((path): [string, string] => ['GET', path]),
        ['POST', `/hub/spaces/${aliceSpace}/tags`, { id: 'bob', version: 99 }], ['PATCH', `/hub/spaces/${aliceSpace}/tags/v1`, { version: 0 }],
        ['DELETE', `/hub/spaces/${aliceSpace}/tags/v1`], ['DELETE', `/hub/spaces/${aliceSpace}/changesets?version=lt=99`],
      ];
      for (const [method, path, body] of requests) {
        const response = await asBob(method, path, body);
        assertClean(response, `${method} ${path}`);
        assert.equal(response.status, 403, `${method} ${path} → ${response.status} ${response.text.slice(0, 300)}`);
        assert.equal(response.body.code, 'insufficientRights', response.text);
      }
    });

    test('an import into Bob\'s layered space over a space unshared since is refused when made, started or looked at', async () => {
      const shared = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'imported over', owner: alice, shared: true } })).body.id as string;
      assert.ok(shared);
      const own = (await asBob('POST', '/hub/spaces', { title: 'own composite', extends: { spaceId: bobSpace } })).body.id as string;
      for (const definition of [{ extends: { spaceId: shared } }, virtual('group', [bobSpace, shared])]) {
        const space = (await asBob('POST', '/hub/spaces', { title: 'over shared', ...definition })).body.id as string;
        assert.ok(space);
        const importInto = (target: string) => asBob('POST', '/hub/jobs', { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: target } });
        const early = await importInto(space);
        assert.equal(early.status, 200, early.text);
        const job = early.body.id as string;
        const upload = await call(hub, 'POST', `/hub/jobs/${job}/inputs`, {
          rawBody: `${JSON.stringify(feature('i1'))}\n`, headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${bobToken}` },
        });
        assert.equal(upload.status, 200, upload.text);
        assert.equal((await call(hub, 'PATCH', `/hub/spaces/${shared}`, { body: { shared: false } })).status, 200);
        // Every chunk of it would be refused reading the space below: so is the job, as an export of it is.
        const late = await importInto(space);
        assert.equal(late.status, 403, `a new import → ${late.status} ${late.text.slice(0, 300)}`);
        assert.equal(late.body.code, 'insufficientRights', late.text);
        for (const [method, path, body] of [['PATCH', `/hub/jobs/${job}/status`, { desiredAction: 'START' }], ['GET', `/hub/jobs/${job}/status`], ['GET', `/hub/jobs/${job}`]] as const) {
          const response = await asBob(method, path, body);
          assert.equal(response.status, 403, `${method} ${path} → ${response.status} ${response.text.slice(0, 300)}`);
        }
        assert.ok(!(await asBob('GET', '/hub/jobs')).text.includes(job), 'the refused job is listed');
        // Over his own layers the import is made (the walls are not everywhere).
        assert.equal((await importInto(own)).status, 200);
        assert.equal((await call(hub, 'PATCH', `/hub/spaces/${shared}`, { body: { shared: true } })).status, 200);
      }
    });

    test('an answer carrying a stored feature needs readFeatures, also on the caller\'s own space', async () => {
      const writeOnly = { 'xyz-hub': Object.fromEntries(['createFeatures', 'updateFeatures', 'deleteFeatures'].map((action) => [action, [{ owner: alice }]])) };
      const token = (await issueToken(hub, { aid: alice, urm: writeOnly })).token;
      const send = (method: string, path: string, body: unknown, accept?: string) =>
        call(hub, method, path, { body, headers: { authorization: `Bearer ${token}`, ...json, ...(accept ? { accept } : {}) } });
      const features = `/hub/spaces/${aliceSpace}/features`;
      const before = await aliceState();
      for (const [name, response] of [
        ['e=retain', await send('POST', `${features}?e=retain`, collection({ type: 'Feature', id: 'a1' }))],
        ['e=patch', await send('POST', `${features}?e=patch`, collection(point('a1', { more: 1 })))],
        ['PATCH one', await send('PATCH', `${features}/a1`, { type: 'Feature', properties: { more: 1 } })],
        ['stale uuid', await send('PUT', `${features}/a1`, { ...point('a1'), properties: { '@ns:com:here:xyz': { uuid: 'stale' } } })],
      ] as const) {
        assertClean(response, `write-only: ${name}`);
        assert.equal(response.status, 403, `write-only: ${name} → ${response.status} ${response.text.slice(0, 300)}`);
        assert.equal(response.body.code, 'insufficientRights', response.text);
        assert.ok(response.text.includes('readFeatures'), response.text);
      }
      assert.equal(await aliceState(), before, 'a refused write changed Alice\'s space');
      // Without an answer the write needs only what it does; a replace answers what was sent.
      assert.equal((await send('POST', `${features}?e=patch`, collection(point('a2', { more: 2 })), 'application/x-empty')).status, 204);
      const replaced = await send('PUT', `${features}/a1`, point('a1', { secret: SECRET, replaced: true }, [Number(SECRET_COORDINATE), 1]));
      assert.equal(replaced.status, 200, replaced.text);
    });

    test('a space unshared after Bob layered, read and exported it: nothing read or kept while it was shared serves him after', async () => {
      // Alice's space starts shared, so that Bob may build on it himself; its activity log follows its sharing.
      const made = await call(hub, 'POST', '/hub/spaces', {
        body: { title: 'shared for a while', owner: alice, enableUUID: true, shared: true, listeners: { 'activity-log': [{ params: {} }] } },
      });
      assert.equal(made.status, 200, made.text);
      const shared = made.body.id as string;
      const secretFeature = (id: string) => point(id, { secret: SECRET }, [Number(SECRET_COORDINATE), 1]);
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${shared}/features`, { body: collection(secretFeature('s1'), secretFeature('s2')) })).status, 200);
      const composite = await asBob('POST', '/hub/spaces', { title: 'over shared', extends: { spaceId: shared } });
      const group = await asBob('POST', '/hub/spaces', { title: 'group over shared', ...virtual('group', [bobSpace, shared]) });
      assert.equal(composite.status, 200, composite.text);
      assert.equal(group.status, 200, group.text);
      const areaReads = (space: string) => [
        `/hub/spaces/${space}/search`, `/hub/spaces/${space}/count`, `/hub/spaces/${space}/statistics`,
        `/hub/spaces/${space}/bbox?west=-180&south=-90&east=180&north=90`, `/hub/spaces/${space}/tile/web/0_0_0`,
        `/hub/spaces/${space}/tile/web/0_0_0.mvt`, `/hub/spaces/${space}/spatial?lat=1&lon=12.3&radius=100000`,
        `/hub/spaces/${space}/tilejson.json`, `/ogc/collections/${space}`, `/ogc/collections/${space}/items`,
        `/ogc/collections/${space}/tiles/WebMercatorQuad/0/0/0`,
      ];
      const reads = [
        ...areaReads(`${shared}-activity-log`),
        ...[shared, composite.body.id as string, group.body.id as string].flatMap((space) => [
          ...areaReads(space), `/hub/spaces/${space}/features/s1`, `/hub/spaces/${bobSpace}/spatial?refSpaceId=${space}&refFeatureId=s1&radius=10`,
        ]),
      ];
      // While shared every read works (and fills the answer cache, the ETag memory and the layering hints), and an export succeeds.
      const etags = new Map<string, string>();
      for (const path of reads) {
        const response = await asBob('GET', path);
        assert.ok(response.status === 200 || response.status === 204, `${path} while shared → ${response.status} ${response.text.slice(0, 300)}`);
        const etag = response.headers.get('etag');
        if (etag) etags.set(path, etag);
      }
      const job = await asBob('POST', '/hub/jobs', { source: { type: 'Space', id: composite.body.id }, target: { type: 'Files', format: 'GEOJSONSEQ' } });
      assert.equal(job.status, 200, job.text);
      let state = '';
      for (let tries = 0; tries < 200 && state !== 'SUCCEEDED' && state !== 'FAILED'; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        state = String((await asBob('GET', `/hub/jobs/${job.body.id as string}/status`)).body.state);
      }
      assert.equal(state, 'SUCCEEDED');
      assert.ok((await asBob('GET', `/hub/jobs/${job.body.id as string}/outputs`)).text.includes(SECRET), 'the export holds the features while shared');

      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${shared}`, { body: { shared: false } })).status, 200);
      for (const path of reads) {
        const etag = etags.get(path);
        const variants: Array<Record<string, string>> = etag ? [{}, { 'if-none-match': etag }] : [{}];
        for (const headers of variants) {
          const response = await call(hub, 'GET', path, { headers: { authorization: `Bearer ${bobToken}`, ...headers } });
          assert.equal(response.status, 403, `${path} ${JSON.stringify(headers)} after unsharing → ${response.status} ${response.text.slice(0, 300)}`);
          assertClean(response, `${path} after unsharing`);
        }
      }
      for (const path of ['/outputs', '/status', '']) {
        const response = await asBob('GET', `/hub/jobs/${job.body.id as string}${path}`);
        assert.equal(response.status, 403, `job${path} after unsharing → ${response.status} ${response.text.slice(0, 300)}`);
        assertClean(response, `job${path} after unsharing`);
      }
      const collections = await asBob('GET', '/ogc/collections');
      assert.equal(collections.status, 200, collections.text);
      assertClean(collections, 'collections after unsharing');
      assert.ok(!collections.text.includes(`"id":"${shared}`), collections.text);
    });

    test('a read still streaming when the space is unshared stops before what Alice writes after', async () => {
      const shared = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'streamed', owner: alice, shared: true } })).body.id as string;
      assert.ok(shared);
      // About 30 MB: past what is read whole before sending (4 MiB) and what the sockets hold, so the read waits on Bob.
      const pad = 'x'.repeat(2500);
      for (let chunk = 0; chunk < 3; chunk++) {
        const features = Array.from({ length: 4000 }, (_, index) => point(`f${chunk}-${index}`, { pad }, [index / 1000, chunk]));
        const written = await call(hub, 'PUT', `/hub/spaces/${shared}/features`, { body: collection(...features), headers: { accept: 'application/x-empty' } });
        assert.equal(written.status, 204, written.text);
      }
      const streamed = await readPausing(`${hub.url}/hub/spaces/${shared}/iterate?limit=100000`, bobToken, async () => {
        assert.equal((await call(hub, 'PATCH', `/hub/spaces/${shared}`, { body: { shared: false } })).status, 200);
        const secret = await call(hub, 'PUT', `/hub/spaces/${shared}/features`, { body: collection(point('z-after', { secret: SECRET }, [1, 1])) });
        assert.equal(secret.status, 200, secret.text);
        // A read in progress goes on on its decision for at most 100 ms (DECISION_LIFETIME_MS in decided-pages.ts).
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      assert.equal(streamed.status, 200);
      assert.ok(!streamed.body.includes(SECRET), 'the stream carried a feature written after the space was unshared');
      assert.ok(streamed.cut, 'the stream ended as if complete');
    });

    test('a tile of Bob\'s composite space still being made when the space below is unshared carries nothing Alice writes after', async () => {
      const shared = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'tiled', owner: alice, shared: true } })).body.id as string;
      assert.ok(shared);
      // A tile of a layered space reads its layers a page (a statement) at a time: 30,000 features take a while (seconds on PostgreSQL).
      for (let chunk = 0; chunk < 3; chunk++) {
        const features = Array.from({ length: 10_000 }, (_, index) => point(`t${chunk}-${index}`, { n: index }, [(index % 3000) / 20 - 75, chunk]));
        const written = await call(hub, 'PUT', `/hub/spaces/${shared}/features`, { body: collection(...features), headers: { accept: 'application/x-empty' } });
        assert.equal(written.status, 204, written.text);
      }
      const composite = (await asBob('POST', '/hub/spaces', { title: 'over tiled', extends: { spaceId: shared } })).body.id as string;
      assert.ok(composite);
      const tile = asBob('GET', `/hub/spaces/${composite}/tile/web/0_0_0.mvt?limit=100000`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${shared}`, { body: { shared: false } })).status, 200);
      const secret = await call(hub, 'PUT', `/hub/spaces/${shared}/features`, { body: collection(point('z-after', { secret: SECRET }, [1, 1])) });
      assert.equal(secret.status, 200, secret.text);
      // Made before the unsharing reached it (200), or refused after it (403, decided-pages.ts): never with the feature written after.
      const answer = await tile;
      assert.ok(answer.status === 200 || answer.status === 403, `${answer.status} ${answer.text.slice(0, 300)}`);
      assert.ok(!answer.text.includes(SECRET), 'the tile carried a feature written after the space was unshared');
    });

    test('a delete by tags through Bob\'s composite space still running when the space below is unshared finds nothing Alice writes after', async () => {
      const shared = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'deleted through', owner: alice, shared: true } })).body.id as string;
      assert.ok(shared);
      // A delete through a layered space goes a page of 1,000 ids (a transaction) at a time: 10,000 features take a while.
      const features = Array.from({ length: 10_000 }, (_, index) => point(`d${index}`, { n: index }, [index / 1000, 1]));
      const written = await call(hub, 'PUT', `/hub/spaces/${shared}/features?addTags=gone`, { body: collection(...features), headers: { accept: 'application/x-empty' } });
      assert.equal(written.status, 204, written.text);
      const composite = (await asBob('POST', '/hub/spaces', { title: 'deleting over', extends: { spaceId: shared } })).body.id as string;
      assert.ok(composite);
      const deleting = call(hub, 'DELETE', `/hub/spaces/${composite}/features?tags=gone`, { headers: { authorization: `Bearer ${bobToken}`, accept: 'application/geo+json' } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${shared}`, { body: { shared: false } })).status, 200);
      const late = await call(hub, 'PUT', `/hub/spaces/${shared}/features?addTags=gone`, { body: collection(point('z-after', { secret: SECRET }, [1, 1])) });
      assert.equal(late.status, 200, late.text);
      const answer = await deleting;
      assert.ok(answer.status === 200 || answer.status === 403, `${answer.status} ${answer.text.slice(0, 300)}`);
      assert.ok(answer.status !== 200 || answer.body.count === 10_000, `the delete counted ${String(answer.body.count)}: ${answer.text.slice(0, 300)}`);
      // Alice's feature still shows through the composite space (the admin reads it): Bob's delete did not hide it.
      const through = await call(hub, 'GET', `/hub/spaces/${composite}/features/z-after`);
      assert.equal(through.status, 200, `a feature written after the unsharing was deleted through Bob's space: ${through.status} ${through.text.slice(0, 200)}`);
    });

    test('the same routes through Bob\'s own layers work (the walls are not everywhere)', async () => {
      const own = (await asBob('POST', '/hub/spaces', { title: 'own composite', extends: { spaceId: bobSpace } })).body.id as string;
      const retained = await asBob('POST', `/hub/spaces/${own}/features?e=retain`, collection({ type: 'Feature', id: 'c1' }));
      assert.equal(retained.status, 200, retained.text);
      assert.deepEqual(retained.body.features?.map((kept) => kept.id), ['c1']);
      const patched = await asBob('PATCH', `/hub/spaces/${own}/features/c1`, { type: 'Feature', properties: { more: 1 } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await asBob('PATCH', `/hub/spaces/${own}/features/nope`, { type: 'Feature', properties: {} })).status, 404);
    });
  });
}
