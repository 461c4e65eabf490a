// Black-box tests of the activity log (issue 15): the listener, its log space, and one log feature per changed feature.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { assertError, call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { startHubOverTwoDatabases } from '../helpers/two-databases.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const LOG_NS = '@ns:com:here:xyz:log';

interface LogMembers {
  id: string;
  operation: 'insert' | 'update' | 'delete';
  uuid: string;
  puuid?: string;
  time: number;
  invalidatedAt?: number;
  diff?: Record<string, unknown>;
  states: string[];
}

const logOf = (feature: FeatureJson): LogMembers => feature.properties[LOG_NS] as LogMembers;

/** The listener as the Python client (xyzspaces) sends it. */
const pythonListener = (params: Record<string, unknown>) => ({ 'activity-log': [{ params, eventTypes: ['ModifySpaceEvent.request'] }] });

for (const backend of BACKENDS) {
  describe(`activity log (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const features = (space: string) => `/hub/spaces/${space}/features`;
    const logSpace = (space: string) => `${space}-activity-log`;
    const logged = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      createSpace(hub, { enableUUID: true, listeners: pythonListener(params), ...extra });

    /** Every log feature, in the order they were appended. */
    const logFeatures = async (space: string): Promise<FeatureJson[]> => {
      const response = await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/iterate?limit=1000`);
      assert.equal(response.status, 200, response.text);
      return response.body.features ?? [];
    };
    /** The log features of one source feature, found by a property search, oldest first. */
    const statesOf = async (space: string, id: string): Promise<FeatureJson[]> => {
      const response = await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/search?p.${LOG_NS}.id=${encodeURIComponent(id)}`);
      assert.equal(response.status, 200, response.text);
      return response.body.features ?? [];
    };
    const stored = async (space: string, id: string): Promise<FeatureJson> => {
      const response = await call(hub, 'GET', `${features(space)}/${id}`);
      assert.equal(response.status, 200, response.text);
      return response.body as unknown as FeatureJson;
    };
    const ok = (response: TestResponse, status = 200): TestResponse => {
      assert.equal(response.status, status, response.text);
      return response;
    };

    describe('the listener', () => {
      test('reads back under activity-log-writer with the log space id, the storage mode and a boolean writeInvalidatedAt', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', {
          body: { title: 'logged', enableUUID: true, listeners: pythonListener({ states: 5, storageMode: 'DIFF_ONLY', writeInvalidatedAt: 'true' }) },
        });
        assert.equal(response.status, 200, response.text);
        const id = response.body.id as string;
        const listeners = response.body.listeners as Record<string, Array<Record<string, unknown>>>;
        assert.deepEqual(Object.keys(listeners), ['activity-log-writer']);
        assert.deepEqual(listeners['activity-log-writer'][0].params, { spaceId: `${id}-activity-log`, states: 5, storageMode: 'DIFF_ONLY', writeInvalidatedAt: true });
        assert.deepEqual(listeners['activity-log-writer'][0].eventTypes, ['ModifySpaceEvent.request']);
        const again = ok(await call(hub, 'GET', `/hub/spaces/${id}`));
        assert.deepEqual(again.body.listeners, listeners);
        const log = ok(await call(hub, 'GET', `/hub/spaces/${id}-activity-log`));
        assert.equal(log.body.activityLogOf, id);
        assert.equal(log.body.readOnly, true);
      });

      test('the list form takes the defaults: 5 states, FULL, no invalidatedAt', async () => {
        const space = await createSpace(hub, { enableUUID: 'true', listeners: [{ id: 'activity-log', params: {} }] });
        const response = ok(await call(hub, 'GET', `/hub/spaces/${space}`));
        const listeners = response.body.listeners as Record<string, Array<Record<string, unknown>>>;
        assert.deepEqual(listeners['activity-log-writer'][0].params, { spaceId: logSpace(space), states: 5, storageMode: 'FULL', writeInvalidatedAt: false });
      });

      test('bad parameters, or no enableUUID, are a 400 naming the member, and create nothing', async () => {
        const cases: Array<[Record<string, unknown>, string, string]> = [
          [{ enableUUID: true, listeners: pythonListener({ storageMode: 'SOME' }) }, 'spaceValidation', 'listeners.activity-log[0].params.storageMode'],
          [{ enableUUID: true, listeners: pythonListener({ states: 0 }) }, 'spaceValidation', 'listeners.activity-log[0].params.states'],
          [{ enableUUID: true, listeners: pythonListener({ states: 'five' }) }, 'spaceValidation', 'params.states'],
          [{ enableUUID: true, listeners: pythonListener({ states: 1001 }) }, 'spaceValidation', 'params.states'],
          [{ enableUUID: true, listeners: pythonListener({ writeInvalidatedAt: 'maybe' }) }, 'spaceValidation', 'params.writeInvalidatedAt'],
          [{ enableUUID: true, listeners: { 'activity-log': [{ params: 5 }] } }, 'spaceValidation', 'listeners.activity-log[0].params'],
          [{ enableUUID: true, listeners: { 'activity-log': [{}, {}] } }, 'spaceValidation', 'exactly one'],
          [{ listeners: pythonListener({}) }, 'activityLogWithoutUUID', 'enableUUID'],
          [{ enableUUID: false, listeners: [{ id: 'activity-log' }] }, 'activityLogWithoutUUID', 'enableUUID'],
        ];
        for (const [index, [body, code, named]] of cases.entries()) {
          const id = `bad-log-${backend}-${index}`;
          assertError(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'bad', ...body } }), 400, code, named);
          assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).status, 404);
          assert.equal((await call(hub, 'GET', `/hub/spaces/${id}-activity-log`)).status, 404);
        }
      });

      test('setting it needs accessConnectors on activity-log-writer, the connector id stored', async () => {
        const aid = `connector-${backend}`;
        const tokenWith = async (connector: string) => {
          const urm = ownerRights(aid);
          urm['xyz-hub'].accessConnectors = [{ id: connector }];
          return { authorization: `Bearer ${(await issueToken(hub, { aid, urm })).token}` };
        };
        const body = { title: 't', enableUUID: true, listeners: pythonListener({}) };
        assertError(await call(hub, 'POST', '/hub/spaces', { body, headers: await tokenWith('other') }), 403, 'insufficientRights', 'activity-log-writer');
        ok(await call(hub, 'POST', '/hub/spaces', { body, headers: await tokenWith('activity-log-writer') }));
      });

      test('a space whose log space id is taken is refused with 409 and not created', async () => {
        const id = `taken-${backend}`;
        // Clients cannot choose such an id (issue 21); a space stored before that rule can still hold it.
        assertError(await call(hub, 'POST', '/hub/spaces', { body: { id: `${id}-activity-log`, title: 'squat' } }), 400, 'spaceValidation', '-activity-log');
        const storage = await openStorage(hub.storage, { pgPoolSize: 1 });
        try {
          await storage.spaces.create(`${id}-activity-log`, { title: 'stored before', owner: 'someone', createdAt: Date.now(), updatedAt: Date.now() }, Date.now());
        } finally {
          await storage.close();
        }
        assertError(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 't', enableUUID: true, listeners: pythonListener({}) } }),
          409, 'activityLogSpaceTaken', `${id}-activity-log`);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).status, 404);
      });

      test('a PATCH adds the listener (logging from then on) and removing it deletes the log space', async () => {
        const space = await createSpace(hub, { enableUUID: true });
        ok(await call(hub, 'PUT', features(space), { body: point('before', {}) }));
        const patched = ok(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { listeners: pythonListener({ storageMode: 'FEATURE_ONLY' }) } }));
        const listeners = patched.body.listeners as Record<string, Array<Record<string, unknown>>>;
        assert.equal((listeners['activity-log-writer'][0].params as Record<string, unknown>).spaceId, logSpace(space));
        ok(await call(hub, 'PUT', features(space), { body: point('after', {}) }));
        assert.deepEqual((await logFeatures(space)).map((feature) => logOf(feature).id), ['after']);
        // Sent back as read, the listener stays as it is.
        const same = ok(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { listeners } }));
        assert.deepEqual(same.body.listeners, listeners);
        ok(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { listeners: { 'activity-log-writer': null } } }));
        assert.equal((await call(hub, 'GET', `/hub/spaces/${logSpace(space)}`)).status, 404);
        ok(await call(hub, 'PUT', features(space), { body: point('unlogged', {}) }));
      });

      test('a space without enableUUID cannot get the listener by PATCH', async () => {
        const space = await createSpace(hub);
        assertError(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { listeners: pythonListener({}) } }), 400, 'activityLogWithoutUUID');
        assert.equal((await call(hub, 'GET', `/hub/spaces/${logSpace(space)}`)).status, 404);
      });
    });

    describe('log features', () => {
      test('every kind of write logs one feature per changed feature, chained by the source uuids', async () => {
        const space = await logged({ states: 100 });
        ok(await call(hub, 'PUT', features(space), { body: collection(point('a', { n: 1 }), point('b', { n: 1 })) }));
        ok(await call(hub, 'POST', features(space), { body: collection(point('a', { n: 2 }), point('c', { n: 1 })) }));
        // A patch that changes nothing logs nothing.
        ok(await call(hub, 'POST', features(space), { body: collection(point('a', { n: 2 })) }));
        ok(await call(hub, 'PATCH', `${features(space)}/a`, { body: { type: 'Feature', properties: { m: true } } }));
        ok(await call(hub, 'PUT', `${features(space)}/b`, { body: point('b', { n: 2 }) }));
        const headOfA = await stored(space, 'a');
        ok(await call(hub, 'DELETE', `${features(space)}/a`), 204);
        const headOfB = await stored(space, 'b');
        ok(await call(hub, 'DELETE', `${features(space)}?id=b&id=missing`), 204);
        ok(await call(hub, 'PUT', features(space), { body: collection({ ...point('t1', {}), properties: { '@ns:com:here:xyz': { tags: ['old'] } } }, point('t2', {})) }));
        const headOfT1 = await stored(space, 't1');
        ok(await call(hub, 'DELETE', `${features(space)}?tags=old`), 204);
        ok(await call(hub, 'POST', `${features(space)}?e=delete`, { body: collection(point('c', {})) }));

        const log = (await logFeatures(space)).map(logOf);
        assert.deepEqual(log.map((entry) => `${entry.operation} ${entry.id}`), [
          'insert a', 'insert b', 'update a', 'insert c', 'update a', 'update b', 'delete a', 'delete b', 'insert t1', 'insert t2', 'delete t1', 'delete c',
        ]);
        for (const [id, head] of [['a', headOfA], ['b', headOfB]] as const) {
          const chain = log.filter((entry) => entry.id === id);
          assert.equal(chain[0].puuid, undefined);
          for (let i = 1; i < chain.length; i++) assert.equal(chain[i].puuid, chain[i - 1].uuid, `${id} state ${i}`);
          // The last update's uuid is the source feature's; the delete's puuid is it too.
          assert.equal(chain[chain.length - 2].uuid, namespaceOf(head).uuid);
          assert.equal(chain[chain.length - 1].puuid, namespaceOf(head).uuid);
          assert.equal(chain[chain.length - 1].operation, 'delete');
        }
        assert.equal(log.find((entry) => entry.id === 't1' && entry.operation === 'delete')?.puuid, namespaceOf(headOfT1).uuid);
        // A log feature's id is the uuid of the state it logs; its time the source's updatedAt.
        const raw = await logFeatures(space);
        for (const feature of raw) assert.equal(feature.id, logOf(feature).uuid);
        assert.equal(new Set(raw.map((feature) => feature.id)).size, raw.length);
        assert.equal(log.find((entry) => entry.uuid === namespaceOf(headOfB).uuid)?.time, namespaceOf(headOfB).updatedAt);
        assert.equal(log.filter((entry) => entry.id === 't2').length, 1);
      });

      test('FULL keeps the state and the diff from the previous state', async () => {
        const space = await logged({ storageMode: 'FULL' });
        ok(await call(hub, 'PUT', features(space), { body: { ...point('a', { n: 1, keep: 'k', gone: 1 }), extra: 'x' } }));
        ok(await call(hub, 'PATCH', `${features(space)}/a`, { body: { type: 'Feature', properties: { n: 2, gone: null, nested: { z: 1 } } } }));
        const [inserted, updated] = await statesOf(space, 'a');
        assert.deepEqual(inserted.geometry, { type: 'Point', coordinates: [8.5, 50.1, 0] });
        assert.equal(inserted.properties.n, 1);
        assert.equal(inserted.extra, 'x');
        assert.deepEqual(logOf(inserted).diff, {
          extra: 'x', geometry: { type: 'Point', coordinates: [8.5, 50.1, 0] },
          properties: { n: 1, keep: 'k', gone: 1, '@ns:com:here:xyz': { tags: [] } },
        });
        assert.deepEqual({ ...updated.properties, [LOG_NS]: undefined, '@ns:com:here:xyz': undefined },
          { n: 2, keep: 'k', nested: { z: 1 }, [LOG_NS]: undefined, '@ns:com:here:xyz': undefined });
        assert.deepEqual(logOf(updated).diff, { properties: { n: 2, gone: null, nested: { z: 1 } } });
        assert.equal(namespaceOf(updated).space, logSpace(space));
      });

      test('DIFF_ONLY keeps only the diff; FEATURE_ONLY only the state', async () => {
        const diffOnly = await logged({ storageMode: 'DIFF_ONLY' });
        const featureOnly = await logged({ storageMode: 'FEATURE_ONLY' });
        for (const space of [diffOnly, featureOnly]) {
          ok(await call(hub, 'PUT', features(space), { body: point('a', { n: 1 }) }));
          ok(await call(hub, 'PUT', features(space), { body: point('a', { n: 2 }, [1, 2]) }));
          ok(await call(hub, 'DELETE', `${features(space)}/a`), 204);
        }
        const [insert, update, remove] = await statesOf(diffOnly, 'a');
        for (const entry of [insert, update, remove]) {
          assert.equal(entry.geometry, null);
          assert.deepEqual(Object.keys(entry.properties).sort(), ['@ns:com:here:xyz', LOG_NS]);
        }
        // Objects on both sides are diffed member by member, as a PATCH body walks them.
        assert.deepEqual(logOf(update).diff, { geometry: { coordinates: [1, 2, 0] }, properties: { n: 2 } });
        assert.equal(logOf(remove).diff, undefined);
        const states = await statesOf(featureOnly, 'a');
        assert.deepEqual(states.map((entry) => [entry.properties.n, entry.geometry?.coordinates, logOf(entry).diff]),
          [[1, [8.5, 50.1, 0], undefined], [2, [1, 2, 0], undefined], [2, [1, 2, 0], undefined]]);
      });

      test('writeInvalidatedAt marks each replaced state with the time of the write that replaced it', async () => {
        const marked = await logged({ writeInvalidatedAt: true });
        const unmarked = await logged({ writeInvalidatedAt: false });
        for (const space of [marked, unmarked]) {
          ok(await call(hub, 'PUT', features(space), { body: point('a', { n: 1 }) }));
          ok(await call(hub, 'PUT', features(space), { body: point('a', { n: 2 }) }));
          ok(await call(hub, 'DELETE', `${features(space)}/a`), 204);
        }
        const [first, second, deletion] = (await statesOf(marked, 'a')).map(logOf);
        assert.equal(first.invalidatedAt, second.time);
        assert.equal(second.invalidatedAt, deletion.time);
        assert.equal(deletion.invalidatedAt, undefined);
        assert.deepEqual((await statesOf(unmarked, 'a')).map((feature) => logOf(feature).invalidatedAt), [undefined, undefined, undefined]);
      });

      test('states bounds the states kept per feature, oldest dropped first', async () => {
        const space = await logged({ states: 2, writeInvalidatedAt: true });
        for (let n = 1; n <= 5; n++) ok(await call(hub, 'PUT', features(space), { body: collection(point('a', { n }), point(`other${n}`, {})) }));
        const states = await statesOf(space, 'a');
        assert.deepEqual(states.map((feature) => feature.properties.n), [4, 5]);
        assert.deepEqual(logOf(states[1]).states, states.map((feature) => feature.id));
        assert.equal(logOf(states[1]).puuid, logOf(states[0]).uuid);
        assert.equal(logOf(states[0]).invalidatedAt, logOf(states[1]).time);
        // Other features keep their own states.
        assert.equal((await logFeatures(space)).length, 2 + 5);
        const single = await logged({ states: 1, writeInvalidatedAt: true });
        for (let n = 1; n <= 3; n++) ok(await call(hub, 'PUT', features(single), { body: point('a', { n }) }));
        const [only] = await logFeatures(single);
        assert.equal((await logFeatures(single)).length, 1);
        assert.equal(only.properties.n, 3);
        assert.equal(logOf(only).invalidatedAt, undefined);
      });

      test('concurrent writes of one feature log one linear chain of states', async () => {
        const space = await logged({ states: 3, writeInvalidatedAt: true });
        ok(await call(hub, 'PUT', features(space), { body: point('a', { n: 0 }) }));
        const writes = await Promise.all(Array.from({ length: 12 }, (_, n) =>
          call(hub, 'PATCH', `${features(space)}/a`, { body: { type: 'Feature', properties: { n: n + 1 } } })));
        for (const write of writes) ok(write);
        const head = await stored(space, 'a');
        const states = (await statesOf(space, 'a')).map(logOf);
        assert.equal(states.length, 3);
        assert.equal(states[2].uuid, namespaceOf(head).uuid);
        assert.equal(states[1].uuid, states[2].puuid);
        assert.equal(states[0].uuid, states[1].puuid);
        assert.deepEqual(states[2].states, states.map((entry) => entry.uuid));
        assert.deepEqual(states.map((entry) => entry.invalidatedAt), [states[1].time, states[2].time, undefined]);
      });

      test('DELETE of every feature (tags=*) logs each delete, page after page', async () => {
        const space = await logged({ storageMode: 'DIFF_ONLY' });
        const count = 1203;
        ok(await call(hub, 'PUT', features(space), { body: collection(...Array.from({ length: count }, (_, n) => point(`f${n}`, {}))) }));
        const deleted = ok(await call(hub, 'DELETE', `${features(space)}?tags=*`, { headers: { accept: 'application/json' } }));
        assert.equal(deleted.body.count, count, deleted.text);
        assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count, 0);
        const deletes = ok(await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/count?p.${LOG_NS}.operation=delete`));
        assert.equal(deletes.body.count, count);
        assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/count`)).body.count, 2 * count);
      });

      test('a failed batch logs nothing; a non-transactional one logs what it wrote', async () => {
        const schema = { type: 'object', properties: { properties: { type: 'object', required: ['name'] } } };
        const space = await logged({}, { processors: [{ id: 'schema-validator', params: { schema } }] });
        ok(await call(hub, 'PUT', features(space), { body: collection(point('a', { name: 'A' })) }));
        const head = await stored(space, 'a');
        assertError(await call(hub, 'PUT', features(space), { body: collection(point('b', { name: 'B' }), point('c', {})) }), 400, 'schemaValidationFailed');
        const stale = { ...point('a', { name: 'A2' }), properties: { name: 'A2', '@ns:com:here:xyz': { uuid: 'not-the-head' } } };
        assertError(await call(hub, 'PUT', features(space), { body: collection(point('d', { name: 'D' }), stale) }), 409, 'uuidMismatch');
        assertError(await call(hub, 'POST', `${features(space)}?ne=error`, { body: collection(point('e', { name: 'E' })) }), 409, 'featureMissing');
        assert.deepEqual((await logFeatures(space)).map((feature) => logOf(feature).uuid), [namespaceOf(head).uuid]);
        const partial = ok(await call(hub, 'POST', `${features(space)}?transactional=false`, { body: collection(point('f', { name: 'F' }), stale) }));
        assert.equal(partial.body.failed?.length, 1, partial.text);
        assert.deepEqual((await logFeatures(space)).map((feature) => logOf(feature).id), ['a', 'f']);
      });
    });

    describe('the log space', () => {
      /** Deletes a space behind the hub's back, as a failure half-way through a space deletion would leave things. */
      const deleteStored = async (id: string): Promise<void> => {
        const storage = await openStorage(hub.storage, { pgPoolSize: 1 });
        try {
          assert.ok(await storage.spaces.delete(id), id);
        } finally {
          await storage.close();
        }
      };

      test('a missing log space refuses the source\'s writes until the listener is set again', async () => {
        const space = await logged({ storageMode: 'FEATURE_ONLY' });
        ok(await call(hub, 'PUT', features(space), { body: point('a', {}) }));
        await deleteStored(logSpace(space));
        assertError(await call(hub, 'PUT', features(space), { body: point('b', {}) }), 409, 'activityLogMissing', logSpace(space));
        assert.equal((await call(hub, 'GET', `${features(space)}/b`)).status, 404);
        const listeners = ok(await call(hub, 'GET', `/hub/spaces/${space}`)).body.listeners;
        ok(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { listeners } }));
        ok(await call(hub, 'PUT', features(space), { body: point('b', {}) }));
        assert.deepEqual((await logFeatures(space)).map((feature) => logOf(feature).id), ['b']);
      });

      test('a log space left behind by its source may be deleted', async () => {
        const space = await logged({});
        await deleteStored(space);
        ok(await call(hub, 'DELETE', `/hub/spaces/${logSpace(space)}`), 204);
      });

      test('is read with the source\'s rights: readable, iterable and searchable by its readers only', async () => {
        const ownerUrm = ownerRights(`log-owner-${backend}`);
        ownerUrm['xyz-hub'].accessConnectors = [{}];
        const owner = await issueToken(hub, { aid: `log-owner-${backend}`, urm: ownerUrm });
        const as = (token: string) => ({ authorization: `Bearer ${token}` });
        const created = await call(hub, 'POST', '/hub/spaces', {
          body: { title: 'owned', enableUUID: true, listeners: pythonListener({}) }, headers: as(owner.token),
        });
        assert.equal(created.status, 200, created.text);
        const space = created.body.id as string;
        ok(await call(hub, 'PUT', features(space), { body: point('a', { n: 1 }), headers: as(owner.token) }));
        const reader = await issueToken(hub, { aid: `log-reader-${backend}`, urm: { 'xyz-hub': { readFeatures: [{ space }] } } });
        const stranger = await issueToken(hub, { aid: `log-stranger-${backend}`, urm: ownerRights(`log-stranger-${backend}`) });
        const [entry] = await logFeatures(space);
        const reads = [`/hub/spaces/${logSpace(space)}/iterate`, `/hub/spaces/${logSpace(space)}/search?p.${LOG_NS}.operation=insert`,
          `${features(logSpace(space))}/${entry.id}`, `/hub/spaces/${logSpace(space)}/count`];
        for (const token of [owner.token, reader.token]) {
          for (const path of reads) ok(await call(hub, 'GET', path, { headers: as(token) }));
        }
        const found = ok(await call(hub, 'GET', reads[1], { headers: as(reader.token) }));
        assert.equal(found.body.features?.length, 1);
        for (const path of reads) assertError(await call(hub, 'GET', path, { headers: as(stranger.token) }), 403, 'insufficientRights');
        // Listing spaces: the log space is an ordinary space of the source's owner.
        const listed = ok(await call(hub, 'GET', '/hub/spaces', { headers: as(owner.token) }));
        assert.ok((listed.body as unknown as Array<{ id: string }>).some((listedSpace) => listedSpace.id === logSpace(space)), listed.text);
      });

      test('follows its source\'s sharing and owner', async () => {
        const space = await logged({});
        ok(await call(hub, 'PUT', features(space), { body: point('a', {}) }));
        const stranger = await issueToken(hub, { aid: `share-stranger-${backend}`, urm: ownerRights(`share-stranger-${backend}`) });
        const headers = { authorization: `Bearer ${stranger.token}` };
        assert.equal((await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/iterate`, { headers })).status, 403);
        ok(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { shared: true } }));
        ok(await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/iterate`, { headers }));
        // An owner change moves the log with it: the new owner reads it.
        const heir = await issueToken(hub, { aid: `share-heir-${backend}`, urm: ownerRights(`share-heir-${backend}`) });
        ok(await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { shared: false, owner: `share-heir-${backend}` } }));
        assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${logSpace(space)}`)).body.owner, `share-heir-${backend}`);
        ok(await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/iterate`, { headers: { authorization: `Bearer ${heir.token}` } }));
        assert.equal((await call(hub, 'GET', `/hub/spaces/${logSpace(space)}/iterate`, { headers })).status, 403);
      });

      test('refuses client writes, changes and deletion, and goes with its source', async () => {
        const space = await logged({});
        ok(await call(hub, 'PUT', features(space), { body: point('a', {}) }));
        const [entry] = await logFeatures(space);
        assertError(await call(hub, 'PUT', features(logSpace(space)), { body: point('x', {}) }), 405, 'readOnlySpace');
        assertError(await call(hub, 'DELETE', `${features(logSpace(space))}/${entry.id}`), 405, 'readOnlySpace');
        assertError(await call(hub, 'DELETE', `${features(logSpace(space))}?tags=*`), 405, 'readOnlySpace');
        assertError(await call(hub, 'PATCH', `/hub/spaces/${logSpace(space)}`, { body: { readOnly: false } }), 409, 'activityLogManaged', space);
        assertError(await call(hub, 'DELETE', `/hub/spaces/${logSpace(space)}`), 409, 'activityLogManaged');
        assert.equal((await logFeatures(space)).length, 1);
        ok(await call(hub, 'DELETE', `/hub/spaces/${space}`), 204);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${logSpace(space)}`)).status, 404);
      });
    });
  });
}

describe('activity log with spaces spread over two databases (postgres)', { skip: BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run' }, () => {
  let hub: HubProcess;
  let catalogUrl: string;
  let stop: (() => Promise<void>) | undefined;
  before(async () => { ({ hub, catalogUrl, stop } = await startHubOverTwoDatabases()); });
  after(async () => { await stop?.(); });

  test('each log space is created in its source\'s database, so writes there log in one transaction', async () => {
    // Placement balances the databases: without `near`, a source and its log would land on different ones.
    const sources: string[] = [];
    for (let i = 0; i < 3; i++) sources.push(await createSpace(hub, { enableUUID: true, listeners: { 'activity-log': [{ params: {} }] } }));
    const client = new pg.Client({ connectionString: catalogUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string; location: string }>('SELECT id, location FROM spaces');
      const locationOf = new Map(rows.map((row) => [row.id, row.location]));
      assert.equal(new Set(sources.map((source) => locationOf.get(source))).size, 2, 'the sources are spread over both databases');
      for (const source of sources) assert.equal(locationOf.get(`${source}-activity-log`), locationOf.get(source), source);
    } finally {
      await client.end();
    }
    for (const source of sources) {
      const written = await call(hub, 'PUT', `/hub/spaces/${source}/features`, { body: point('a', {}) });
      assert.equal(written.status, 200, written.text);
      const log = await call(hub, 'GET', `/hub/spaces/${source}-activity-log/iterate`);
      assert.equal(log.body.features?.length, 1, log.text);
    }
  });
});
