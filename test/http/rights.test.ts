// Black-box tests of rights (API.md 8) and token quotas (API.md 3.2, 4.10): matching rules, writes needing several actions, admin properties.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { RightsMatrix } from '../../src/hub/access/claims.js';
import { call, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights, type TokenFixture } from '../helpers/tokens.js';

const unique = (prefix: string): string => `${prefix}-${randomBytes(5).toString('hex')}`;
const feature = (id: string, n = 1) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [8.5, 50.1] }, properties: { n } });
const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features });
const hub = (rights: Record<string, Array<Record<string, unknown>>>): RightsMatrix => ({ 'xyz-hub': rights });

function assertError(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.type, 'ErrorResponse', response.text);
  assert.equal(response.body.code, code, response.text);
}

for (const backend of BACKENDS) {
  describe(`rights and quotas (${backend})`, () => {
    let server: HubProcess;
    const alice = unique('alice');
    const bob = unique('bob');
    let aliceToken: string;
    let bobToken: string;

    before(async () => {
      server = await startHub({ backend });
      aliceToken = (await issueToken(server, { aid: alice, urm: ownerRights(alice) })).token;
      bobToken = (await issueToken(server, { aid: bob, urm: ownerRights(bob) })).token;
    });
    after(async () => { await server?.stop(); });

    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const tokenFor = async (fixture: Omit<TokenFixture, 'aid'> & { aid?: string }) => (await issueToken(server, { aid: alice, ...fixture })).token;

    /** A space of `owner` (made by the admin token) holding f1 and f2. */
    async function space(owner: string, extra: Record<string, unknown> = {}): Promise<string> {
      const created = await call(server, 'POST', '/hub/spaces', { body: { title: 'rights', owner, ...extra } });
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      assert.equal((await call(server, 'PUT', `/hub/spaces/${id}/features`, { body: collection(feature('f1'), feature('f2')) })).status, 200);
      return id;
    }

    async function ids(id: string): Promise<string[]> {
      const answer = await call(server, 'GET', `/hub/spaces/${id}/iterate?limit=100`);
      return (answer.body.features ?? []).map((f) => `${f.id}:${String(f.properties.n)}`);
    }

    test('a write needs every action it performs: insert and update in one batch need both', async () => {
      const id = await space(alice);
      const createOnly = await tokenFor({ urm: hub({ createFeatures: [{ owner: alice }] }) });
      const mixed = collection(feature('f1', 5), feature('f3'));
      assertError(await call(server, 'PUT', `/hub/spaces/${id}/features`, { body: mixed, headers: as(createOnly) }), 403, 'insufficientRights');
      assert.deepEqual(await ids(id), ['f1:1', 'f2:1'], 'nothing written');
      const inserts = await call(server, 'PUT', `/hub/spaces/${id}/features`, { body: collection(feature('f3')), headers: as(createOnly) });
      assert.equal(inserts.status, 200, inserts.text);
      const both = await tokenFor({ urm: hub({ createFeatures: [{ owner: alice }], updateFeatures: [{ owner: alice }] }) });
      assert.equal((await call(server, 'PUT', `/hub/spaces/${id}/features`, { body: collection(feature('f1', 5), feature('f4')), headers: as(both) })).status, 200);
      assert.deepEqual(await ids(id), ['f1:5', 'f2:1', 'f3:1', 'f4:1']);
      // A modification list that deletes needs deleteFeatures as well.
      const modifications = { type: 'FeatureModificationList', modifications: [{ onFeatureExists: 'delete', featureIds: ['f2'] }] };
      assertError(await call(server, 'POST', `/hub/spaces/${id}/features`, { body: modifications, headers: as(both) }), 403, 'insufficientRights');
      assert.deepEqual(await ids(id), ['f1:5', 'f2:1', 'f3:1', 'f4:1']);
    });

    test('e=retain answers stored features, so it needs readFeatures', async () => {
      const id = await space(alice);
      const writer = await tokenFor({ urm: hub({ createFeatures: [{ owner: alice }], updateFeatures: [{ owner: alice }] }) });
      const retain = await call(server, 'POST', `/hub/spaces/${id}/features?e=retain`, { body: collection(feature('f1', 9)), headers: as(writer) });
      assertError(retain, 403, 'insufficientRights');
      const reader = await tokenFor({ urm: hub({ createFeatures: [{ owner: alice }], readFeatures: [{ owner: alice }] }) });
      const allowed = await call(server, 'POST', `/hub/spaces/${id}/features?e=retain`, { body: collection(feature('f1', 9)), headers: as(reader) });
      assert.equal(allowed.status, 200, allowed.text);
      assert.deepEqual(await ids(id), ['f1:1', 'f2:1']);
    });

    test('a delete by tags needs deleteFeatures', async () => {
      const id = await space(alice);
      const updater = await tokenFor({ urm: hub({ updateFeatures: [{ owner: alice }], readFeatures: [{ owner: alice }] }) });
      assertError(await call(server, 'DELETE', `/hub/spaces/${id}/features?tags=*`, { headers: as(updater) }), 403, 'insufficientRights');
      assert.deepEqual(await ids(id), ['f1:1', 'f2:1']);
    });

    test('matching: wildcard ids, package lists and lists in the token', async () => {
      const prefixed = await space(alice, { id: unique('proj') });
      const other = await space(alice);
      const osm = await space(bob, { packages: ['OSM', 'extra'] });
      const wildcard = await tokenFor({ urm: hub({ readFeatures: [{ space: 'proj-*' }] }) });
      assert.equal((await call(server, 'GET', `/hub/spaces/${prefixed}/count`, { headers: as(wildcard) })).status, 200);
      assertError(await call(server, 'GET', `/hub/spaces/${other}/count`, { headers: as(wildcard) }), 403, 'insufficientRights');
      const packaged = await tokenFor({ urm: hub({ readFeatures: [{ packages: 'OSM' }] }) });
      assert.equal((await call(server, 'GET', `/hub/spaces/${osm}/count`, { headers: as(packaged) })).status, 200);
      const both = await tokenFor({ urm: hub({ readFeatures: [{ packages: ['OSM', 'extra'] }] }) });
      assert.equal((await call(server, 'GET', `/hub/spaces/${osm}/count`, { headers: as(both) })).status, 200);
      const oneMissing = await tokenFor({ urm: hub({ readFeatures: [{ packages: ['OSM', 'missing'] }] }) });
      assertError(await call(server, 'GET', `/hub/spaces/${osm}/count`, { headers: as(oneMissing) }), 403, 'insufficientRights');
      const ownerAndSpace = await tokenFor({ urm: hub({ readFeatures: [{ owner: alice, space: other }] }) });
      assert.equal((await call(server, 'GET', `/hub/spaces/${other}/count`, { headers: as(ownerAndSpace) })).status, 200);
      assertError(await call(server, 'GET', `/hub/spaces/${prefixed}/count`, { headers: as(ownerAndSpace) }), 403, 'insufficientRights');
    });

    test('shared spaces are read by any token, written by none but the granted; unknown spaces are 404', async () => {
      const shared = await space(alice, { shared: true });
      const private_ = await space(alice);
      assert.equal((await call(server, 'GET', `/hub/spaces/${shared}/bbox?west=8&south=50&east=9&north=51`, { headers: as(bobToken) })).status, 200);
      assert.equal((await call(server, 'GET', `/hub/spaces/${shared}`, { headers: as(bobToken) })).status, 200);
      assertError(await call(server, 'PUT', `/hub/spaces/${shared}/features`, { body: collection(feature('b1')), headers: as(bobToken) }), 403, 'insufficientRights');
      assertError(await call(server, 'GET', `/hub/spaces/${private_}`, { headers: as(bobToken) }), 403, 'insufficientRights');
      assertError(await call(server, 'GET', `/hub/spaces/${private_}/features/f1`, { headers: as(bobToken) }), 403, 'insufficientRights');
      assertError(await call(server, 'GET', `/hub/spaces/${unique('nope')}/features/f1`, { headers: as(bobToken) }), 404, 'spaceOfFeaturesNotFound');
      assertError(await call(server, 'GET', `/hub/spaces/${unique('nope')}`, { headers: as(bobToken) }), 404, 'spaceNotFound');
      const listed = await call(server, 'GET', '/hub/spaces?owner=*', { headers: as(bobToken) });
      const listedIds = (JSON.parse(listed.text) as Array<{ id: string }>).map((s) => s.id);
      assert.ok(listedIds.includes(shared) && !listedIds.includes(private_), listed.text.slice(0, 300));
    });

    test('a referenced feature and clustering need their own rights', async () => {
      const mine = await space(bob);
      const hers = await space(alice);
      const ref = `/hub/spaces/${mine}/spatial?refSpaceId=${hers}&refFeatureId=f1&radius=10`;
      assertError(await call(server, 'GET', ref, { headers: as(bobToken) }), 403, 'insufficientRights');
      const noCapability = (await issueToken(server, { aid: bob, urm: hub({ readFeatures: [{ owner: bob }] }) })).token;
      const clustered = `/hub/spaces/${mine}/bbox?west=8&south=50&east=9&north=51&clustering=hexbin`;
      assertError(await call(server, 'GET', clustered, { headers: as(noCapability) }), 403, 'insufficientRights');
      const hexbin = (await issueToken(server, { aid: bob, urm: hub({ readFeatures: [{ owner: bob }], useCapabilities: [{ id: 'hexbinClustering' }] }) })).token;
      assert.equal((await call(server, 'GET', clustered, { headers: as(hexbin) })).status, 200);
      assertError(await call(server, 'GET', clustered.replace('hexbin', 'quadbin'), { headers: as(hexbin) }), 403, 'insufficientRights');
    });

    test('creating spaces: chosen ids, admin properties, connectors, packages, search configuration', async () => {
      const manager = await tokenFor({ urm: hub({ manageSpaces: [{ owner: alice }] }) });
      const create = (body: Record<string, unknown>, token = manager) => call(server, 'POST', '/hub/spaces', { body: { title: 't', ...body }, headers: as(token) });
      const plain = await create({});
      assert.equal(plain.status, 200, plain.text);
      assert.equal(plain.body.owner, alice);
      assertError(await create({ id: unique('chosen') }), 403, 'insufficientRights');
      const prefixManager = await tokenFor({ urm: hub({ manageSpaces: [{ owner: alice, space: 'mine-*' }] }) });
      assert.equal((await create({ id: unique('mine') }, prefixManager)).status, 200);
      assertError(await create({ id: unique('theirs') }, prefixManager), 403, 'insufficientRights');
      assertError(await create({ owner: bob }), 403, 'insufficientRights');
      assertError(await create({ packages: ['OSM'] }), 403, 'insufficientRights');
      assertError(await create({ listeners: { 'webhook': [{ params: {} }] } }), 403, 'insufficientRights');
      assertError(await create({ searchableProperties: { name: true } }), 403, 'insufficientRights');
      const richer = await tokenFor({ urm: hub({
        manageSpaces: [{ owner: alice }], managePackages: [{ id: 'OSM' }], accessConnectors: [{ id: 'webhook' }],
        useCapabilities: [{ id: 'searchablePropertiesConfiguration' }],
      }) });
      const full = await create({ packages: ['OSM'], listeners: { 'webhook': [{ params: {} }] }, searchableProperties: { name: true } }, richer);
      assert.equal(full.status, 200, full.text);
      const readOnly = await tokenFor({ urm: hub({ readFeatures: [{ owner: alice }] }) });
      assertError(await create({}, readOnly), 403, 'insufficientRights');
      const nothing = await tokenFor({ urm: { other: { readFeatures: [{}] } } });
      assertError(await call(server, 'GET', '/hub/spaces', { headers: as(nothing) }), 403, 'noHubRights');
    });

    test('patching spaces: basic members need manageSpaces, admin members adminSpaces, an owner change for the new owner too', async () => {
      const id = await space(alice);
      const manager = await tokenFor({ urm: hub({ manageSpaces: [{ owner: alice }], readFeatures: [{ owner: alice }] }) });
      const patch = (body: Record<string, unknown>, token = manager) => call(server, 'PATCH', `/hub/spaces/${id}`, { body, headers: as(token) });
      assert.equal((await patch({ title: 'renamed', description: 'd' })).status, 200);
      assertError(await patch({ cid: 'another-app' }), 403, 'insufficientRights');
      assertError(await patch({ owner: bob }), 403, 'insufficientRights');
      const adminOfAlice = await tokenFor({ urm: hub({ manageSpaces: [{ owner: alice }], adminSpaces: [{ owner: alice }] }) });
      assert.equal((await patch({ cid: 'another-app' }, adminOfAlice)).status, 200);
      assertError(await patch({ owner: bob }, adminOfAlice), 403, 'insufficientRights');
      const adminOfBoth = await tokenFor({ urm: hub({ manageSpaces: [{ owner: alice }], adminSpaces: [{ owner: alice }, { owner: bob }] }) });
      const moved = await patch({ owner: bob }, adminOfBoth);
      assert.equal(moved.status, 200, moved.text);
      assert.equal((await call(server, 'GET', `/hub/spaces/${id}`)).body.owner, bob);
      assertError(await call(server, 'DELETE', `/hub/spaces/${id}`, { headers: as(aliceToken) }), 403, 'insufficientRights');
      const deleted = await call(server, 'DELETE', `/hub/spaces/${id}`, { headers: as(bobToken) });
      assert.ok(deleted.status === 200 || deleted.status === 204, deleted.text);
    });

    test('the space list: includeRights names the granted actions, includeConnectors shows connectors to whom may see them', async () => {
      const id = await space(alice, { listeners: { 'webhook': [{ params: {} }] } });
      const reader = await tokenFor({ urm: hub({ readFeatures: [{ owner: alice }], updateFeatures: [{ space: id }] }) });
      const list = async (query: string, token: string) => {
        const answer = await call(server, 'GET', `/hub/spaces?owner=*&${query}`, { headers: as(token) });
        assert.equal(answer.status, 200, answer.text);
        return (JSON.parse(answer.text) as Array<Record<string, unknown>>).find((entry) => entry.id === id);
      };
      assert.deepEqual((await list('includeRights=true', reader))?.rights, ['readFeatures', 'updateFeatures']);
      assert.deepEqual((await list('includeRights=true', aliceToken))?.rights,
        ['readFeatures', 'createFeatures', 'updateFeatures', 'deleteFeatures', 'manageSpaces', 'adminSpaces']);
      assert.equal((await list('', aliceToken))?.rights, undefined);
      assert.equal((await list('', aliceToken))?.listeners, undefined, 'connectors only when asked for');
      assert.ok((await list('includeConnectors=true', aliceToken))?.listeners);
      assert.equal((await list('includeConnectors=true', reader))?.listeners, undefined, 'not without accessConnectors');
    });

    test('limits.maxSpaces refuses the space over the limit', async () => {
      const owner = unique('quota');
      const limited = (await issueToken(server, { aid: owner, urm: ownerRights(owner), limits: { maxSpaces: 2 } })).token;
      for (let i = 0; i < 2; i++) assert.equal((await call(server, 'POST', '/hub/spaces', { body: { title: 'q' }, headers: as(limited) })).status, 200);
      const third = await call(server, 'POST', '/hub/spaces', { body: { title: 'q' }, headers: as(limited) });
      assertError(third, 403, 'spaceQuotaReached');
      assert.match(third.body.errorMessage ?? '', /The maximum number of 2 spaces was reached/);
      const list = await call(server, 'GET', '/hub/spaces?owner=me', { headers: as(limited) });
      assert.equal((JSON.parse(list.text) as unknown[]).length, 2);
    });

    test('limits.maxRequestsPerMinute answers 429 with Retry-After past the rate, for that token only', async () => {
      const owner = unique('rate');
      const limited = (await issueToken(server, { aid: owner, urm: ownerRights(owner), limits: { maxRequestsPerMinute: 3 } })).token;
      const id = await space(owner);
      for (let i = 0; i < 3; i++) assert.equal((await call(server, 'GET', `/hub/spaces/${id}/count`, { headers: as(limited) })).status, 200);
      const refused = await call(server, 'GET', `/hub/spaces/${id}/count`, { headers: { ...as(limited), origin: 'https://maps.example' } });
      assertError(refused, 429, 'tokenRateLimited');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1, String(refused.headers.get('retry-after')));
      assert.ok(refused.headers.get('access-control-allow-origin'), 'CORS on the 429');
      assert.equal((await call(server, 'GET', `/hub/spaces/${id}/count`)).status, 200, 'other tokens are not limited');
    });

    test('limits.maxFeaturesPerSpace counts net inserts and writes nothing when passed', async () => {
      const owner = unique('fquota');
      const limited = (await issueToken(server, { aid: owner, urm: ownerRights(owner), limits: { maxFeaturesPerSpace: 3 } })).token;
      const id = await space(owner);
      const over = await call(server, 'PUT', `/hub/spaces/${id}/features`, { body: collection(feature('f3'), feature('f4')), headers: as(limited) });
      assertError(over, 403, 'featureQuotaReached');
      assert.match(over.body.errorMessage ?? '', new RegExp(`The maximum number of 3 features for the resource "${id}" was reached`));
      assert.deepEqual(await ids(id), ['f1:1', 'f2:1']);
      assert.equal((await call(server, 'PUT', `/hub/spaces/${id}/features`, { body: collection(feature('f3'), feature('f1', 2)), headers: as(limited) })).status, 200);
      const swap = { type: 'FeatureModificationList', modifications: [
        { onFeatureExists: 'delete', featureIds: ['f3'] },
        { onFeatureNotExists: 'create', featureData: collection(feature('f5')) },
      ] };
      const swapped = await call(server, 'POST', `/hub/spaces/${id}/features`, { body: swap, headers: as(limited) });
      assert.equal(swapped.status, 200, swapped.text);
      assert.deepEqual(await ids(id), ['f1:2', 'f2:1', 'f5:1']);
      assertError(await call(server, 'POST', `/hub/spaces/${id}/features`, { body: collection(feature('f6')), headers: as(limited) }), 403, 'featureQuotaReached');
    });

    test('limits.maxFeaturesPerSpace counts each space a write through a virtual or composite space stores into', async () => {
      const owner = unique('lquota');
      const limited = (await issueToken(server, { aid: owner, urm: ownerRights(owner), limits: { maxFeaturesPerSpace: 3 } })).token;
      const a = await space(owner);
      const b = await space(owner);
      const made = await call(server, 'POST', '/hub/spaces', { body: { title: 'group', owner, storage: { id: 'virtualspace', params: { virtualspace: { group: [a, b] } } } } });
      assert.equal(made.status, 200, made.text);
      const group = made.body.id as string;
      // New features go to the last upstream, which holds two: two more would make it four.
      const over = await call(server, 'PUT', `/hub/spaces/${group}/features`, { body: collection(feature('f3'), feature('f4')), headers: as(limited) });
      assertError(over, 403, 'featureQuotaReached');
      assert.match(over.body.errorMessage ?? '', new RegExp(`The maximum number of 3 features for the resource "${b}" was reached. The write would make it 4.`));
      assert.deepEqual([await ids(a), await ids(b)], [['f1:1', 'f2:1'], ['f1:1', 'f2:1']], 'nothing written');
      assert.equal((await call(server, 'PUT', `/hub/spaces/${group}/features`, { body: collection(feature('f3'), feature('f1', 2)), headers: as(limited) })).status, 200);
      assert.deepEqual(await ids(b), ['f1:2', 'f2:1', 'f3:1']);

      const base = await call(server, 'POST', '/hub/spaces', { body: { title: 'composite', owner, extends: { spaceId: a } } });
      assert.equal(base.status, 200, base.text);
      const composite = base.body.id as string;
      // The composite's own layer holds what is written through it: edits of the base's features count too.
      const edits = collection(feature('f1', 3), feature('f2', 3), feature('c1'), feature('c2'));
      assertError(await call(server, 'PUT', `/hub/spaces/${composite}/features`, { body: edits, headers: as(limited) }), 403, 'featureQuotaReached');
      assert.deepEqual(await ids(composite), ['f1:1', 'f2:1'], 'nothing written');
      assert.equal((await call(server, 'PUT', `/hub/spaces/${composite}/features`, { body: collection(feature('f1', 3), feature('c1'), feature('c2')), headers: as(limited) })).status, 200);
      // Hiding a base feature stores a tombstone, which is no feature: a delete never passes the quota.
      assert.equal((await call(server, 'DELETE', `/hub/spaces/${composite}/features/f2`, { headers: as(limited) })).status, 204);
      assert.deepEqual(await ids(composite), ['f1:3', 'c1:1', 'c2:1']);
      assertError(await call(server, 'PUT', `/hub/spaces/${composite}/features`, { body: collection(feature('c3')), headers: as(limited) }), 403, 'featureQuotaReached');
    });
  });
}
