// Black-box tests of POST feature writes (e/ne/cr, transactional, patch, modification lists) and uuid conflicts (API.md 4.4–4.9).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, NS, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const MODIFICATION_LIST = 'application/vnd.here.feature-modification-list';

/** The user properties of a feature, without the namespace. */
function userProperties(feature: FeatureJson): Record<string, unknown> {
  const { [NS]: _namespace, ...properties } = feature.properties;
  return properties;
}

function featureById(response: TestResponse, id: string): FeatureJson {
  const feature = response.body.features?.find((candidate) => candidate.id === id);
  assert.ok(feature, `the answer holds feature ${id}: ${response.text}`);
  return feature;
}

const idsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id).sort();

for (const backend of BACKENDS) {
  describe(`feature writes with POST and uuid conflicts (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, body: unknown, query = '') => call(hub, 'PUT', `/hub/spaces/${space}/features${query}`, { body });
    const post = (space: string, body: unknown, query = '', headers: Record<string, string> = {}) =>
      call(hub, 'POST', `/hub/spaces/${space}/features${query}`, { body, headers });
    const read = async (space: string, id: string): Promise<FeatureJson> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/features/${id}`);
      assert.equal(response.status, 200, response.text);
      return response.body as unknown as FeatureJson;
    };
    const storedIds = async (space: string): Promise<string[]> => idsOf(await call(hub, 'GET', `/hub/spaces/${space}/search`));
    const countOf = async (space: string): Promise<number> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(response.status, 200, response.text);
      return response.body.count as number;
    };
    /** A space holding `a` ({v: 1, keep: 'a'}) and `b` ({v: 1}). */
    const seededSpace = async (extra: Record<string, unknown> = {}): Promise<string> => {
      const space = await createSpace(hub, extra);
      assert.equal((await put(space, collection(point('a', { v: 1, keep: 'a' }), point('b', { v: 1 })))).status, 200);
      return space;
    };

    describe('ne: what happens to features that do not exist', () => {
      test('ne=create (the default) inserts', async () => {
        const space = await createSpace(hub);
        const response = await post(space, point('n', { x: 1 }));
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['n']);
        assert.equal((await read(space, 'n')).properties.x, 1);
      });

      test('ne=retain skips them: not written, not in the answer', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('a', { v: 2 }), point('n')), '?ne=retain');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.updated, ['a']);
        assert.equal('inserted' in response.body, false);
        assert.deepEqual(idsOf(response), ['a']);
        assert.deepEqual(await storedIds(space), ['a', 'b']);
      });

      test('ne=error is a 409 "The record does not exist." and nothing of the batch is written', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('a', { v: 2 }), point('n')), '?ne=error');
        assert.equal(response.status, 409);
        assert.equal(response.body.code, 'featureMissing');
        assert.equal(response.body.errorMessage, 'The record does not exist.');
        assert.equal((await read(space, 'a')).properties.v, 1);
        assert.deepEqual(await storedIds(space), ['a', 'b']);
      });
    });

    describe('e: what happens to features that exist', () => {
      test('e=patch (the default) merges into the stored feature', async () => {
        const space = await seededSpace();
        const response = await post(space, point('a', { v: 2, added: true }));
        assert.deepEqual(response.body.updated, ['a']);
        assert.deepEqual(userProperties(featureById(response, 'a')), { v: 2, keep: 'a', added: true });
        assert.deepEqual(userProperties(await read(space, 'a')), { v: 2, keep: 'a', added: true });
      });

      test('e=replace replaces the whole feature', async () => {
        const space = await seededSpace();
        const response = await post(space, point('a', { v: 2 }), '?e=replace');
        assert.deepEqual(response.body.updated, ['a']);
        assert.deepEqual(userProperties(await read(space, 'a')), { v: 2 });
      });

      test('e=merge without uuids behaves like replace', async () => {
        const space = await seededSpace();
        const response = await post(space, point('a', { v: 3 }), '?e=merge');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.updated, ['a']);
        assert.deepEqual(userProperties(await read(space, 'a')), { v: 3 });
      });

      test('e=delete deletes existing features and lists them as deleted; new ones are still created', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('a'), point('n')), '?e=delete');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.deleted, ['a']);
        assert.deepEqual(response.body.inserted, ['n']);
        assert.deepEqual(await storedIds(space), ['b', 'n']);
      });

      test('e=retain keeps the stored state and returns it unmodified', async () => {
        const space = await seededSpace();
        const before = await read(space, 'a');
        const response = await post(space, point('a', { v: 9 }), '?e=retain');
        assert.equal(response.status, 200, response.text);
        assert.equal('updated' in response.body, false);
        assert.deepEqual(featureById(response, 'a').properties, before.properties);
        assert.deepEqual(await read(space, 'a'), before);
      });

      test('e=error is a 409 "The record {<id>} exists." and nothing of the batch is written', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('n'), point('b', { v: 2 })), '?e=error');
        assert.equal(response.status, 409);
        assert.equal(response.body.code, 'featureExists');
        assert.equal(response.body.errorMessage, 'The record {b} exists.');
        assert.deepEqual(await storedIds(space), ['a', 'b']);
        assert.equal((await read(space, 'b')).properties.v, 1);
      });

      test('unknown e, ne or cr values are 400 and write nothing', async () => {
        const space = await createSpace(hub);
        for (const query of ['?e=upsert', '?ne=delete', '?cr=merge', '?e=PATCH']) {
          const response = await post(space, point('n'), query);
          assert.equal(response.status, 400, query);
          assert.equal(response.body.code, 'invalidParameter', query);
        }
        assert.equal(await countOf(space), 0);
      });
    });

    describe('transactional', () => {
      test('transactional=false applies what it can and lists failures with id, position and message', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('a', { v: 2 }), point('m1'), point('b', { v: 2 }), point('m2')),
          '?ne=error&transactional=false');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.updated, ['a', 'b']);
        assert.deepEqual(response.body.failed, [
          { id: 'm1', position: 1, message: 'The record does not exist.' },
          { id: 'm2', position: 3, message: 'The record does not exist.' },
        ]);
        assert.deepEqual(idsOf(response), ['a', 'b']);
        assert.equal((await read(space, 'b')).properties.v, 2);
        assert.deepEqual(await storedIds(space), ['a', 'b']);
      });

      test('transactional=false with e=error inserts the new features and fails the existing ones', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('n'), point('a', { v: 5 })), '?e=error&transactional=false');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['n']);
        assert.deepEqual(response.body.failed, [{ id: 'a', position: 1, message: 'The record {a} exists.' }]);
        assert.equal((await read(space, 'a')).properties.v, 1);
      });

      test('transactional=true is the default and a value other than true/false keeps it', async () => {
        const space = await seededSpace();
        const response = await post(space, collection(point('n'), point('a')), '?e=error&transactional=False');
        assert.equal(response.status, 409);
        assert.deepEqual(await storedIds(space), ['a', 'b']);
      });
    });

    describe('the patch algorithm', () => {
      test('the API.md 4.4 example: null removes, objects merge, arrays replace', async () => {
        const space = await createSpace(hub);
        await put(space, point('p', { a: 1, b: { x: 1, y: 2 }, c: [1, 2] }));
        const response = await post(space, { type: 'Feature', id: 'p', properties: { a: null, b: { y: 3 }, c: [9] } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(userProperties(featureById(response, 'p')), { b: { x: 1, y: 3 }, c: [9] });
        const stored = await read(space, 'p');
        assert.deepEqual(userProperties(stored), { b: { x: 1, y: 3 }, c: [9] });
        assert.deepEqual(stored.geometry, { type: 'Point', coordinates: [8.5, 50.1, 0] });
      });

      test('"geometry": null removes the geometry; a given tag list replaces the tags', async () => {
        const space = await createSpace(hub);
        await put(space, point('p', { [NS]: { tags: ['old', 'other'] } }));
        const response = await post(space, { type: 'Feature', id: 'p', geometry: null, properties: { [NS]: { tags: ['New'] } } });
        assert.deepEqual(response.body.updated, ['p']);
        const stored = await read(space, 'p');
        assert.equal(stored.geometry, null);
        assert.deepEqual(namespaceOf(stored).tags, ['new']);
      });

      test('a patch that changes nothing is reported in features but not in updated, and keeps updatedAt', async () => {
        const space = await createSpace(hub);
        await put(space, point('p', { a: 1, [NS]: { tags: ['t'] } }, [1, 2]));
        const before = await read(space, 'p');
        await sleep(5);
        const response = await post(space, collection(point('p', { a: 1 }, [1, 2]), point('n')));
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['n']);
        assert.equal('updated' in response.body, false);
        assert.deepEqual(idsOf(response), ['n', 'p']);
        assert.deepEqual(await read(space, 'p'), before);
      });

      test('a patched geometry is answered as written (2D stays 2D) and read back in 3D', async () => {
        const space = await createSpace(hub);
        await put(space, point('p', {}, [1, 2]));
        const response = await post(space, point('p', {}, [3, 4]));
        assert.deepEqual(response.body.updated, ['p']);
        assert.deepEqual(featureById(response, 'p').geometry?.coordinates, [3, 4]);
        assert.deepEqual((await read(space, 'p')).geometry?.coordinates, [3, 4, 0]);
        const single = await call(hub, 'PATCH', `/hub/spaces/${space}/features/p`, { body: point(undefined, {}, [5, 6]) });
        assert.deepEqual((single.body as unknown as FeatureJson).geometry?.coordinates, [5, 6]);
        assert.deepEqual((await read(space, 'p')).geometry?.coordinates, [5, 6, 0]);
      });

      test('"geometry": null on a feature without geometry changes nothing', async () => {
        const space = await createSpace(hub);
        await put(space, { type: 'Feature', id: 'p', properties: { a: 1 } });
        const response = await post(space, { type: 'Feature', id: 'p', geometry: null, properties: { a: 1 } });
        assert.equal(response.status, 200, response.text);
        assert.equal('updated' in response.body, false);
        assert.deepEqual(idsOf(response), ['p']);
      });

      test('addTags on POST patches the tags of an existing feature', async () => {
        const space = await createSpace(hub);
        await put(space, point('p', { a: 1, [NS]: { tags: ['t'] } }));
        const response = await post(space, { type: 'Feature', id: 'p' }, '?addTags=u&removeTags=t');
        assert.deepEqual(response.body.updated, ['p']);
        assert.deepEqual(namespaceOf(await read(space, 'p')).tags, ['u']);
        assert.equal((await read(space, 'p')).properties.a, 1);
      });
    });

    describe('feature modification lists', () => {
      const modificationList = (...modifications: unknown[]) => ({ type: 'FeatureModificationList', modifications });
      const postList = (space: string, body: unknown, query = '') => post(space, body, query, { 'content-type': MODIFICATION_LIST });

      test('featureData and featureIds with per-modification rules', async () => {
        const space = await seededSpace();
        await put(space, collection(point('x'), point('y')));
        const response = await postList(space, modificationList(
          { type: 'FeatureModification', onFeatureExists: 'replace', onFeatureNotExists: 'create',
            featureData: collection(point('a', { v: 2 }), point('n')) },
          { type: 'FeatureModification', onFeatureExists: 'delete', featureIds: ['x', 'y', 'unknown'] },
        ));
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['n']);
        assert.deepEqual(response.body.updated, ['a']);
        assert.deepEqual(response.body.deleted, ['x', 'y']);
        assert.deepEqual(userProperties(await read(space, 'a')), { v: 2 });
        assert.deepEqual(await storedIds(space), ['a', 'b', 'n']);
      });

      test('per-modification rules override e/ne; modifications without rules use them', async () => {
        const space = await seededSpace();
        const response = await postList(space, modificationList(
          { type: 'FeatureModification', onFeatureNotExists: 'retain', featureData: collection(point('skipped')) },
          { type: 'FeatureModification', featureData: collection(point('a', { v: 2 }), point('created')) },
        ), '?e=retain&ne=create');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.inserted, ['created']);
        assert.equal('updated' in response.body, false);
        assert.deepEqual(await storedIds(space), ['a', 'b', 'created']);
        assert.equal((await read(space, 'a')).properties.v, 1);
      });

      test('onFeatureNotExists: error in a modification fails the whole request', async () => {
        const space = await seededSpace();
        const response = await postList(space, modificationList(
          { type: 'FeatureModification', featureData: collection(point('n')) },
          { type: 'FeatureModification', onFeatureExists: 'delete', onFeatureNotExists: 'error', featureIds: ['a', 'missing'] },
        ));
        assert.equal(response.status, 409);
        assert.equal(response.body.code, 'featureMissing');
        assert.deepEqual(await storedIds(space), ['a', 'b']);
      });

      for (const [name, modification] of [
        ['an unknown onFeatureExists', { onFeatureExists: 'bogus', featureIds: ['a'] }],
        ['an unknown onFeatureNotExists', { onFeatureNotExists: 'delete', featureData: collection(point('n')) }],
        ['an unknown onMergeConflict', { onMergeConflict: 'merge', featureIds: ['a'] }],
        ['featureData that is not a FeatureCollection', { featureData: point('n') }],
        ['featureIds that are not strings', { onFeatureExists: 'delete', featureIds: [1, 2] }],
      ] as const) {
        test(`${name} is 400 and writes nothing`, async () => {
          const space = await seededSpace();
          const response = await postList(space, modificationList(
            { type: 'FeatureModification', featureData: collection(point('n0')) },
            { type: 'FeatureModification', ...modification },
          ));
          assert.equal(response.status, 400, response.text);
          assert.equal(response.body.code, 'invalidModification');
          assert.deepEqual(await storedIds(space), ['a', 'b']);
        });
      }
    });

    describe('uuid conflicts (enableUUID)', () => {
      const uuidSpace = () => seededSpace({ enableUUID: true });
      const withUuid = (id: string, uuid: string, properties: Record<string, unknown> = {}) =>
        point(id, { ...properties, [NS]: { uuid } });

      test('a uuid is set on create and changes on every modification; puuid is the previous one', async () => {
        const space = await createSpace(hub, { enableUUID: true });
        const created = namespaceOf(featureById(await put(space, point('u')), 'u'));
        assert.equal(typeof created.uuid, 'string');
        assert.equal(created.puuid, undefined);
        const replaced = namespaceOf(featureById(await put(space, point('u', { v: 2 })), 'u'));
        assert.notEqual(replaced.uuid, created.uuid);
        assert.equal(replaced.puuid, created.uuid);
        const patched = namespaceOf(featureById(await post(space, point('u', { v: 3 })), 'u'));
        assert.notEqual(patched.uuid, replaced.uuid);
        assert.equal(patched.puuid, replaced.uuid);
        assert.deepEqual(namespaceOf(await read(space, 'u')), patched);
      });

      test('features of a space without enableUUID carry no uuid', async () => {
        const space = await seededSpace();
        const namespace = namespaceOf(await read(space, 'a'));
        assert.equal(namespace.uuid, undefined);
        assert.equal(namespace.puuid, undefined);
      });

      for (const [name, method, query] of [
        ['PUT (replace)', 'PUT', ''],
        ['POST e=patch', 'POST', ''],
        ['POST e=replace', 'POST', '?e=replace'],
        ['POST e=merge', 'POST', '?e=merge'],
        ['POST e=delete', 'POST', '?e=delete'],
      ] as const) {
        test(`${name} with a stale uuid is a 409 and changes nothing; transactional=false lists it as failed`, async () => {
          const space = await uuidSpace();
          const head = namespaceOf(await read(space, 'a')).uuid as string;
          const stale = '00000000-0000-4000-8000-000000000000';
          const body = collection(point('n'), withUuid('a', stale, { v: 2 }));
          const response = await call(hub, method, `/hub/spaces/${space}/features${query}`, { body });
          assert.equal(response.status, 409, response.text);
          assert.equal(response.body.code, 'uuidMismatch');
          assert.ok(response.body.errorMessage?.endsWith(head), response.body.errorMessage);
          assert.deepEqual(await storedIds(space), ['a', 'b']);
          assert.equal(namespaceOf(await read(space, 'a')).uuid, head);

          const separator = query === '' ? '?' : '&';
          const partial = await call(hub, method, `/hub/spaces/${space}/features${query}${separator}transactional=false`, { body });
          assert.equal(partial.status, 200, partial.text);
          assert.deepEqual(partial.body.inserted, ['n']);
          assert.equal(partial.body.failed?.length, 1);
          assert.equal(partial.body.failed?.[0].id, 'a');
          assert.equal(partial.body.failed?.[0].position, 1);
          assert.match(partial.body.failed?.[0].message ?? '', /UUID/);
          assert.equal(namespaceOf(await read(space, 'a')).uuid, head);
        });
      }

      test('the matching uuid succeeds for replace, patch and delete', async () => {
        const space = await uuidSpace();
        let head = namespaceOf(await read(space, 'a')).uuid as string;
        const replaced = await put(space, withUuid('a', head, { v: 2 }));
        assert.deepEqual(replaced.body.updated, ['a']);
        head = namespaceOf(featureById(replaced, 'a')).uuid as string;
        const patched = await post(space, withUuid('a', head, { w: 3 }));
        assert.deepEqual(patched.body.updated, ['a']);
        assert.deepEqual(userProperties(await read(space, 'a')), { v: 2, w: 3 });
        head = namespaceOf(featureById(patched, 'a')).uuid as string;
        const deleted = await post(space, withUuid('a', head), '?e=delete');
        assert.deepEqual(deleted.body.deleted, ['a']);
        assert.deepEqual(await storedIds(space), ['b']);
      });

      test('input without a uuid is not checked', async () => {
        const space = await uuidSpace();
        const response = await put(space, point('a', { v: 2 }));
        assert.deepEqual(response.body.updated, ['a']);
      });

      test('e=merge with a stale uuid: cr=retain keeps the head, cr=replace takes the input', async () => {
        const space = await uuidSpace();
        const head = namespaceOf(await read(space, 'a')).uuid as string;
        const stale = '00000000-0000-4000-8000-000000000000';
        const retained = await post(space, withUuid('a', stale, { v: 2 }), '?e=merge&cr=retain');
        assert.equal(retained.status, 200, retained.text);
        assert.equal('updated' in retained.body, false);
        assert.equal(namespaceOf(featureById(retained, 'a')).uuid, head);
        assert.equal((await read(space, 'a')).properties.v, 1);

        const replaced = await post(space, withUuid('a', stale, { v: 3 }), '?e=merge&cr=replace');
        assert.equal(replaced.status, 200, replaced.text);
        assert.deepEqual(replaced.body.updated, ['a']);
        const stored = await read(space, 'a');
        assert.deepEqual(userProperties(stored), { v: 3 });
        assert.equal(namespaceOf(stored).puuid, head);
      });

      test('creating a feature whose input carries a uuid is accepted and gets a fresh uuid', async () => {
        const space = await createSpace(hub, { enableUUID: true });
        const response = await put(space, withUuid('c', 'copied-from-elsewhere'));
        assert.deepEqual(response.body.inserted, ['c']);
        assert.notEqual(namespaceOf(featureById(response, 'c')).uuid, 'copied-from-elsewhere');
      });
    });
  });
}
