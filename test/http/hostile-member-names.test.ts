// Black-box tests of names a client chooses that are also members of every JavaScript object (`__proto__`, `constructor`, `toString`): refused or ignored like any unknown name, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertRefused } from '../helpers/hostile.js';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

for (const backend of BACKENDS) {
  describe(`names of Object.prototype's members in requests (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub);
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
        body: { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'f1', geometry: { type: 'Point', coordinates: [1, 1] }, properties: { a: 1 } }] },
      });
    });
    after(async () => { await hub.stop(); });

    test('a space definition holding such a member: created or changed without it, like any unknown member', async () => {
      for (const name of NAMES) {
        const created = await call(hub, 'POST', '/hub/spaces', { rawBody: `{"title":"t","${name}":{"a":1}}`, headers: { 'content-type': 'application/json' } });
        assert.equal(created.status, 200, `POST ${name}: ${created.text.slice(0, 300)}`);
        assert.ok(!Object.hasOwn(created.body, name), `POST ${name} keeps no such member`);
        const patched = await call(hub, 'PATCH', `/hub/spaces/${space}`, { rawBody: `{"${name}":"x","title":"renamed ${name}"}`, headers: { 'content-type': 'application/json' } });
        assert.equal(patched.status, 200, `PATCH ${name}: ${patched.text.slice(0, 300)}`);
        assert.equal(patched.body.title, `renamed ${name}`);
        assert.ok(!Object.hasOwn(patched.body, name), `PATCH ${name} keeps no such member`);
      }
    });

    test('such a name as an OGC format, a CQL2-JSON operator, a job format or a tweaks strength is refused with 400', async () => {
      const items = `/ogc/collections/${space}/items`;
      for (const name of NAMES) {
        const format = await call(hub, 'GET', `${items}?f=${name}`);
        assertRefused(format, 400, 'ogcInvalidFormat', `f=${name}`);
        for (const filter of [{ op: name, args: [{ property: 'a' }, 1] }, { op: '=', args: [{ op: name, args: [{ property: 'a' }] }, 1] }]) {
          const response = await call(hub, 'GET', `${items}?filter-lang=cql2-json&filter=${encodeURIComponent(JSON.stringify(filter))}`);
          assertRefused(response, 400, 'ogcInvalidFilter', `filter ${JSON.stringify(filter)}`);
        }
        assertRefused(await call(hub, 'GET', `${items}?filter-lang=${name}&filter=a%3D1`), 400, 'ogcUnsupportedFilterLang', `filter-lang=${name}`);
        const job = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: name } } });
        assertRefused(job, 400, 'invalidJob', `job format ${name}`);
        const strength = await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=0&south=0&east=2&north=2&tweaks=simplification&tweaks.strength=${name}`);
        assertRefused(strength, 400, 'invalidParameter', `tweaks.strength=${name}`);
      }
      const jobs = await call(hub, 'GET', '/hub/jobs');
      assert.equal(jobs.status, 200);
      assert.deepEqual(jobs.body, [], 'no job was created');
    });
  });
}
