// `spatial-hub import` on awkward input and a failing network (issue 25, sections 1 and 4): CSV quirks, a file cut mid-feature, an empty file, resume after kill -9 (chunks in flight the hub committed not sent again, a GeoJSONSeq file read on from the checkpoint's byte), retries on 503 and none on 400, and a large GeoJSON streamed from a generator with the CLI's memory bounded.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { allIds, call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { passOn, startProxy } from '../helpers/hub-proxy.js';
import { cli, startCli } from '../helpers/transfer-cli.js';

/** The size of the streamed GeoJSON: the 2 GB by default (about two minutes); TRANSFER_TEST_MB=200 for a quicker run. */
const BIG_MB = Number(process.env.TRANSFER_TEST_MB ?? 2048);

const summaryOf = (stderr: string) => (JSON.parse(stderr.trim().split('\n').filter((line) => line.startsWith('{"summary"')).pop() ?? '{}') as { summary: Record<string, number> }).summary;

/** A proxy to the hub that answers the first `fail` PUTs itself with `status`, and counts the PUTs it saw. */
async function faultyProxy(hub: HubProcess, status: number, fail: number): Promise<{ server: Server; url: string; puts: () => number }> {
  let puts = 0;
  const { server, url } = await startProxy((incoming, outgoing) => {
    if (incoming.method === 'PUT' && puts++ < fail) {
      incoming.resume();
      outgoing.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
      outgoing.end(JSON.stringify({ type: 'ErrorResponse', error: 'Exception', errorMessage: `proxy says ${status}` }));
      return;
    }
    incoming.pipe(passOn(hub, incoming, outgoing));
  });
  return { server, url, puts: () => puts };
}

/**
 * A proxy to the hub that records the ids of each PUT it forwards. With `hold`, the third PUT goes to the hub but its
 * answer is kept from the client (the hub commits a chunk whose acknowledgement is lost) and the fourth never reaches
 * the hub (a chunk lost in the network); `held` resolves when both are so.
 */
async function holdingProxy(hub: HubProcess, hold = true): Promise<{ server: Server; url: string; held: Promise<void>; sent: () => string[][] }> {
  const sent: string[][] = [];
  let committed: () => void = () => undefined;
  let lost: () => void = () => undefined;
  const held = Promise.all([new Promise<void>((resolve) => { committed = resolve; }), new Promise<void>((resolve) => { lost = resolve; })]).then(() => undefined);
  const { server, url } = await startProxy((incoming, outgoing) => {
    const parts: Buffer[] = [];
    incoming.on('data', (part: Buffer) => parts.push(part));
    incoming.on('end', () => {
      const body = Buffer.concat(parts);
      const put = incoming.method === 'PUT' ? sent.push((JSON.parse(body.toString()) as { features: Array<{ id: string }> }).features.map((feature) => feature.id)) : 0;
      if (hold && put === 4) {
        lost();
        return;
      }
      const withheld = hold && put === 3;
      passOn(hub, incoming, outgoing, withheld ? { onAnswer: (answer) => answer.resume().on('end', committed) } : {}).end(body);
    });
  });
  return { server, url, held, sent: () => sent };
}

const points = (count: number, withIds: boolean) => Array.from({ length: count }, (_, i) =>
  JSON.stringify({ type: 'Feature', ...(withIds ? { id: `f${i}` } : {}), geometry: { type: 'Point', coordinates: [(i % 3600) / 10 - 180, (i % 1700) / 10 - 85] }, properties: { n: i } })).join('\n') + '\n';

for (const backend of BACKENDS) {
  describe(`spatial-hub import on ${backend}`, () => {
    let hub: HubProcess;
    let directory: string;
    before(async () => {
      hub = await startHub({ backend });
      directory = mkdtempSync(join(tmpdir(), 'transfer-cli-'));
    });
    after(async () => {
      await hub?.stop();
      if (directory) rmSync(directory, { recursive: true, force: true });
    });

    test('CSV with a BOM, CRLF, quoted commas and quotes, longitude/latitude columns by name', async () => {
      const file = join(directory, 'quirks.csv');
      writeFileSync(file, '\uFEFFid,name,Longitude,Latitude,note\r\n' +
        'a1,"Smith, John",13.4,52.5,"said ""hi"""\r\n' +
        'a2,"multi\r\nline",-0.1,51.5,\r\n' +
        'a3,plain,2.35,48.85,x\r\n');
      const result = await cli(hub, ['import', file, '--space', 'csvquirks', '--create', 'CSV quirks']);
      assert.equal(result.code, 0, result.stderr);
      const a1 = await call(hub, 'GET', '/hub/spaces/csvquirks/features/a1');
      assert.equal((a1.body.properties as Record<string, unknown>).name, 'Smith, John');
      assert.equal((a1.body.properties as Record<string, unknown>).note, 'said "hi"');
      assert.deepEqual((a1.body.geometry as { coordinates: number[] }).coordinates.slice(0, 2), [13.4, 52.5]);
      const a2 = await call(hub, 'GET', '/hub/spaces/csvquirks/features/a2');
      assert.equal((a2.body.properties as Record<string, unknown>).name, 'multi\r\nline');
      assert.deepEqual((await allIds(hub, 'csvquirks')).sort(), ['a1', 'a2', 'a3']);
    });

    test('a bad CSV row: exit 2 naming its line, or skipped with --on-error skip', async () => {
      const file = join(directory, 'bad-row.csv');
      writeFileSync(file, 'id,lon,lat\nb1,1,2\nb2,east,2\nb3,3,4\n');
      const stopped = await cli(hub, ['import', file, '--space', 'badrow', '--create', 'bad row']);
      assert.equal(stopped.code, 2);
      assert.match(stopped.stderr, /line 3: the longitude "east" or latitude "2" is not a number/);
      const skipped = await cli(hub, ['import', file, '--space', 'badrow', '--on-error', 'skip']);
      assert.equal(skipped.code, 0, skipped.stderr);
      assert.match(skipped.stderr, /skipped line 3/);
      assert.deepEqual({ written: summaryOf(skipped.stderr).written, failed: summaryOf(skipped.stderr).failed }, { written: 2, failed: 1 });
      assert.deepEqual((await allIds(hub, 'badrow')).sort(), ['b1', 'b3']);
    });

    test('a GeoJSON file that ends mid-feature: exit 2, the feature named, and no partial feature', async () => {
      const file = join(directory, 'cut.geojson');
      const whole = JSON.stringify({ type: 'FeatureCollection', features: points(5, true).trim().split('\n').map((line) => JSON.parse(line) as unknown) });
      writeFileSync(file, whole.slice(0, whole.indexOf('"f3"') + 10));
      const result = await cli(hub, ['import', file, '--space', 'cut', '--create', 'cut', '--chunk', '2']);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /feature 3: the GeoJSON is not valid or ends early|feature 3: the GeoJSON ends in the middle/);
      assert.ok((await allIds(hub, 'cut')).every((id) => ['f0', 'f1', 'f2'].includes(id)));
    });

    test('an empty file loads nothing and succeeds; a file of unknown format is refused with exit 2', async () => {
      const empty = join(directory, 'empty.geojson');
      writeFileSync(empty, '');
      const result = await cli(hub, ['import', empty, '--space', 'empty', '--create', 'empty']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(summaryOf(result.stderr).written, 0);
      const unknown = join(directory, 'notes.txt');
      writeFileSync(unknown, 'hello');
      const refused = await cli(hub, ['import', unknown, '--space', 'empty']);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /cannot tell the format .* give --format/);
    });

    test('a GeoJSON file with a BOM, and GeoJSONSeq told from its first bytes when the name says nothing', async () => {
      const withBom = await cli(hub, ['import', join(ROOT, 'test/fixtures/chicago_parks.geo.json'), '--space', 'bom', '--create', 'bom']);
      assert.equal(withBom.code, 0, withBom.stderr);
      assert.equal((await allIds(hub, 'bom')).length, 9);
      const file = join(directory, 'lines.data');
      writeFileSync(file, points(3, true));
      const sniffed = await cli(hub, ['import', file, '--space', 'bom']);
      assert.equal(sniffed.code, 0, sniffed.stderr);
      assert.match(sniffed.stderr, /"format":"geojsonseq","written":3/);
    });

    test('GeoJSONSeq lines are stored as the feature they read as: a number id as a string, no foreign members, --id-property moves the id', async () => {
      const geometry = { type: 'Point', coordinates: [1, 2] };
      const file = join(directory, 'shapes.geojsonl');
      writeFileSync(file, [
        { type: 'Feature', id: 'plain', geometry, properties: { a: 1 } },
        { type: 'Feature', id: 7, geometry, properties: { a: 2 } },
        { type: 'Feature', id: 'foreign', bbox: [1, 2, 1, 2], extra: { x: 1 }, geometry, properties: { a: 3 } },
        { type: 'Feature', id: 'bare', geometry },
        { id: 'ordered', properties: { a: 5 }, geometry: null, type: 'Feature' },
      ].map((feature) => JSON.stringify(feature)).join('\n') + '\n');
      const loaded = await cli(hub, ['import', file, '--space', 'shapes', '--create', 'shapes']);
      assert.equal(loaded.code, 0, loaded.stderr);
      const stored = async (space: string, id: string) => {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/features/${id}`);
        assert.equal(response.status, 200, `${id}: ${response.text}`);
        const { properties, ...feature } = response.body as { properties: Record<string, unknown> } & Record<string, unknown>;
        const { '@ns:com:here:xyz': _namespace, ...user } = properties;
        return { ...feature, properties: user };
      };
      assert.deepEqual(await stored('shapes', 'plain'), { type: 'Feature', id: 'plain', geometry: { type: 'Point', coordinates: [1, 2, 0] }, properties: { a: 1 } });
      assert.deepEqual((await stored('shapes', '7')).properties, { a: 2 });
      assert.deepEqual(Object.keys(await stored('shapes', 'foreign')).sort(), ['geometry', 'id', 'properties', 'type']);
      assert.deepEqual((await stored('shapes', 'bare')).properties, {});
      assert.deepEqual(await stored('shapes', 'ordered'), { type: 'Feature', id: 'ordered', geometry: null, properties: { a: 5 } });
      const keyed = join(directory, 'keyed.geojsonl');
      writeFileSync(keyed, `${JSON.stringify({ type: 'Feature', id: 'ignored', geometry, properties: { key: 'k1', a: 6 } })}\n`);
      const byProperty = await cli(hub, ['import', keyed, '--space', 'keyed', '--create', 'keyed', '--id-property', 'key']);
      assert.equal(byProperty.code, 0, byProperty.stderr);
      assert.deepEqual((await stored('keyed', 'k1')).properties, { a: 6 });
    });

    test('resume after kill -9 mid-import: every feature once, ids stable from the position', async () => {
      const count = 20_000;
      const file = join(directory, 'resume.geojsonl');
      writeFileSync(file, points(count, false));
      const checkpoint = `${file}.spatial-hub-checkpoint.json`;
      const first = startCli(hub, ['import', file, '--space', 'resume', '--create', 'resume', '--chunk', '500', '--parallel', '2']);
      // The checkpoint is written when the first chunk is sent; the kill waits until a chunk was acknowledged.
      const reachedSoFar = () => (existsSync(checkpoint) ? (JSON.parse(readFileSync(checkpoint, 'utf8')) as { next: number }).next : 0);
      while (reachedSoFar() === 0 && first.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
      first.child.kill('SIGKILL');
      await first.done;
      const reached = reachedSoFar();
      assert.ok(reached > 0 && reached < count, `killed at item ${reached}`);
      const resumed = await cli(hub, ['import', file, '--space', 'resume', '--chunk', '500', '--parallel', '2', '--resume']);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.ok(summaryOf(resumed.stderr).startedFrom >= reached, 'the second run started at the checkpoint');
      assert.ok(!existsSync(checkpoint), 'a finished import removes its checkpoint');
      const ids = await allIds(hub, 'resume');
      assert.equal(ids.length, count);
      assert.equal(new Set(ids).size, count);
      const prefix = ids[0].split('-')[0];
      assert.deepEqual(new Set(ids), new Set(Array.from({ length: count }, (_, i) => `${prefix}-${i}`)));
    });

    test('resume after kill -9 with two chunks in flight: the one the hub committed is not sent again, the one it did not is', async () => {
      const file = join(directory, 'in-flight.geojsonl');
      writeFileSync(file, points(1000, true));
      // f399 is the last feature of the chunk that will be lost, and held the same properties before the import: the hub
      // holding them must not pass for that chunk committed.
      assert.equal((await call(hub, 'POST', '/hub/spaces', { body: { id: 'inflight', title: 'in flight' } })).status, 200);
      const f399 = JSON.parse(points(1000, true).split('\n')[399]) as Record<string, unknown>;
      assert.equal((await call(hub, 'PUT', '/hub/spaces/inflight/features', { body: { type: 'FeatureCollection', features: [f399] } })).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const holding = await holdingProxy(hub);
      const first = startCli(hub, ['import', file, '--space', 'inflight', '--chunk', '100', '--parallel', '2'], { url: holding.url });
      await holding.held;
      first.child.kill('SIGKILL');
      await first.done;
      holding.server.close();
      const checkpoint = JSON.parse(readFileSync(`${file}.spatial-hub-checkpoint.json`, 'utf8')) as { next: number };
      assert.equal(checkpoint.next, 200, 'two chunks acknowledged, two in flight');
      const counting = await holdingProxy(hub, false);
      try {
        const resumed = await cli(hub, ['import', file, '--space', 'inflight', '--chunk', '100', '--parallel', '2', '--resume'], { url: counting.url });
        assert.equal(resumed.code, 0, resumed.stderr);
        assert.equal(summaryOf(resumed.stderr).written, 1000);
      } finally {
        counting.server.close();
      }
      const firstIds = counting.sent().map((ids) => ids[0]);
      assert.ok(!firstIds.includes('f200'), `the committed chunk f200..f299 was not sent again (sent: ${firstIds.join(' ')})`);
      assert.equal(firstIds[0], 'f300', 'the lost chunk f300..f399 was sent again, first');
      assert.deepEqual((await allIds(hub, 'inflight')).sort(), Array.from({ length: 1000 }, (_, i) => `f${i}`).sort());
    });

    test('a resumed GeoJSONSeq import starts at the byte its checkpoint names, without reading the lines before it', async () => {
      const count = 30_000;
      const file = join(directory, 'offset.geojsonl');
      writeFileSync(file, points(count, true));
      const holding = await holdingProxy(hub);
      const first = startCli(hub, ['import', file, '--space', 'offset', '--create', 'offset', '--chunk', '6000', '--parallel', '2'], { url: holding.url });
      await holding.held;
      first.child.kill('SIGKILL');
      await first.done;
      holding.server.close();
      const checkpointPath = `${file}.spatial-hub-checkpoint.json`;
      const { next, at } = JSON.parse(readFileSync(checkpointPath, 'utf8')) as { next: number; at: { byte: number; line: number } };
      assert.equal(next, 12_000);
      assert.equal(at.line, 12_000);
      // The lines between the fingerprinted first MiB and the checkpoint become one: counting lines would now skip too far.
      const text = readFileSync(file);
      assert.ok(at.byte > (1 << 20) + 1000, `the checkpoint is past the first MiB (${at.byte})`);
      for (let i = (1 << 20) + 1; i < at.byte - 1; i++) if (text[i] === 0x0a) text[i] = 0x20;
      writeFileSync(file, text);
      const resumed = await cli(hub, ['import', file, '--space', 'offset', '--chunk', '6000', '--parallel', '2', '--resume']);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal((await allIds(hub, 'offset')).length, count);
    });

    test('retries 503 (honouring Retry-After) and never retries 400', async () => {
      const file = join(directory, 'retry.geojsonl');
      writeFileSync(file, points(50, true));
      const flaky = await faultyProxy(hub, 503, 3);
      try {
        const result = await cli(hub, ['import', file, '--space', 'retry', '--create', 'retry', '--chunk', '20', '--retry-delay', '10'], { url: flaky.url });
        assert.equal(result.code, 0, result.stderr);
        assert.equal(summaryOf(result.stderr).retries, 3);
        assert.equal((await allIds(hub, 'retry')).length, 50);
      } finally {
        flaky.server.close();
      }
      const refusing = await faultyProxy(hub, 400, 100);
      try {
        const result = await cli(hub, ['import', file, '--space', 'retry', '--chunk', '50', '--retry-delay', '10'], { url: refusing.url });
        assert.equal(result.code, 2);
        assert.match(result.stderr, /400 proxy says 400/);
        assert.equal(refusing.puts(), 1);
      } finally {
        refusing.server.close();
      }
      const nobody = await cli(hub, ['import', file, '--space', 'retry', '--retries', '2', '--retry-delay', '10'], { url: 'http://127.0.0.1:9' });
      assert.equal(nobody.code, 1);
      assert.match(nobody.stderr, /no answer from 127\.0\.0\.1:9 .*gave up after 3 attempts/);
      assert.ok(!nobody.stderr.includes(hub.token));
    });

    // The subject is the CLI's memory, which the hub's engine does not change: one engine is enough, and this test is
    // the longest of the suite's on either (24-28 s).
    const bigSkip = backend === BACKENDS[0] ? false : `the CLI's memory does not depend on the hub's engine; run on ${BACKENDS[0]}`;
    test(`a ${BIG_MB} MB GeoJSON streamed from a generator into stdin: all features, the CLI's peak RSS bounded`, { timeout: 600_000, skip: bigSkip }, async (t) => {
      const padding = 'x'.repeat(2000);
      const feature = (i: number) => `{"type":"Feature","id":"g${i}","geometry":{"type":"Point","coordinates":[${(i % 3600) / 10 - 180},${(i % 1700) / 10 - 85}]},"properties":{"n":${i},"pad":"${padding}"}}`;
      const count = Math.ceil((BIG_MB * 1048576) / feature(0).length);
      const run = startCli(hub, ['import', '-', '--format', 'geojson', '--space', 'big', '--create', 'big', '--chunk', '1000', '--parallel', '2'], {
        // A heap far smaller than the file: a reader that held the file would die here.
        stdin: 'pipe', env: { NODE_OPTIONS: '--max-old-space-size=64' },
      });
      const pid = run.child.pid as number;
      let peak = 0;
      const sampler = setInterval(() => {
        try {
          const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
          if (match) peak = Math.max(peak, Number(match[1]) * 1024);
        } catch {
          // the process has ended
        }
      }, 100);
      const stdin = run.child.stdin as NodeJS.WritableStream;
      // A CLI that dies (out of memory) closes its stdin: the generator stops then instead of waiting for a drain.
      let closed = false;
      stdin.on('error', () => { closed = true; });
      void run.done.then(() => { closed = true; stdin.emit('drain'); });
      const started = Date.now();
      let text = '{"type":"FeatureCollection","features":[';
      for (let i = 0; i < count && !closed; i++) {
        text += (i === 0 ? '' : ',') + feature(i);
        if (text.length > 1 << 20) {
          if (!stdin.write(text)) await once(stdin, 'drain');
          text = '';
        }
      }
      if (!closed) stdin.end(text + ']}');
      const result = await run.done;
      clearInterval(sampler);
      assert.equal(result.code, 0, result.stderr.slice(-2000));
      assert.equal(summaryOf(result.stderr).written, count);
      t.diagnostic(`${count} features, ${BIG_MB} MB in ${((Date.now() - started) / 1000).toFixed(1)} s; CLI peak RSS ${(peak / 1048576).toFixed(0)} MB`);
      // The capped heap plus V8's young generation, code and Node's own take 140-162 MB in CI runs; a reader that kept
      // the 200 MB it read (in Buffers, outside the capped heap) would pass 300 MB.
      assert.ok(peak > 0 && peak < 200 * 1048576, `the CLI's peak RSS ${(peak / 1048576).toFixed(0)} MB stays under 200 MB`);
      assert.equal((await call(hub, 'GET', '/hub/spaces/big/count')).body.count, count);
    });
  });
}
