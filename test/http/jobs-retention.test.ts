// The retention of finished jobs (docs/jobs.md, HUB_JOBS_RETENTION) on both engines: a finished job and its files go once it is older than the retention; a job waiting for its input stays.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const RETENTION_MS = 2000;
const ENV = { HUB_JOBS_POLL: '50ms', HUB_JOBS_LEASE: '1500ms', HUB_JOBS_RETENTION: `${RETENTION_MS}ms` };

for (const backend of BACKENDS) {
  describe(`jobs retention (${backend})`, () => {
    let hub: HubProcess;
    before(async () => {
      hub = await startHub({ backend, env: ENV });
    });
    after(async () => {
      await hub?.stop();
    });

    test('a finished export and its file are removed after HUB_JOBS_RETENTION; a job waiting for input is kept', async () => {
      const space = await createSpace(hub);
      const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'a', geometry: { type: 'Point', coordinates: [1, 2] }, properties: {} }] } });
      assert.equal(put.status, 200, put.text);
      const created = Date.now();
      const exporting = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOJSON' } } });
      const waiting = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Files' }, target: { type: 'Space', id: space } } });
      const id = exporting.body.id as string;
      const folder = join(hub.dataDir, 'jobs', id);
      let finishedAt = 0;
      for (let state = ''; state !== 'SUCCEEDED';) {
        state = (await call(hub, 'GET', `/hub/jobs/${id}/status`)).body.state as string;
        finishedAt = Date.now();
        assert.ok(!['FAILED', 'CANCELLED'].includes(state), state);
      }
      assert.ok(existsSync(join(folder, 'output')), 'the output is written');
      assert.equal((await call(hub, 'GET', `/hub/jobs/${id}/outputs`)).status, 200, 'downloadable within the retention');
      // The row goes first, then its folder (job-runner.ts): wait for both.
      for (;;) {
        const now = await call(hub, 'GET', `/hub/jobs/${id}`);
        if (now.status === 404 && !existsSync(folder)) break;
        assert.ok(Date.now() - finishedAt < RETENTION_MS + 10_000, 'the job and its folder are removed soon after its retention');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(Date.now() - created >= RETENTION_MS, 'not before its retention (counted from its last change, after its creation)');
      assertError(await call(hub, 'GET', `/hub/jobs/${id}/outputs`), 404, 'jobNotFound');
      assert.equal((await call(hub, 'GET', `/hub/jobs/${waiting.body.id as string}`)).status, 200, 'a job waiting for its input is no finished job');
    });
  });
}
