// Crash durability of tokens, accounts, sessions and projects: what a 2xx granted still works after a kill -9, and what a 2xx revoked stays refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, type Body } from '../helpers/http-client.js';
import { crashAndRestart } from '../helpers/crash.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { ADMIN_PASSWORD, login, send } from '../helpers/sessions.js';

const ENV = { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD };
const PASSWORD = 'user-password-4567';
const PROJECTS = '/project-api/projects';
const RIGHTS = { 'xyz-hub': { readFeatures: [{}], manageSpaces: [{}] } };

for (const backend of BACKENDS) {
  describe(`durability of tokens, accounts and projects across kill -9 (${backend})`, () => {
    let hub: HubProcess;
    let kept = '';
    let revoked = '';
    let revokedByTid = '';
    let keptSession = '';
    let endedSession = '';
    const projects: Record<string, Body> = {};
    let deletedProject = '';

    const bearer = (token: string) => ({ ...hub, token });
    async function newToken(cookie: string): Promise<{ token: string; tid: string }> {
      const response = await send(hub, 'POST', '/token-api/tokens', { cookie, body: { urm: RIGHTS } });
      assert.equal(response.status, 200, response.text);
      const record = response.json as { token: string; tid: string };
      assert.equal((await call(bearer(record.token), 'GET', '/hub/spaces')).status, 200, 'usable before the crash');
      return record;
    }

    before(async () => {
      hub = await startHub({ backend, env: ENV });
      const admin = await login(hub, 'admin', ADMIN_PASSWORD);
      kept = (await newToken(admin)).token;
      revoked = (await newToken(admin)).token;
      assert.equal((await send(hub, 'DELETE', `/token-api/tokens/${revoked}`, { cookie: admin })).status, 204);
      const byTid = await newToken(admin);
      revokedByTid = byTid.token;
      assert.equal((await send(hub, 'DELETE', `/token-api/tokens/${byTid.tid}`, { cookie: admin })).status, 204);

      const account = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, body: { username: 'after-crash', password: PASSWORD } });
      assert.equal(account.status, 200, account.text);
      keptSession = await login(hub, 'after-crash', PASSWORD);
      endedSession = await login(hub, 'after-crash', PASSWORD);
      assert.equal((await send(hub, 'POST', '/account-api/logout', { cookie: endedSession })).status < 300, true);

      const owner = bearer(kept);
      const create = async (body: Record<string, unknown>) => {
        const response = await call(owner, 'POST', PROJECTS, { body });
        assert.equal(response.status, 200, response.text);
        return response.body;
      };
      const created = await create({ title: 'created', layers: [1, 2] });
      projects[created.id as string] = created;
      const published = await create({ title: 'to publish' });
      const patch = await call(owner, 'PATCH', `${PROJECTS}/${published.id as string}`, { body: { status: 'PUBLISHED' } });
      assert.equal(patch.status, 200, patch.text);
      projects[published.id as string] = patch.body;
      const replaced = await call(owner, 'PUT', `${PROJECTS}/chosen-id`, { body: { title: 'put', meta: { a: 1 } } });
      assert.equal(replaced.status, 200, replaced.text);
      projects['chosen-id'] = replaced.body;
      deletedProject = (await create({ title: 'to delete' })).id as string;
      assert.ok((await call(owner, 'DELETE', `${PROJECTS}/${deletedProject}`)).status < 300);

      hub = await crashAndRestart(hub, { env: ENV });
    });
    after(() => hub.stop());

    test('a token created before the crash is accepted', async () => {
      assert.equal((await call(bearer(kept), 'GET', '/hub/spaces')).status, 200);
    });

    test('a token deleted before the crash, by its string or by its tid, is refused', async () => {
      assert.equal((await call(bearer(revoked), 'GET', '/hub/spaces')).status, 401);
      assert.equal((await call(bearer(revokedByTid), 'GET', '/hub/spaces')).status, 401);
      assert.equal((await send(hub, 'GET', `/token-api/tokens/${revoked}`)).status, 412, 'the lookup of a deleted token (API.md 9)');
    });

    test('an account created before the crash logs in; its session goes on and the one logged out stays out', async () => {
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: keptSession })).status, 200);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: endedSession })).status, 401);
      await login(hub, 'after-crash', PASSWORD);
    });

    test('projects created, published and replaced are there as answered; the deleted one is gone', async () => {
      for (const [id, project] of Object.entries(projects)) {
        const read = await call(bearer(kept), 'GET', `${PROJECTS}/${id}`);
        assert.equal(read.status, 200, read.text);
        assert.deepEqual(read.body, project);
      }
      const published = await call(hub, 'GET', `${PROJECTS}?published=true`);
      const ids = (JSON.parse(published.text) as Array<{ id: string }>).map((project) => project.id);
      assert.ok(ids.some((id) => projects[id]?.status === 'PUBLISHED'));
      assert.equal((await call(bearer(kept), 'GET', `${PROJECTS}/${deletedProject}`)).status, 404);
    });
  });
}
