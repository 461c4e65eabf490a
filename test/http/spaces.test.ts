// Black-box tests of the space API: create, read, patch, delete and list spaces (API.md 3.1–3.6, 1.4, 1.6, 1.7, 1.9).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { type Body, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

/** A client-chosen space id that no other test uses. */
const uniqueId = (prefix: string): string => `${prefix}-${randomBytes(6).toString('hex')}`;

/** The space members except `updatedAt`, which the Python client ignores when it compares a space before and after a PATCH. */
function withoutUpdatedAt(space: Body): Body {
  const { updatedAt: _ignored, ...rest } = space;
  return rest;
}

function assertErrorResponse(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.type, 'ErrorResponse');
  assert.equal(response.body.code, code);
  assert.equal(typeof response.body.error, 'string');
  assert.equal(typeof response.body.errorMessage, 'string');
  assert.equal(typeof response.body.streamId, 'string');
}

/** The ids in a space list answer, which must be a JSON array. */
function listedIds(response: TestResponse): string[] {
  assert.equal(response.status, 200, response.text);
  const list = JSON.parse(response.text) as unknown;
  assert.ok(Array.isArray(list), response.text);
  return (list as Body[]).map((space) => space.id as string);
}

const point = (id: string) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [8.5, 50.1] }, properties: { name: id } });

for (const backend of BACKENDS) {
  describe(`spaces (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    // Runs first on purpose: the hub is fresh, so the caller owns no space yet.
    test('GET /hub/spaces answers [] when the caller owns no space', async () => {
      const response = await call(hub, 'GET', '/hub/spaces');
      assert.equal(response.status, 200);
      assert.equal(response.text, '[]');
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    });

    describe('POST /hub/spaces', () => {
      test('answers 200 with the stored space and a generated 8-alphanumeric id', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'Parks', description: 'City parks' } });
        assert.equal(response.status, 200);
        const space = response.body;
        assert.match(space.id ?? '', /^[A-Za-z0-9]{8}$/);
        assert.equal(space.title, 'Parks');
        assert.equal(space.description, 'City parks');
        assert.equal('type' in space, false);
        assert.equal(typeof space.createdAt, 'number');
        assert.equal(space.updatedAt, space.createdAt);
        assert.equal(space.contentUpdatedAt, space.createdAt);
        const stored = await call(hub, 'GET', `/hub/spaces/${space.id}`);
        assert.deepEqual(stored.body, space);
      });

      test('generated ids differ from each other', async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 5; i++) ids.add(await createSpace(hub));
        assert.equal(ids.size, 5);
      });

      test('keeps a client-chosen id', async () => {
        const id = uniqueId('given');
        const response = await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'given id' } });
        assert.equal(response.status, 200);
        assert.equal(response.body.id, id);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).status, 200);
      });

      test('sets owner and cid from the token, the same for every space of that token', async () => {
        const first = await call(hub, 'POST', '/hub/spaces', { body: { title: 'one' } });
        const second = await call(hub, 'POST', '/hub/spaces', { body: { title: 'two' } });
        assert.equal(typeof first.body.owner, 'string');
        assert.notEqual(first.body.owner, '');
        assert.equal(typeof first.body.cid, 'string');
        assert.notEqual(first.body.cid, '');
        assert.equal(second.body.owner, first.body.owner);
        assert.equal(second.body.cid, first.body.cid);
      });

      test('ignores createdAt, updatedAt and contentUpdatedAt given in the input', async () => {
        const before = Date.now();
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'times', createdAt: 1, updatedAt: 2, contentUpdatedAt: 3 } });
        assert.equal(response.status, 200);
        assert.ok((response.body.createdAt as number) >= before, `createdAt ${response.body.createdAt}`);
        assert.equal(response.body.updatedAt, response.body.createdAt);
        assert.equal(response.body.contentUpdatedAt, response.body.createdAt);
      });

      test('drops unknown members and never returns them, nor a type member', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', {
          body: { title: 'unknown members', type: 'Space', favouriteColour: 'green', nested: { a: 1 } },
        });
        assert.equal(response.status, 200);
        for (const member of ['type', 'favouriteColour', 'nested']) assert.equal(member in response.body, false, member);
        const stored = await call(hub, 'GET', `/hub/spaces/${response.body.id}`);
        for (const member of ['type', 'favouriteColour', 'nested']) assert.equal(member in stored.body, false, member);
      });

      for (const body of [{}, { description: 'no title' }, { title: '' }, { title: null }]) {
        test(`requires a title: ${JSON.stringify(body)} → 400`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body });
          assertErrorResponse(response, 400, 'spaceValidation');
          assert.equal(response.body.error, 'IllegalArgument');
          assert.equal(response.body.errorMessage, "Validation failed. The property 'title' cannot be empty.");
        });
      }

      test('an existing id → 409 "The record {<id>} exists." and the stored space is untouched', async () => {
        const id = uniqueId('dup');
        await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'first' } });
        const response = await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'second' } });
        assertErrorResponse(response, 409, 'spaceExists');
        assert.equal(response.body.errorMessage, `The record {${id}} exists.`);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).body.title, 'first');
      });

      test('accepts the strings "true"/"false" as booleans and returns real booleans', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', {
          body: { title: 'string booleans', shared: 'true', enableUUID: 'true', readOnly: 'false' },
        });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.shared, true);
        assert.equal(response.body.enableUUID, true);
        assert.equal('readOnly' in response.body, false);
      });

      test('omits false booleans, so that key presence of shared means shared', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', {
          body: { title: 'false booleans', shared: false, readOnly: false, enableUUID: false, enableHistory: 'false' },
        });
        assert.equal(response.status, 200, response.text);
        for (const member of ['shared', 'readOnly', 'enableUUID', 'enableHistory']) assert.equal(member in response.body, false, member);
        const stored = await call(hub, 'GET', `/hub/spaces/${response.body.id}`);
        assert.equal('shared' in stored.body, false);
      });

      test('rejects a boolean member that is neither a boolean nor "true"/"false"', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'bad boolean', shared: 'yes' } });
        assertErrorResponse(response, 400, 'spaceValidation');
      });

      test('enableHistory: true forces enableUUID: true', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'history', enableHistory: true } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.enableHistory, true);
        assert.equal(response.body.enableUUID, true);
      });

      for (const license of ['MIT', 'ODbL-1.0', 'CC-BY-4.0', 'BSD-3-Clause-Clear']) {
        test(`accepts the license ${license}`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'licensed', license } });
          assert.equal(response.status, 200, response.text);
          assert.equal(response.body.license, license);
        });
      }

      for (const license of ['Proprietary', 'mit', 'GPL-3.0', 42]) {
        test(`rejects the license ${JSON.stringify(license)} with 400`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'licensed', license } });
          assertErrorResponse(response, 400, 'spaceValidation');
        });
      }

      test('stores a small client object and echoes it', async () => {
        const client = { mapStyle: 'dark', zoom: 3, layers: ['a', 'b'] };
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'client', client } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.client, client);
      });

      // 600 two-byte characters: under 1024 characters but over 1024 bytes, so the limit must count bytes.
      for (const [label, client] of [['ASCII', { blob: 'x'.repeat(2000) }], ['multi-byte', { blob: 'é'.repeat(600) }]] as const) {
        test(`a client over 1024 bytes (${label}) → 400`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'big client', client } });
          assertErrorResponse(response, 400, 'spaceValidation');
          assert.ok(response.body.errorMessage?.includes('The property client is over the allowed limit of 1024 bytes.'), response.body.errorMessage);
        });
      }

      test('copyright entries need only a label', async () => {
        const copyright = [{ label: '© City of Chicago' }, { label: '© OSM', alt: 'OpenStreetMap contributors' }];
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'copyright', copyright } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.copyright, copyright);
      });

      test('a copyright entry without a label → 400', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'copyright', copyright: [{ alt: 'no label' }] } });
        assertErrorResponse(response, 400, 'spaceValidation');
      });

      test('listeners and processors given as arrays of {id, …} come back as the map form', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', {
          body: {
            title: 'connectors',
            listeners: [{ id: 'audit-listener', eventTypes: ['ModifyFeaturesEvent.request'], params: { level: 2 } }],
            processors: [{ id: 'my-processor', params: { a: 1 } }, { id: 'my-processor', params: { a: 2 }, order: 1 }],
          },
        });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.listeners, { 'audit-listener': [{ eventTypes: ['ModifyFeaturesEvent.request'], params: { level: 2 } }] });
        assert.deepEqual(response.body.processors, { 'my-processor': [{ params: { a: 1 } }, { params: { a: 2 }, order: 1 }] });
        const stored = await call(hub, 'GET', `/hub/spaces/${response.body.id}`);
        assert.deepEqual(stored.body.processors, response.body.processors);
      });

      test('a processor set to null in the map form is left out', async () => {
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'map form', processors: { 'my-processor': [{}], gone: null } } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.processors, { 'my-processor': [{}] });
      });

      test('processors given as the map form are kept as given', async () => {
        const processors = { 'my-processor': [{ params: { a: 1 }, eventTypes: ['ModifySpaceEvent.request'] }] };
        const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'map form', processors } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.processors, processors);
      });

      test('versionsToKeep defaults to 1 and accepts larger values', async () => {
        const plain = await call(hub, 'POST', '/hub/spaces', { body: { title: 'versions' } });
        assert.equal(plain.body.versionsToKeep, 1);
        const five = await call(hub, 'POST', '/hub/spaces', { body: { title: 'versions', versionsToKeep: 5 } });
        assert.equal(five.status, 200, five.text);
        assert.equal(five.body.versionsToKeep, 5);
      });

      for (const versionsToKeep of [0, -1, -100]) {
        test(`versionsToKeep ${versionsToKeep} → 400`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'versions', versionsToKeep } });
          assertErrorResponse(response, 400, 'spaceValidation');
        });
      }

      for (const rawBody of ['{"title": "broken"', 'not json at all', '']) {
        test(`a malformed JSON body ${JSON.stringify(rawBody)} → 400 "Invalid JSON string"`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { rawBody, headers: { 'content-type': 'application/json' } });
          assertErrorResponse(response, 400, 'invalidJsonSpace');
          assert.ok(response.body.errorMessage?.startsWith('Invalid JSON string'), response.body.errorMessage);
        });
      }

      for (const body of [[{ title: 'in an array' }], 'a string', 42]) {
        test(`a JSON body that is not an object (${JSON.stringify(body)}) → 400`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body });
          assertErrorResponse(response, 400, 'invalidJsonSpace');
        });
      }

      for (const contentType of ['application/geo+json', 'application/json', 'application/json; charset=utf-8']) {
        test(`accepts the content type ${contentType}`, async () => {
          const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'typed' }, headers: { 'content-type': contentType } });
          assert.equal(response.status, 200, response.text);
        });
      }

      test('accepts a body that starts with a UTF-8 byte-order mark', async () => {
        const rawBody = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ title: 'bom' }))]);
        const response = await call(hub, 'POST', '/hub/spaces', { rawBody });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.title, 'bom');
      });
    });

    describe('GET /hub/spaces/{id}', () => {
      test('answers 200 with the space as application/json or application/geo+json', async () => {
        const id = await createSpace(hub, { description: 'read me' });
        const response = await call(hub, 'GET', `/hub/spaces/${id}`);
        assert.equal(response.status, 200);
        assert.equal(response.body.id, id);
        assert.equal(response.body.description, 'read me');
        assert.match(response.headers.get('content-type') ?? '', /^application\/(geo\+)?json/);
      });

      test('an unknown space → 404 with the ErrorResponse shape', async () => {
        const response = await call(hub, 'GET', '/hub/spaces/no-such-space', { headers: { 'stream-id': 'spaceStream1' } });
        assertErrorResponse(response, 404, 'spaceNotFound');
        assert.equal(response.body.error, 'Exception');
        assert.equal(response.body.errorMessage, 'The requested resource does not exist.');
        assert.equal(response.body.streamId, 'spaceStream1');
      });

      test('accepts a trailing slash', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'GET', `/hub/spaces/${id}/`);
        assert.equal(response.status, 200);
        assert.equal(response.body.id, id);
        assert.equal((await call(hub, 'GET', '/hub/spaces/')).status, 200);
      });

      test('accepts Content-Type: application/geo+json on a bodiless GET', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'GET', `/hub/spaces/${id}`, { headers: { 'content-type': 'application/geo+json' } });
        assert.equal(response.status, 200);
      });
    });

    describe('PATCH /hub/spaces/{id}', () => {
      test('merges: members replace, nested objects merge, arrays replace, null removes', async () => {
        const id = await createSpace(hub, {
          title: 'before', description: 'to be removed', packages: ['p1', 'p2'],
          client: { a: 1, b: { x: 1, y: 2 }, list: [1, 2, 3] },
        });
        const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, {
          body: { title: 'after', description: null, packages: ['p3'], client: { b: { y: 3 }, list: [9], c: 'new' } },
        });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.id, id);
        assert.equal(response.body.title, 'after');
        assert.equal('description' in response.body, false);
        assert.deepEqual(response.body.packages, ['p3']);
        assert.deepEqual(response.body.client, { a: 1, b: { x: 1, y: 3 }, list: [9], c: 'new' });
        const stored = await call(hub, 'GET', `/hub/spaces/${id}`);
        assert.deepEqual(stored.body, response.body);
      });

      test('changes updatedAt and keeps createdAt', async () => {
        const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'times' } });
        // The clock must move past the creation millisecond for updatedAt to be able to differ.
        await sleep(5);
        const response = await call(hub, 'PATCH', `/hub/spaces/${created.body.id}`, { body: { title: 'times 2' } });
        assert.equal(response.status, 200);
        assert.equal(response.body.createdAt, created.body.createdAt);
        assert.ok((response.body.updatedAt as number) > (created.body.updatedAt as number), `${response.body.updatedAt}`);
        assert.equal(response.body.contentUpdatedAt, created.body.contentUpdatedAt);
      });

      test('ignores createdAt and updatedAt in the body', async () => {
        const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'times' } });
        const response = await call(hub, 'PATCH', `/hub/spaces/${created.body.id}`, { body: { createdAt: 1, updatedAt: 2, title: 'x' } });
        assert.equal(response.status, 200);
        assert.equal(response.body.createdAt, created.body.createdAt);
        assert.notEqual(response.body.updatedAt, 2);
      });

      test('owner and cid set to null are ignored', async () => {
        const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'owned' } });
        const response = await call(hub, 'PATCH', `/hub/spaces/${created.body.id}`, { body: { owner: null, cid: null } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.owner, created.body.owner);
        assert.equal(response.body.cid, created.body.cid);
      });

      test('title null → 400, the title stays', async () => {
        const id = await createSpace(hub, { title: 'keep me' });
        const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { title: null } });
        assertErrorResponse(response, 400, 'spaceValidation');
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).body.title, 'keep me');
      });

      test('unknown members are dropped', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { favouriteColour: 'green', type: 'Space' } });
        assert.equal(response.status, 200, response.text);
        assert.equal('favouriteColour' in response.body, false);
        assert.equal('type' in response.body, false);
      });

      test('a body id different from the path id → 400, the same id is fine', async () => {
        const id = await createSpace(hub);
        const mismatch = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { id: 'other', title: 'x' } });
        assertErrorResponse(mismatch, 400, 'spaceIdMismatch');
        assert.equal(mismatch.body.errorMessage, 'The resource ID in the body does not match the resource ID in the path.');
        const same = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { id, title: 'same id' } });
        assert.equal(same.status, 200, same.text);
        assert.equal(same.body.title, 'same id');
      });

      for (const name of ['enableUUID', 'enableHistory', 'enableGlobalVersioning']) {
        for (const value of [true, false, 'true', null]) {
          test(`${name}: ${JSON.stringify(value)} on a space without it → 400`, async () => {
            const id = await createSpace(hub);
            const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { [name]: value } });
            assertErrorResponse(response, 400, 'creationOnlyProperty');
            assert.equal(response.body.errorMessage, `Validation failed. The property '${name}' can only get set on space creation!`);
            assert.equal(name in (await call(hub, 'GET', `/hub/spaces/${id}`)).body, false);
          });
        }

        test(`${name}: true is allowed on a space created with ${name}: true, false and null are not`, async () => {
          const id = await createSpace(hub, { [name]: true });
          const same = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { [name]: true, description: 'still on' } });
          assert.equal(same.status, 200, same.text);
          assert.equal(same.body[name], true);
          assert.equal(same.body.description, 'still on');
          for (const value of [false, null]) {
            const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { [name]: value } });
            assertErrorResponse(response, 400, 'creationOnlyProperty');
            assert.equal(response.body.errorMessage, `Validation failed. The property '${name}' can only get set on space creation!`);
          }
          assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).body[name], true);
        });
      }

      test('{} changes nothing but possibly updatedAt', async () => {
        const id = await createSpace(hub, {
          description: 'full', shared: true, license: 'MIT', client: { a: { b: 1 } }, copyright: [{ label: 'me' }],
          processors: { 'my-processor': [{ params: { a: 1 } }] }, enableUUID: true, packages: ['p'],
        });
        const before = await call(hub, 'GET', `/hub/spaces/${id}`);
        const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: {} });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(withoutUpdatedAt(response.body), withoutUpdatedAt(before.body));
        const afterwards = await call(hub, 'GET', `/hub/spaces/${id}`);
        assert.deepEqual(withoutUpdatedAt(afterwards.body), withoutUpdatedAt(before.body));
      });

      for (const empty of [[], {}]) {
        test(`"processors": ${JSON.stringify(empty)} removes all processors`, async () => {
          const id = await createSpace(hub, { processors: [{ id: 'first-processor', params: { a: 1 } }, { id: 'second-processor' }] });
          const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { processors: empty } });
          assert.equal(response.status, 200, response.text);
          assert.equal('processors' in response.body, false, JSON.stringify(response.body.processors));
          assert.equal('processors' in (await call(hub, 'GET', `/hub/spaces/${id}`)).body, false);
        });
      }

      test('processors given as an array replace the stored processors', async () => {
        const id = await createSpace(hub, { processors: [{ id: 'old-processor' }] });
        const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { processors: [{ id: 'new-processor', params: { b: 2 } }] } });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body.processors, { 'new-processor': [{ params: { b: 2 } }] });
      });

      test('processors given as a map merge per connector id; null removes one', async () => {
        const id = await createSpace(hub, { processors: [{ id: 'kept-processor' }, { id: 'changed-processor', params: { a: 1 } }] });
        const changed = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { processors: { 'changed-processor': [{ params: { a: 2 } }] } } });
        assert.equal(changed.status, 200, changed.text);
        assert.deepEqual(changed.body.processors, { 'kept-processor': [{}], 'changed-processor': [{ params: { a: 2 } }] });
        const removed = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { processors: { 'kept-processor': null } } });
        assert.equal(removed.status, 200, removed.text);
        assert.deepEqual(removed.body.processors, { 'changed-processor': [{ params: { a: 2 } }] });
      });

      test('validates patched members like on creation', async () => {
        const id = await createSpace(hub);
        for (const body of [{ license: 'nope' }, { versionsToKeep: 0 }, { client: { blob: 'x'.repeat(2000) } }]) {
          const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body });
          assertErrorResponse(response, 400, 'spaceValidation');
        }
      });

      test('an unknown space → 404', async () => {
        const response = await call(hub, 'PATCH', '/hub/spaces/no-such-space', { body: { title: 'x' } });
        assertErrorResponse(response, 404, 'spaceNotFound');
      });

      test('a malformed JSON body → 400 "Invalid JSON string", a JSON array → 400', async () => {
        const id = await createSpace(hub);
        const malformed = await call(hub, 'PATCH', `/hub/spaces/${id}`, { rawBody: '{"title":' });
        assertErrorResponse(malformed, 400, 'invalidJsonSpace');
        assert.ok(malformed.body.errorMessage?.startsWith('Invalid JSON string'), malformed.body.errorMessage);
        const array = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: [{ title: 'x' }] });
        assertErrorResponse(array, 400, 'invalidJsonSpace');
      });

      test('accepts a string boolean and returns a real one', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { shared: 'true' } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.shared, true);
        const unshared = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { shared: false } });
        assert.equal('shared' in unshared.body, false);
      });
    });

    describe('readOnly spaces', () => {
      const FORBIDDEN_START = 'The method is not allowed, because the resource';

      test('every feature write → 405, reads still work, and readOnly can be switched off and on', async () => {
        const id = await createSpace(hub);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features: [point('A')] } })).status, 200);
        const locked = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { readOnly: true } });
        assert.equal(locked.body.readOnly, true);

        const writes: Array<[string, string, unknown]> = [
          ['PUT', `/hub/spaces/${id}/features`, { type: 'FeatureCollection', features: [point('B')] }],
          ['POST', `/hub/spaces/${id}/features`, { type: 'FeatureCollection', features: [point('B')] }],
          ['PUT', `/hub/spaces/${id}/features/A`, point('A')],
          ['PATCH', `/hub/spaces/${id}/features/A`, { properties: { name: 'changed' } }],
          ['DELETE', `/hub/spaces/${id}/features/A`, undefined],
          ['DELETE', `/hub/spaces/${id}/features?id=A`, undefined],
        ];
        for (const [method, path, body] of writes) {
          const response = await call(hub, method, path, { body });
          assertErrorResponse(response, 405, 'readOnlySpace');
          assert.ok(response.body.errorMessage?.startsWith(FORBIDDEN_START), `${method} ${path}: ${response.body.errorMessage}`);
        }
        const read = await call(hub, 'GET', `/hub/spaces/${id}/features/A`);
        assert.equal(read.status, 200);
        assert.equal((read.body.properties as { name: string }).name, 'A');

        const unlocked = await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { readOnly: false } });
        assert.equal('readOnly' in unlocked.body, false);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/B`, { body: point('B') })).status, 200);

        await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { readOnly: 'true' } });
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/C`, { body: point('C') })).status, 405);
      });

      test('a space created readOnly refuses its first write', async () => {
        const id = await createSpace(hub, { readOnly: true });
        const response = await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features: [point('A')] } });
        assertErrorResponse(response, 405, 'readOnlySpace');
        assert.ok(response.body.errorMessage?.startsWith(FORBIDDEN_START), response.body.errorMessage);
      });
    });

    describe('DELETE /hub/spaces/{id}', () => {
      test('answers 204 with an empty body, and the space is gone', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'DELETE', `/hub/spaces/${id}`);
        assert.equal(response.status, 204);
        assert.equal(response.text, '');
        assertErrorResponse(await call(hub, 'GET', `/hub/spaces/${id}`), 404, 'spaceNotFound');
      });

      test('with Accept: application/json answers 200 with the deleted space', async () => {
        const id = await createSpace(hub, { description: 'soon gone' });
        const response = await call(hub, 'DELETE', `/hub/spaces/${id}`, { headers: { accept: 'application/json' } });
        assert.equal(response.status, 200);
        assert.equal(response.body.id, id);
        assert.equal(response.body.description, 'soon gone');
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).status, 404);
      });

      test('with another Accept answers 204', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'DELETE', `/hub/spaces/${id}`, { headers: { accept: 'application/json, text/plain, */*' } });
        assert.equal(response.status, 204);
        assert.equal(response.text, '');
      });

      test('an unknown space → 404', async () => {
        assertErrorResponse(await call(hub, 'DELETE', '/hub/spaces/no-such-space'), 404, 'spaceNotFound');
      });

      test('deleting twice → 404 the second time', async () => {
        const id = await createSpace(hub);
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${id}`)).status, 204);
        assertErrorResponse(await call(hub, 'DELETE', `/hub/spaces/${id}`), 404, 'spaceNotFound');
      });

      test('the CLI form (Content-Type: application/json, body "") works; the body is ignored', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'DELETE', `/hub/spaces/${id}`, { rawBody: '""', headers: { 'content-type': 'application/json' } });
        assert.equal(response.status, 204, response.text);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}`)).status, 404);
      });

      test('a garbage body on DELETE is ignored', async () => {
        const id = await createSpace(hub);
        const response = await call(hub, 'DELETE', `/hub/spaces/${id}`, { rawBody: '{not json', headers: { 'content-type': 'application/geo+json' } });
        assert.equal(response.status, 204, response.text);
      });

      test('features of a deleted space are unreachable, also after the id is used again', async () => {
        const id = uniqueId('reused');
        await createSpace(hub, { id });
        const written = await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features: [point('A'), point('B')] } });
        assert.equal(written.status, 200, written.text);
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${id}`)).status, 204);

        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}/features?id=A`)).status, 404);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}/features/A`)).status, 404);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}/search`)).status, 404);

        await createSpace(hub, { id });
        const byId = await call(hub, 'GET', `/hub/spaces/${id}/features?id=A,B`);
        assert.equal(byId.status, 200);
        assert.deepEqual(byId.body.features, []);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}/features/A`)).status, 404);
        const search = await call(hub, 'GET', `/hub/spaces/${id}/search`);
        assert.deepEqual(search.body.features, []);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${id}/count`)).body.count, 0);
      });
    });

    describe('GET /hub/spaces', () => {
      test('lists only own spaces by default; owner=* and owner=others also show other owners', async () => {
        const mine = await createSpace(hub);
        const foreignOwner = uniqueId('account');
        const foreign = await createSpace(hub, { owner: foreignOwner });

        for (const query of ['', '?owner=me', '?owner=']) {
          const ids = listedIds(await call(hub, 'GET', `/hub/spaces${query}`));
          assert.ok(ids.includes(mine), query);
          assert.ok(!ids.includes(foreign), query);
        }
        const all = listedIds(await call(hub, 'GET', '/hub/spaces?owner=*'));
        assert.ok(all.includes(mine) && all.includes(foreign));
        const others = listedIds(await call(hub, 'GET', '/hub/spaces?owner=others'));
        assert.ok(others.includes(foreign) && !others.includes(mine));
        assert.deepEqual(listedIds(await call(hub, 'GET', `/hub/spaces?owner=${foreignOwner}`)), [foreign]);
        assert.equal((await call(hub, 'GET', '/hub/spaces?owner=nobody-owns-anything')).text, '[]');
      });

      test('list elements are spaces as GET shows them; connectors only with includeConnectors', async () => {
        const id = await createSpace(hub, { description: 'listed', shared: true });
        const response = await call(hub, 'GET', '/hub/spaces?includeConnectors=true');
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        const listed = (JSON.parse(response.text) as Body[]).find((space) => space.id === id);
        const shown = (await call(hub, 'GET', `/hub/spaces/${id}`)).body;
        assert.deepEqual(listed, shown);
        const plain = (JSON.parse((await call(hub, 'GET', '/hub/spaces')).text) as Body[]).find((space) => space.id === id);
        const { storage: _storage, ...withoutConnectors } = shown;
        assert.deepEqual(plain, withoutConnectors);
      });

      test('the contentUpdatedAt filter supports every operator and comma OR', async () => {
        const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'filtered' } });
        const id = created.body.id as string;
        const at = created.body.contentUpdatedAt as number;
        const cases: Array<[string, boolean]> = [
          [`=${at}`, true], [`!=${at}`, false], [`>${at}`, false], [`>${at - 1}`, true], [`>=${at}`, true],
          [`<${at}`, false], [`<${at + 1}`, true], [`<=${at}`, true],
          [`=gt=${at - 1}`, true], [`=gt=${at}`, false], [`=gte=${at}`, true], [`=lt=${at}`, false],
          [`=lt=${at + 1}`, true], [`=lte=${at}`, true], [`=lte=${at - 1}`, false],
          [`=1,${at}`, true], [`=1,2`, false], [`<1,${at}`, false], [`<1,${at + 1}`, true],
        ];
        for (const [condition, listed] of cases) {
          const ids = listedIds(await call(hub, 'GET', `/hub/spaces?contentUpdatedAt${condition}`));
          assert.equal(ids.includes(id), listed, `contentUpdatedAt${condition}`);
        }
        const encoded = listedIds(await call(hub, 'GET', `/hub/spaces?contentUpdatedAt%3E%3D${at}`));
        assert.ok(encoded.includes(id), 'percent-encoded >=');
        // An empty value is no filter, as `tags=` is (API.md 1.2).
        assert.ok(listedIds(await call(hub, 'GET', '/hub/spaces?contentUpdatedAt=')).includes(id), 'empty value');
      });

      for (const condition of ['=abc', '=gt=soon', '>', '=gt=', '~5', '=1,x']) {
        test(`a bad contentUpdatedAt (contentUpdatedAt${condition}) → 400`, async () => {
          const response = await call(hub, 'GET', `/hub/spaces?contentUpdatedAt${condition}`);
          assertErrorResponse(response, 400, 'invalidParameter');
        });
      }

      test('contentUpdatedAt advances after a feature write, updatedAt does not', async () => {
        const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'content' } });
        const id = created.body.id as string;
        const at = created.body.contentUpdatedAt as number;
        // The clock must move past the creation millisecond for the write time to be able to differ.
        await sleep(5);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features: [point('A')] } })).status, 200);
        const space = (await call(hub, 'GET', `/hub/spaces/${id}`)).body;
        assert.ok((space.contentUpdatedAt as number) > at, `${space.contentUpdatedAt} > ${at}`);
        assert.equal(space.updatedAt, created.body.updatedAt);
        assert.equal(space.createdAt, created.body.createdAt);
        assert.ok(listedIds(await call(hub, 'GET', `/hub/spaces?contentUpdatedAt>${at}`)).includes(id));

        await sleep(5);
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${id}/features/A`)).status, 204);
        const afterDelete = (await call(hub, 'GET', `/hub/spaces/${id}`)).body;
        assert.ok((afterDelete.contentUpdatedAt as number) > (space.contentUpdatedAt as number), 'a delete is a content change too');
      });

      test('a trailing slash and Content-Type: application/geo+json are accepted', async () => {
        const id = await createSpace(hub);
        const ids = listedIds(await call(hub, 'GET', '/hub/spaces/', { headers: { 'content-type': 'application/geo+json' } }));
        assert.ok(ids.includes(id));
      });
    });
  });
}
