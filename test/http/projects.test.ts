// Black-box tests of the Project API (API.md 10): create, read, replace, patch, delete and list projects, owners and publishing, pagination, bad input.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertRefused, deepText } from '../helpers/hostile.js';
import { type Body, call, type RequestOptions, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const PROJECTS = '/project-api/projects';

interface Caller {
  aid: string;
  token: string;
}

/** A project id no other test uses, in the form clients make their own. */
const uniqueId = (): string => `temp_project_${randomUUID()}`;

function listOf(response: TestResponse): Body[] {
  assert.equal(response.status, 200, response.text);
  const list = JSON.parse(response.text) as unknown;
  assert.ok(Array.isArray(list), response.text.slice(0, 200));
  return list as Body[];
}

for (const backend of BACKENDS) {
  describe(`projects (${backend})`, () => {
    let hub: HubProcess;
    let alice: Caller;
    let bob: Caller;

    /** A request of `caller`. */
    const as = (caller: Caller, method: string, path: string, options: RequestOptions = {}) =>
      call(hub, method, path, { ...options, headers: { authorization: `Bearer ${caller.token}`, ...options.headers } });

    async function create(caller: Caller, body: Record<string, unknown>): Promise<Body> {
      const response = await as(caller, 'POST', PROJECTS, { body });
      assert.equal(response.status, 200, response.text);
      return response.body;
    }

    /** A fresh account, so that its list holds only what the test made. */
    async function newCaller(): Promise<Caller> {
      const aid = `account-${randomUUID().slice(0, 8)}`;
      const issued = await issueToken(hub, { aid, urm: ownerRights(aid) });
      return { aid, token: issued.token };
    }

    before(async () => {
      hub = await startHub({ backend });
      alice = await newCaller();
      bob = await newCaller();
    });
    after(async () => { await hub.stop(); });

    describe('create and read', () => {
      test('a new account lists no project: [] without caching', async () => {
        const response = await as(await newCaller(), 'GET', PROJECTS);
        assert.equal(response.text, '[]');
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(response.headers.get('cache-control'), 'no-cache');
      });

      test('POST makes an UNPUBLISHED project of the caller with a generated id, timestamps in ms and every member kept as given', async () => {
        const start = Date.now();
        const input = {
          title: 'Parks', description: 'City parks', rot: 12.5, layers: [{ id: 'l1', style: { color: '#0f0' } }],
          meta: { tags: ['a'], empty: {} }, thumbnail: null, bookmarks: [], publish_settings: { display: { name: true } },
        };
        const project = await create(alice, input);
        assert.match(project.id ?? '', /^[A-Za-z0-9]{16}$/);
        assert.equal(project.status, 'UNPUBLISHED');
        assert.equal(project.owner, alice.aid);
        assert.ok(Number.isInteger(project.created_at) && (project.created_at as number) >= start && (project.created_at as number) <= Date.now());
        assert.equal(project.last_update, project.created_at);
        for (const [name, value] of Object.entries(input)) assert.deepEqual(project[name], value, name);
        // id first, the client's members in the order sent, then the hub's.
        assert.deepEqual(Object.keys(project), ['id', ...Object.keys(input), 'status', 'owner', 'created_at', 'last_update']);
        const read = await as(alice, 'GET', `${PROJECTS}/${project.id}`);
        assert.equal(read.status, 200);
        assert.match(read.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(read.headers.get('cache-control'), 'no-cache');
        assert.deepEqual(read.body, project);
      });

      test('generated ids differ', async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 5; i++) ids.add((await create(alice, { title: `p${i}` })).id as string);
        assert.equal(ids.size, 5);
      });

      test('keeps a client-chosen id; the same id again is a 409 for anyone and changes nothing', async () => {
        const id = uniqueId();
        const project = await create(alice, { id, title: 'mine' });
        assert.equal(project.id, id);
        for (const caller of [alice, bob]) {
          const again = await as(caller, 'POST', PROJECTS, { body: { id, title: 'theirs' } });
          assertRefused(again, 409, 'projectExists');
          assert.equal(again.body.errorMessage, `The record {${id}} exists.`);
        }
        assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${id}`)).body, project);
      });

      test('owner, created_at and last_update are the hub\'s: a client cannot forge them', async () => {
        const start = Date.now();
        const project = await create(alice, { title: 'forged', owner: bob.aid, created_at: 1, last_update: 2 });
        assert.equal(project.owner, alice.aid);
        assert.ok((project.created_at as number) >= start);
        assert.equal(project.last_update, project.created_at);
        assert.equal((await as(bob, 'GET', `${PROJECTS}/${project.id}`)).status, 403);
      });

      test('an ETag, and 304 for a matching If-None-Match; a change gives another ETag', async () => {
        const project = await create(alice, { title: 'etag' });
        const first = await as(alice, 'GET', `${PROJECTS}/${project.id}`);
        const etag = first.headers.get('etag');
        assert.ok(etag);
        const again = await as(alice, 'GET', `${PROJECTS}/${project.id}`, { headers: { 'if-none-match': etag } });
        assert.equal(again.status, 304);
        assert.equal(again.text, '');
        await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { title: 'changed' } });
        const changed = await as(alice, 'GET', `${PROJECTS}/${project.id}`, { headers: { 'if-none-match': etag } });
        assert.equal(changed.status, 200);
        assert.notEqual(changed.headers.get('etag'), etag);
      });

      test('unknown ids are 404 on GET, PATCH and DELETE, and PATCH does not create', async () => {
        const id = uniqueId();
        for (const method of ['GET', 'PATCH', 'DELETE']) {
          const response = await as(alice, method, `${PROJECTS}/${id}`, method === 'PATCH' ? { body: { title: 'x' } } : {});
          assertRefused(response, 404, 'projectNotFound', method);
        }
        assert.equal((await as(alice, 'GET', `${PROJECTS}/${id}`)).status, 404);
        // An id that no project can have (a control character) is unknown too, on both engines.
        assertRefused(await as(alice, 'GET', `${PROJECTS}/a%00b`), 404, 'projectNotFound');
        assertRefused(await as(alice, 'DELETE', `${PROJECTS}/a%00b`), 404, 'projectNotFound');
      });

      test('a trailing slash is accepted', async () => {
        const project = await create(alice, { title: 'slash' });
        assert.equal((await as(alice, 'GET', `${PROJECTS}/${project.id}/`)).status, 200);
        assert.ok(listOf(await as(alice, 'GET', `${PROJECTS}/`)).some((listed) => listed.id === project.id));
      });
    });

    describe('publishing and owners', () => {
      test('an unpublished project of another account is 403 to read; published it is readable and listed by published=true', async () => {
        const project = await create(alice, { title: 'shared later' });
        assertRefused(await as(bob, 'GET', `${PROJECTS}/${project.id}`), 403, 'projectForbidden');
        const published = await as(bob, 'GET', `${PROJECTS}?published=true`);
        assert.ok(!listOf(published).some((listed) => listed.id === project.id));

        const patched = await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { status: 'PUBLISHED' } });
        assert.equal(patched.status, 200, patched.text);
        assert.equal(patched.body.status, 'PUBLISHED');
        const read = await as(bob, 'GET', `${PROJECTS}/${project.id}`);
        assert.equal(read.status, 200);
        assert.deepEqual(read.body, patched.body);
        assert.ok(listOf(await as(bob, 'GET', `${PROJECTS}?published=true`)).some((listed) => listed.id === project.id));
        // Published or not, it is still alice's, not in bob's own list.
        assert.ok(!listOf(await as(bob, 'GET', PROJECTS)).some((listed) => listed.id === project.id));

        await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { status: 'UNPUBLISHED' } });
        assertRefused(await as(bob, 'GET', `${PROJECTS}/${project.id}`), 403, 'projectForbidden');
        assert.ok(!listOf(await as(bob, 'GET', `${PROJECTS}?published=true`)).some((listed) => listed.id === project.id));
      });

      test('only the owner may replace, patch or delete, even a published project: 403 and nothing changes', async () => {
        for (const status of ['UNPUBLISHED', 'PUBLISHED']) {
          const project = await create(alice, { title: 'alice only', status, layers: [1] });
          const path = `${PROJECTS}/${project.id}`;
          assertRefused(await as(bob, 'PUT', path, { body: { title: 'bob was here' } }), 403, 'projectForbidden', `PUT ${status}`);
          assertRefused(await as(bob, 'PATCH', path, { body: { title: 'bob was here', layers: null } }), 403, 'projectForbidden', `PATCH ${status}`);
          assertRefused(await as(bob, 'DELETE', path), 403, 'projectForbidden', `DELETE ${status}`);
          assert.deepEqual((await as(alice, 'GET', path)).body, project, status);
        }
      });

      test('any valid token may use the API; none or a bad one is a 401', async () => {
        const missing = await call(hub, 'GET', PROJECTS, { anonymous: true });
        assertRefused(missing, 401, 'missingCredentials');
        const invalid = await call(hub, 'POST', PROJECTS, { headers: { authorization: 'Bearer nope' }, body: { title: 'x' } });
        assertRefused(invalid, 401, 'invalidCredentials');
        const adminList = await call(hub, 'GET', PROJECTS);
        assert.equal(adminList.status, 200);
      });
    });

    describe('PUT', () => {
      test('creates a missing project for the caller, then replaces it whole: PUT {} yields a project without description', async () => {
        const id = uniqueId();
        const start = Date.now();
        const created = await as(alice, 'PUT', `${PROJECTS}/${id}`, { body: { title: 'put', description: 'first', map_settings: { zoom: 3 } } });
        assert.equal(created.status, 200, created.text);
        assert.equal(created.body.id, id);
        assert.equal(created.body.owner, alice.aid);
        assert.equal(created.body.status, 'UNPUBLISHED');
        assert.ok((created.body.created_at as number) >= start);
        assert.deepEqual(created.body.map_settings, { zoom: 3 });

        const replaced = await as(alice, 'PUT', `${PROJECTS}/${id}`, { body: {} });
        assert.equal(replaced.status, 200, replaced.text);
        assert.deepEqual(Object.keys(replaced.body).sort(), ['created_at', 'id', 'last_update', 'owner', 'status']);
        assert.equal(replaced.body.id, id);
        assert.equal(replaced.body.status, 'UNPUBLISHED');
        assert.equal(replaced.body.created_at, created.body.created_at);
        assert.ok((replaced.body.last_update as number) >= (created.body.last_update as number));
        assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${id}`)).body, replaced.body);
      });

      test('accepts the project it returned, ignoring its hub members, and a matching id', async () => {
        const project = await create(alice, { title: 'round trip', status: 'PUBLISHED' });
        const response = await as(alice, 'PUT', `${PROJECTS}/${project.id}`, { body: { ...project, created_at: 5, title: 'again' } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.title, 'again');
        assert.equal(response.body.status, 'PUBLISHED');
        assert.equal(response.body.created_at, project.created_at);
      });

      test('a body id other than the path id is a 400; a bad path id is a 400; nothing is written', async () => {
        const id = uniqueId();
        assertRefused(await as(alice, 'PUT', `${PROJECTS}/${id}`, { body: { id: 'other', title: 'x' } }), 400, 'projectIdMismatch');
        assert.equal((await as(alice, 'GET', `${PROJECTS}/${id}`)).status, 404);
        assertRefused(await as(alice, 'PUT', `${PROJECTS}/a%20b`, { body: { title: 'x' } }), 400, 'projectValidation');
        assertRefused(await as(alice, 'PUT', `${PROJECTS}/a%00b`, { body: { title: 'x' } }), 400, 'projectValidation');
      });

      test('concurrent PUTs creating the same id make one project', async () => {
        const id = uniqueId();
        const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => as(alice, 'PUT', `${PROJECTS}/${id}`, { body: { title: `t${i}` } })));
        for (const answer of answers) assert.equal(answer.status, 200, answer.text);
        assert.equal(new Set(answers.map((answer) => answer.body.created_at)).size, 1);
        assert.equal(listOf(await as(alice, 'GET', PROJECTS)).filter((listed) => listed.id === id).length, 1);
      });

      test('concurrent POSTs of the same id: one 200, the others 409', async () => {
        const id = uniqueId();
        const answers = await Promise.all(Array.from({ length: 6 }, () => as(alice, 'POST', PROJECTS, { body: { id, title: 'race' } })));
        assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 409, 409, 409, 409, 409]);
      });
    });

    describe('PATCH', () => {
      test('merges: members replace, objects merge, null removes, unknown members stay', async () => {
        const project = await create(alice, {
          title: 'patch me', description: 'goes away', base: { style: 'dark', zoom: 4 }, layers: [1, 2], custom_thing: { keep: true },
        });
        const response = await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, {
          body: { title: 'patched', description: null, base: { zoom: null, pitch: 30 }, layers: [3], added: 'new' },
        });
        assert.equal(response.status, 200, response.text);
        const patched = response.body;
        assert.equal(patched.title, 'patched');
        assert.equal('description' in patched, false);
        assert.deepEqual(patched.base, { style: 'dark', pitch: 30 });
        assert.deepEqual(patched.layers, [3]);
        assert.deepEqual(patched.custom_thing, { keep: true });
        assert.equal(patched.added, 'new');
        assert.equal(patched.owner, alice.aid);
        assert.equal(patched.created_at, project.created_at);
        assert.ok((patched.last_update as number) >= (project.last_update as number));
        assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${project.id}`)).body, patched);
      });

      test('status null goes back to UNPUBLISHED; hub members in the body are ignored', async () => {
        const project = await create(alice, { title: 'status', status: 'PUBLISHED' });
        const response = await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { status: null, owner: bob.aid, created_at: 7, id: project.id } });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.status, 'UNPUBLISHED');
        assert.equal(response.body.owner, alice.aid);
        assert.equal(response.body.created_at, project.created_at);
        assertRefused(await as(bob, 'GET', `${PROJECTS}/${project.id}`), 403, 'projectForbidden');
      });

      test('a patch that changes nothing keeps last_update', async () => {
        const project = await create(alice, { title: 'same', base: { a: 1 } });
        const response = await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { title: 'same', base: { a: 1 }, gone: null } });
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, project);
      });

      test('a body id other than the path id is a 400 and changes nothing', async () => {
        const project = await create(alice, { title: 'id' });
        assertRefused(await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { id: 'other', title: 'x' } }), 400, 'projectIdMismatch');
        assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${project.id}`)).body, project);
      });
    });

    describe('DELETE', () => {
      test('answers 204 with an empty body; then the project is gone everywhere', async () => {
        const project = await create(alice, { title: 'delete me', status: 'PUBLISHED' });
        const path = `${PROJECTS}/${project.id}`;
        // The CLI sends DELETE with a JSON content type and the body "" (API.md 1.9).
        const response = await as(alice, 'DELETE', path, { rawBody: '', headers: { 'content-type': 'application/json' } });
        assert.equal(response.status, 204);
        assert.equal(response.text, '');
        assertRefused(await as(alice, 'GET', path), 404, 'projectNotFound');
        assertRefused(await as(alice, 'DELETE', path), 404, 'projectNotFound');
        assert.ok(!listOf(await as(alice, 'GET', PROJECTS)).some((listed) => listed.id === project.id));
        assert.ok(!listOf(await as(bob, 'GET', `${PROJECTS}?published=true`)).some((listed) => listed.id === project.id));
        // The id is free again, and a new project under it is a new one.
        assert.equal((await as(bob, 'POST', PROJECTS, { body: { id: project.id, title: 'reused' } })).body.owner, bob.aid);
      });
    });

    describe('lists and pagination', () => {
      /** Follows the handles from the start with `limit`; the pages and each answer's handle. */
      async function allPages(caller: Caller, query: string, limit: number, between?: (page: number) => Promise<void>): Promise<{ ids: string[]; handles: unknown[] }> {
        const ids: string[] = [];
        const handles: unknown[] = [];
        let handle: unknown = 0;
        for (let page = 0; page < 100; page++) {
          const response = await as(caller, 'GET', `${PROJECTS}?paginate=true&limit=${limit}&handle=${handle}${query}`);
          assert.equal(response.status, 200, response.text);
          assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
          assert.deepEqual(Object.keys(response.body), ['projects', 'handle']);
          const projects = response.body.projects as Body[];
          assert.ok(Array.isArray(projects) && projects.length <= limit);
          assert.ok(Number.isInteger(response.body.handle), `handle ${JSON.stringify(response.body.handle)}`);
          handles.push(response.body.handle);
          if (projects.length === 0) {
            assert.equal(response.body.handle, handle, 'an empty page keeps the handle');
            return { ids, handles };
          }
          ids.push(...projects.map((project) => project.id as string));
          handle = response.body.handle;
          await between?.(page);
        }
        assert.fail('pagination did not end');
      }

      test('without paginate, paginate=false: the whole array of the caller\'s projects in creation order', async () => {
        const carol = await newCaller();
        const made: string[] = [];
        for (let i = 0; i < 5; i++) made.push((await create(carol, { title: `c${i}` })).id as string);
        await create(bob, { title: 'not carol\'s' });
        for (const query of ['', '?paginate=false', '?paginate=false&limit=2&handle=3']) {
          assert.deepEqual(listOf(await as(carol, 'GET', `${PROJECTS}${query}`)).map((project) => project.id), made, query);
        }
        const [first] = listOf(await as(carol, 'GET', PROJECTS));
        assert.deepEqual(first, (await as(carol, 'GET', `${PROJECTS}/${made[0]}`)).body);
      });

      test('paginate=true: every project exactly once in order, integer handles, stable when projects come and go between pages', async () => {
        const carol = await newCaller();
        const made: string[] = [];
        for (let i = 0; i < 10; i++) made.push((await create(carol, { title: `p${i}` })).id as string);
        const { ids, handles } = await allPages(carol, '', 3, async (page) => {
          if (page === 0) made.push((await create(carol, { title: 'between pages' })).id as string);
          // A project deleted from a page already read changes nothing of the pages after it.
          if (page === 1) assert.equal((await as(carol, 'DELETE', `${PROJECTS}/${made[0]}`)).status, 204);
        });
        assert.deepEqual(ids, made);
        assert.equal(new Set(ids).size, ids.length);
        for (let i = 1; i < handles.length - 1; i++) assert.ok((handles[i] as number) > (handles[i - 1] as number), 'handles grow');
      });

      test('the default page and one exactly as long as the rest end with an empty page', async () => {
        const carol = await newCaller();
        const made: string[] = [];
        for (let i = 0; i < 4; i++) made.push((await create(carol, { title: `e${i}` })).id as string);
        const defaultPage = await as(carol, 'GET', `${PROJECTS}?paginate=true`);
        assert.deepEqual((defaultPage.body.projects as Body[]).map((project) => project.id), made);
        assert.deepEqual((await allPages(carol, '', 2)).ids, made);
        assert.deepEqual((await allPages(carol, '', 4)).ids, made);
        const beyond = await as(carol, 'GET', `${PROJECTS}?paginate=true&handle=${Number.MAX_SAFE_INTEGER}`);
        assert.deepEqual(beyond.body, { projects: [], handle: Number.MAX_SAFE_INTEGER });
      });

      test('published=true pages through every account\'s published projects only', async () => {
        const dave = await newCaller();
        const erin = await newCaller();
        const published: string[] = [];
        for (let i = 0; i < 3; i++) {
          published.push((await create(dave, { title: `d${i}`, status: 'PUBLISHED' })).id as string);
          await create(erin, { title: `hidden${i}` });
          published.push((await create(erin, { title: `e${i}`, status: 'PUBLISHED' })).id as string);
        }
        const { ids } = await allPages(dave, '&published=true', 2);
        const listed = ids.filter((id) => published.includes(id));
        assert.deepEqual(listed, published);
        assert.equal(new Set(ids).size, ids.length);
        const whole = listOf(await as(bob, 'GET', `${PROJECTS}?published=true`));
        assert.ok(whole.every((project) => project.status === 'PUBLISHED'));
        assert.deepEqual(whole.map((project) => project.id).filter((id) => published.includes(id as string)), published);
      });

      for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'limit=1.5', 'handle=-1', 'handle=abc', 'handle=1e3',
        `handle=${'9'.repeat(20)}`, 'paginate=yes', 'paginate=1', 'paginate=TRUE', 'published=maybe', 'limit=SECRET0token']) {
        test(`${query} → 400 naming the parameter`, async () => {
          const path = query.startsWith('paginate') ? `${PROJECTS}?${query}` : `${PROJECTS}?paginate=true&${query}`;
          const response = await as(alice, 'GET', path);
          assertRefused(response, 400, 'invalidParameter', query);
          const [name, value] = query.split('=');
          assert.match(response.body.errorMessage ?? '', new RegExp(`parameter ${name}: expected`));
          // Short values such as 0 occur in any message; the longer ones must not be echoed.
          if (value.length > 3) assert.ok(!response.text.includes(value), 'the value is not echoed');
        });
      }
    });

    describe('bad input', () => {
      for (const [label, rawBody, code] of [
        ['not JSON', '{"title": ', 'invalidJsonProject'],
        ['an array', '[{"title":"x"}]', 'invalidJsonProject'],
        ['a string', '"project"', 'invalidJsonProject'],
        ['null', 'null', 'invalidJsonProject'],
        ['an empty body', '', 'invalidJsonProject'],
        ['nested too deep', `{"meta":${deepText(200)}}`, 'jsonTooDeep'],
        ['a lone surrogate', '{"title":"\\ud800"}', 'malformedUnicode'],
      ] as const) {
        test(`POST, PUT and PATCH with ${label} → 400 ${code}, nothing written`, async () => {
          const project = await create(alice, { title: 'untouched' });
          const id = uniqueId();
          for (const [method, path] of [['POST', PROJECTS], ['PUT', `${PROJECTS}/${id}`], ['PATCH', `${PROJECTS}/${project.id}`]]) {
            assertRefused(await as(alice, method, path, { rawBody }), 400, code, `${method} ${label}`);
          }
          assert.equal((await as(alice, 'GET', `${PROJECTS}/${id}`)).status, 404);
          assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${project.id}`)).body, project);
        });
      }

      for (const status of ['published', 'Public', 1, true, '', { value: 'PUBLISHED' }]) {
        test(`status ${JSON.stringify(status)} → 400 projectValidation on POST, PUT and PATCH`, async () => {
          const project = await create(alice, { title: 'status' });
          const id = uniqueId();
          for (const [method, path] of [['POST', PROJECTS], ['PUT', `${PROJECTS}/${id}`], ['PATCH', `${PROJECTS}/${project.id}`]]) {
            const response = await as(alice, method, path, { body: { id: method === 'PATCH' ? project.id : id, status } });
            assertRefused(response, 400, 'projectValidation', method);
            assert.match(response.body.errorMessage ?? '', /'status' must be UNPUBLISHED or PUBLISHED/);
          }
          assert.equal((await as(alice, 'GET', `${PROJECTS}/${id}`)).status, 404);
          assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${project.id}`)).body, project);
        });
      }

      for (const id of [42, '', 'a/b', 'a b', 'tab\there', 'x?y', '100%', 'a'.repeat(1001), ['x'], { id: 'x' }, true]) {
        test(`POST with id ${JSON.stringify(id).slice(0, 30)} → 400 projectValidation`, async () => {
          const response = await as(alice, 'POST', PROJECTS, { body: { id, title: 'bad id' } });
          assertRefused(response, 400, 'projectValidation');
          assert.match(response.body.errorMessage ?? '', /'id' must be a non-empty string/);
        });
      }

      test('a body over 1 MiB → 413; a patch growing a project past 1 MiB → 413 projectTooLarge, nothing written', async () => {
        const huge = 'x'.repeat(1024 * 1024 + 1);
        assertRefused(await as(alice, 'POST', PROJECTS, { body: { title: huge } }), 413, 'payloadTooLarge');
        const half = 'y'.repeat(700 * 1024);
        const project = await create(alice, { title: 'big', thumbnail: half });
        const grown = await as(alice, 'PATCH', `${PROJECTS}/${project.id}`, { body: { second: half } });
        assertRefused(grown, 413, 'projectTooLarge');
        assert.deepEqual((await as(alice, 'GET', `${PROJECTS}/${project.id}`)).body, project);
      });

      test('a member named __proto__ is kept as data', async () => {
        const response = await as(alice, 'POST', PROJECTS, { rawBody: '{"title":"proto","__proto__":{"polluted":true}}' });
        assert.equal(response.status, 200, response.text);
        assert.match(response.text, /"__proto__":\{"polluted":true\}/);
        const read = await as(alice, 'GET', `${PROJECTS}/${response.body.id}`);
        assert.match(read.text, /"__proto__":\{"polluted":true\}/);
      });

      test('405 for a method the path does not serve', async () => {
        assertRefused(await as(alice, 'POST', `${PROJECTS}/${uniqueId()}`, { body: {} }), 405, 'methodNotAllowed');
        assertRefused(await as(alice, 'DELETE', PROJECTS), 405, 'methodNotAllowed');
      });
    });

    describe('HTTP rules (API.md 1.9)', () => {
      test('CORS on answers and errors, and a preflight answered without a token', async () => {
        const origin = 'http://maps.example';
        const ok = await as(alice, 'GET', PROJECTS, { headers: { origin } });
        assert.equal(ok.headers.get('access-control-allow-origin'), origin);
        const refused = await as(bob, 'GET', `${PROJECTS}/${uniqueId()}`, { headers: { origin } });
        assert.equal(refused.status, 404);
        assert.equal(refused.headers.get('access-control-allow-origin'), origin);
        const preflight = await call(hub, 'OPTIONS', `${PROJECTS}/x`, {
          anonymous: true,
          headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type' },
        });
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
        assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /PATCH/);
      });

      test('a gzip request body', async () => {
        const { gzipSync } = await import('node:zlib');
        const response = await as(alice, 'POST', PROJECTS, {
          rawBody: gzipSync(JSON.stringify({ title: 'zipped' })),
          headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
        });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.title, 'zipped');
      });
    });
  });
}
