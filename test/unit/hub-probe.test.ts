// The bench's hub probe (bench/hub-probe.ts, `bench --probe`) in a real hub on each engine: a labelled request is recorded with its statements, an unlabelled one is not.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectProbe, hubProcesses, PROBE_FILE_ENV, PROBE_HEADER } from '../../bench/probe-records.js';
import { BACKENDS, startHub } from '../helpers/hub-process.js';
import { call, createSpaceWith } from '../helpers/http-client.js';

const PROBE = fileURLToPath(new URL('../../bench/hub-probe.js', import.meta.url));

const point = (id: string, x: number, y: number) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [x, y] }, properties: {} });

for (const backend of BACKENDS) {
  test(`${backend}: the probe records the labelled box with its statements, CPU and GC pauses, and nothing else`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-probe-'));
    const file = join(dir, 'probe');
    const hub = await startHub({ backend, env: { NODE_OPTIONS: `--import ${PROBE}`, [PROBE_FILE_ENV]: file } });
    try {
      const space = await createSpaceWith(hub, [point('a', 1, 1), point('b', 2, 2), point('c', 50, 50)]);
      const box = `/hub/spaces/${space}/bbox?west=0&south=0&east=3&north=3`;
      assert.equal((await call(hub, 'GET', box)).status, 200);
      const labelled = await call(hub, 'GET', box, { headers: { [PROBE_HEADER]: 'box 1' } });
      assert.equal(labelled.status, 200);
      assert.equal((labelled.body.features as unknown[]).length, 2);
      const pid = hub.process.pid as number;
      const [dump, ...others] = await collectProbe(file, hubProcesses(pid));
      assert.equal(others.length, 0);
      assert.deepEqual(dump.requests.map((request) => request.label), ['box 1']);
      const [request] = dump.requests;
      assert.ok(request.statements >= 1, `statements ${request.statements}`);
      assert.ok(request.statementMs > 0 && request.statementMs <= request.end - request.start, `statement ${request.statementMs} ms`);
      assert.ok(request.cpuMs >= 0 && request.faults >= 0 && request.preempted >= 0);
      assert.ok(dump.pauses.every((pause) => pause.ms >= 0 && pause.kind > 0));
      // Asked again, the probe has nothing new: each dump holds what came after the previous one.
      const [again] = await collectProbe(file, [pid]);
      assert.deepEqual(again.requests, []);
    } finally {
      await hub.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
