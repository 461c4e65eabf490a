// A stopped export leaves nothing behind (issue 25): the CLI's failed and interrupted exports, and a cancelled export job on the hub, remove the spool that FlatGeobuf, CSV, GeoPackage and GeoParquet write through, and the CLI's partial output file; an output file that existed stays as it was.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { cli, startCli } from '../helpers/transfer-cli.js';
import { until } from '../helpers/webhook-receiver.js';
import { readBackFlatGeobuf } from '../helpers/flatgeobuf-read-back.js';

const POINTS = 20_000;
const PUT_SIZE = 5_000;

const points = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({
  type: 'Feature', id: `p${from + i}`, geometry: { type: 'Point', coordinates: [((from + i) % 3600) / 10 - 180, ((from + i) % 1700) / 10 - 85] },
  properties: { n: from + i, name: `point ${from + i}` },
}));

/** The spool files under a temporary directory with some bytes in them: an export is under way. */
const spooling = (directory: string) => readdirSync(directory).some((entry) =>
  readdirSync(join(directory, entry)).some((file) => statSync(join(directory, entry, file)).size > 0));

for (const backend of BACKENDS) {
  describe(`temporary files of stopped exports (${backend})`, () => {
    let hub: HubProcess;
    let work: string;
    let hubTemp: string;
    let cliTemp: string;
    let space: string;
    before(async () => {
      // The hub's and the CLI's own temporary directories (TMPDIR), and the exports' output files beside them.
      work = mkdtempSync(join(tmpdir(), 'transfer-temporary-'));
      hubTemp = join(work, 'hub');
      cliTemp = join(work, 'cli');
      mkdirSync(hubTemp);
      mkdirSync(cliTemp);
      // Chunks of 100 make the export job's 20,000 features take two hundred steps: a CANCEL lands while it runs.
      hub = await startHub({ backend, env: { TMPDIR: hubTemp, HUB_JOBS_POLL: '50ms', HUB_JOBS_CHUNK: '100' } });
      space = await createSpace(hub);
      for (let from = 0; from < POINTS; from += PUT_SIZE) {
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: points(from, PUT_SIZE) } });
        assert.equal(put.status, 200, put.text);
      }
    });
    after(async () => {
      await hub?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    test('an export the hub refuses (no such space) exits 2, leaves no spool, and leaves the output file as it was', async () => {
      const output = join(work, 'refused.fgb');
      writeFileSync(output, 'an earlier export');
      const result = await cli(hub, ['export', '--space', 'no-such-space', '--format', 'flatgeobuf', '--output', output], { env: { TMPDIR: cliTemp } });
      assert.equal(result.code, 2, result.stderr);
      assert.deepEqual(readdirSync(cliTemp), []);
      assert.equal(readFileSync(output, 'utf8'), 'an earlier export');
      assert.equal(existsSync(`${output}.partial`), false);
    });

    test('Ctrl-C during a FlatGeobuf export to a file exits 130 and leaves neither a partial file nor a changed output', async () => {
      // The features go into OUTPUT.partial after room for the header, which is written last: a file cut short would
      // have no header (zeros), so it never takes the output's name.
      const output = join(work, 'interrupted.fgb');
      writeFileSync(output, 'an earlier export');
      const run = startCli(hub, ['export', '--space', space, '--format', 'flatgeobuf', '--chunk', '100', '--output', output], { env: { TMPDIR: cliTemp } });
      await until('the export writes features', () => (statSync(`${output}.partial`, { throwIfNoEntry: false })?.size ?? 0) > 64 * 1024, 20_000);
      run.child.kill('SIGINT');
      const result = await run.done;
      assert.equal(result.code, 130, result.stderr);
      assert.equal(readFileSync(output, 'utf8'), 'an earlier export');
      assert.equal(existsSync(`${output}.partial`), false);
    });

    test('Ctrl-C during an export to stdout exits 130, says so, and removes the spool at once', async () => {
      // To a pipe: a file gets the features straight after its header's room, with no spool (the next test).
      const run = startCli(hub, ['export', '--space', space, '--format', 'flatgeobuf', '--chunk', '100'], { env: { TMPDIR: cliTemp } });
      await until('the export spools features', () => spooling(cliTemp), 20_000);
      run.child.kill('SIGINT');
      const result = await run.done;
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /interrupted/);
      assert.deepEqual(readdirSync(cliTemp), []);
    });

    test('a FlatGeobuf export to a file writes no temporary file: its TMPDIR may be missing', async () => {
      const output = join(work, 'direct.fgb');
      const result = await cli(hub, ['export', '--space', space, '--format', 'flatgeobuf', '--chunk', '3000', '--output', output], { env: { TMPDIR: join(work, 'missing') } });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(existsSync(`${output}.partial`), false);
      const back = readBackFlatGeobuf(readFileSync(output));
      assert.equal(back.features.length, POINTS);
      assert.equal((back.header as { featuresCount: number }).featuresCount, POINTS);
      const ids = new Set(back.features.map((feature) => (feature as { properties: { id: string } }).properties.id));
      assert.equal(ids.size, POINTS);
      assert.ok(ids.has(`p${POINTS - 1}`));
    });

    test('a cancelled FlatGeobuf export job removes its spool on the hub', async () => {
      const created = await call(hub, 'POST', '/hub/jobs', { body: { source: { type: 'Space', id: space }, target: { type: 'Files', format: 'FLATGEOBUF' } } });
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      await until('the job spools features', () => spooling(hubTemp), 20_000);
      const cancelled = await call(hub, 'PATCH', `/hub/jobs/${id}/status`, { body: { desiredAction: 'CANCEL' } });
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.equal(cancelled.body.state, 'CANCELLED');
      await until('the spool is removed', () => readdirSync(hubTemp).length === 0, 10_000);
    });
  });
}
