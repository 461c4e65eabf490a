// Black-box tests of the jobs API (issue 25 section 2, docs/jobs.md) on both engines: imports by upload, exports by download, cancel, resume after kill -9, bad input, rights.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { deserialize } from 'flatgeobuf/lib/mjs/geojson.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { allIds, assertError, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

/** A short poll and lease so that jobs start at once and a killed node's job moves on within seconds; small chunks so that jobs take several. */
const ENV = { HUB_MAX_BODY: '1m', HUB_JOBS_POLL: '50ms', HUB_JOBS_LEASE: '1500ms', HUB_JOBS_CHUNK: '500', HUB_JOBS_MAX_INPUT: '16m' };

type Status = Record<string, unknown> & { state: string; writtenFeatures: number; failedFeatures: number; estimatedProgress: number; lastError?: string };

const point = (i: number, withId = true) => ({
  type: 'Feature', ...(withId ? { id: `p${i}` } : {}), geometry: { type: 'Point', coordinates: [(i % 1440) / 4 - 180, (i % 680) / 4 - 85] },
  properties: { n: i, name: `point ${i}`, even: i % 2 === 0 },
});
const geojsonSeq = (from: number, count: number, withIds = true) =>
  Array.from({ length: count }, (_, i) => JSON.stringify(point(from + i, withIds))).join('\n') + '\n';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const backend of BACKENDS) {
  describe(`jobs (${backend})`, () => {
    let hub: HubProcess;
    let storage: Storage;
    before(async () => {
      hub = await startHub({ backend, env: ENV });
      storage = await openStorage(hub.storage, { pgPoolSize: 1 });
    });
    after(async () => {
      await storage?.close();
      await hub?.stop();
    });

    const as = (token?: string) => (token === undefined ? {} : { headers: bearer(token) });
    const createJob = (body: object, token?: string) => call(hub, 'POST', '/hub/jobs', { body, ...as(token) });
    const upload = (id: string, data: string | Uint8Array, token?: string) =>
      call(hub, 'POST', `/hub/jobs/${id}/inputs`, { rawBody: data, headers: { 'content-type': 'application/octet-stream', ...(token ? bearer(token) : {}) } });
    const act = (id: string, desiredAction: string, token?: string) => call(hub, 'PATCH', `/hub/jobs/${id}/status`, { body: { desiredAction }, ...as(token) });
    const status = async (id: string, token?: string) => {
      const response = await call(hub, 'GET', `/hub/jobs/${id}/status`, as(token));
      assert.equal(response.status, 200, response.text);
      return response.body as unknown as Status;
    };
    const until = async (id: string, done: (now: Status) => boolean, token?: string, what = 'the job to finish'): Promise<Status> => {
      const deadline = Date.now() + 45_000;
      for (;;) {
        const now = await status(id, token);
        if (done(now)) return now;
        assert.ok(Date.now() < deadline, `timed out waiting for ${what}: ${JSON.stringify(now)}\n${hub.stderr.slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const finished = (id: string, token?: string) => until(id, (now) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(now.state), token);
    /** An import job into `space` with its input uploaded and started; returns its id. */
    const startImport = async (space: string, data: string, source: object = { type: 'Files', format: 'GEOJSONSEQ' }, token?: string) => {
      const created = await createJob({ source, target: { type: 'Space', id: space } }, token);
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      assert.equal((created.body.status as Status).state, 'WAITING_FOR_INPUT');
      const uploaded = await upload(id, data, token);
      assert.equal(uploaded.status, 200, uploaded.text);
      assert.equal(uploaded.body.inputBytes, Buffer.byteLength(data));
      const started = await act(id, 'START', token);
      assert.equal(started.status, 200, started.text);
      return id;
    };
    const count = async (space: string) => (await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count as number;

    test('an import of GeoJSONSeq by upload goes WAITING_FOR_INPUT → SUBMITTED → SUCCEEDED with its counts; the features are readable', async () => {
      const space = await createSpace(hub);
      const id = await startImport(space, geojsonSeq(0, 1200) + geojsonSeq(1200, 300, false));
      const done = await finished(id);
      assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
      assert.equal(done.writtenFeatures, 1500);
      assert.equal(done.failedFeatures, 0);
      assert.equal(done.estimatedProgress, 1);
      assert.equal(await count(space), 1500);
      const one = await call(hub, 'GET', `/hub/spaces/${space}/features/p7?force2D=true`);
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(one.body.geometry, point(7).geometry);
      assert.equal((one.body.properties as Record<string, unknown>).name, 'point 7');
      // Features without an id get ids derived from their position, as the CLI derives them: the same file gives the same ids.
      const ids = await allIds(hub, space);
      assert.equal(new Set(ids).size, 1500);
      assert.equal(ids.filter((featureId) => /^[0-9a-f]{12}-\d+$/.test(featureId)).length, 300, ids.slice(1200, 1203).join());
      const job = await call(hub, 'GET', `/hub/jobs/${id}`);
      assert.equal(job.status, 200, job.text);
      assert.equal(job.body.type, 'Import');
      assert.deepEqual(job.body.source, { type: 'Files', format: 'GEOJSONSEQ', onError: 'STOP' });
      assert.deepEqual(job.body.target, { type: 'Space', id: space });
      const listed = await call(hub, 'GET', '/hub/jobs');
      assert.ok((listed.body as unknown as Array<{ id: string }>).some((entry) => entry.id === id), listed.text.slice(0, 300));
    });

    test('an import of CSV with lon/lat columns, quoted commas and a CRLF; the format is detected from the name when not given', async () => {
      const space = await createSpace(hub);
      const csv = 'id,lon,lat,name,size\r\na1,8.5,50.1,"Frankfurt, am Main",3\r\na2,13.4,52.5,Berlin,4\r\n';
      const id = await startImport(space, csv, { type: 'Files', format: 'CSV' });
      const done = await finished(id);
      assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
      assert.equal(done.writtenFeatures, 2);
      const a1 = await call(hub, 'GET', `/hub/spaces/${space}/features/a1?force2D=true`);
      assert.equal(a1.status, 200, a1.text);
      assert.deepEqual(a1.body.geometry, { type: 'Point', coordinates: [8.5, 50.1] });
      assert.equal((a1.body.properties as Record<string, unknown>).name, 'Frankfurt, am Main');
    });

    test('exports to GeoJSONSeq, FlatGeobuf and GeoPackage are downloaded with the space\'s features; a bbox narrows them', async () => {
      const space = await createSpace(hub);
      const features = Array.from({ length: 1100 }, (_, i) => point(i));
      const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
      assert.equal(put.status, 200, put.text);
      const exportTo = async (format: string, extra: object = {}) => {
        const created = await createJob({ source: { type: 'Space', id: space, ...extra }, target: { type: 'Files', format } });
        assert.equal(created.status, 200, created.text);
        const id = created.body.id as string;
        const done = await finished(id);
        assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
        const response = await fetch(`${hub.url}/hub/jobs/${id}/outputs`, { headers: bearer(hub.token) });
        assert.equal(response.status, 200);
        return { done, response, bytes: new Uint8Array(await response.arrayBuffer()) };
      };
      const seq = await exportTo('GEOJSONSEQ');
      assert.equal(seq.done.writtenFeatures, 1100);
      assert.equal(seq.response.headers.get('content-type'), 'application/geo+json-seq');
      // The hub stores positions with an altitude (0 when none was given), as the reference hub does; the export keeps it.
      const in3D = features.map((feature) => ({ ...feature, geometry: { ...feature.geometry, coordinates: [...feature.geometry.coordinates, 0] } }));
      const lines = new TextDecoder().decode(seq.bytes).trim().split('\n').map((line) => JSON.parse(line) as unknown);
      assert.deepEqual(lines, in3D, 'the same features, in insertion order, without the hub\'s namespace');

      const fgb = await exportTo('flatgeobuf');
      const read: Array<{ geometry: unknown; properties: Record<string, unknown> }> = [];
      for await (const feature of deserialize(fgb.bytes) as AsyncGenerator<{ geometry: unknown; properties: Record<string, unknown> }>) read.push(feature);
      assert.equal(read.length, 1100);
      assert.deepEqual(read[5].geometry, in3D[5].geometry);
      assert.deepEqual(read[5].properties, { id: 'p5', ...features[5].properties });

      // A GeoPackage: typed columns, the id as a column, an R-tree over every feature (GDAL reads it in transfer-gdal.test.ts).
      const gpkg = await exportTo('GEOPACKAGE');
      assert.equal(gpkg.response.headers.get('content-type'), 'application/geopackage+sqlite3');
      assert.match(gpkg.response.headers.get('content-disposition') ?? '', /\.gpkg"?$/);
      const file = join(mkdtempSync(join(tmpdir(), 'jobs-gpkg-')), 'out.gpkg');
      writeFileSync(file, gpkg.bytes);
      const db = new Database(file, { readonly: true });
      try {
        assert.deepEqual((db.pragma('table_info(features)') as Array<{ name: string; type: string }>).map(({ name, type }) => `${name} ${type}`),
          ['fid INTEGER', 'geom POINT', 'id TEXT', 'n INTEGER', 'name TEXT', 'even BOOLEAN']);
        assert.deepEqual(db.prepare('SELECT id, n, name, even FROM features WHERE fid = 6').get(), { id: 'p5', n: 5, name: 'point 5', even: 0 });
        assert.equal((db.prepare('SELECT count(*) AS n FROM rtree_features_geom').get() as { n: number }).n, 1100);
      } finally {
        db.close();
        rmSync(dirname(file), { recursive: true, force: true });
      }

      const boxed = await exportTo('GEOJSONSEQ', { bbox: [-180, -85, -100, -40] });
      const inBox = features.filter(({ geometry: { coordinates: [lon, lat] } }) => lon <= -100 && lat <= -40);
      assert.ok(inBox.length > 0 && inBox.length < 1100);
      assert.deepEqual(new TextDecoder().decode(boxed.bytes).trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id), inBox.map((f) => f.id));
    });

    test('a partitioned export writes files of at most maxFeaturesPerFile features, listed by GET …/outputs and downloaded one by one', async () => {
      const space = await createSpace(hub);
      const features = Array.from({ length: 1250 }, (_, i) => point(i));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } })).status, 200);
      const exportTo = async (target: object) => {
        const created = await createJob({ source: { type: 'Space', id: space }, target: { type: 'Files', ...target } });
        assert.equal(created.status, 200, created.text);
        const id = created.body.id as string;
        const done = await finished(id);
        assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
        const listed = await call(hub, 'GET', `/hub/jobs/${id}/outputs`);
        assert.equal(listed.status, 200, listed.text);
        return { id, outputs: listed.body.outputs as Array<{ name: string; bytes: number; url: string }> };
      };
      const download = async (url: string) => {
        const response = await fetch(`${hub.url}${url}`, { headers: bearer(hub.token) });
        assert.equal(response.status, 200, url);
        return new Uint8Array(await response.arrayBuffer());
      };

      const seq = await exportTo({ format: 'GEOJSONSEQ', maxFeaturesPerFile: 500 });
      assert.deepEqual(seq.outputs.map((output) => [output.name, output.url]), [1, 2, 3].map((n) => [`part-0000${n}.geojsonl`, `/hub/jobs/${seq.id}/outputs/part-0000${n}.geojsonl`]));
      const parts = await Promise.all(seq.outputs.map(async (output) => {
        const bytes = await download(output.url);
        assert.equal(bytes.length, output.bytes);
        return new TextDecoder().decode(bytes).trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id);
      }));
      assert.deepEqual(parts.map((ids) => ids.length), [500, 500, 250]);
      assert.deepEqual(parts.flat(), features.map((feature) => feature.id), 'every feature once, in insertion order');

      // Each part is a whole file of its format (a FlatGeobuf header per part).
      const fgb = await exportTo({ format: 'FLATGEOBUF', maxFeaturesPerFile: 600 });
      const counts = [];
      for (const output of fgb.outputs) {
        let n = 0;
        for await (const feature of deserialize(await download(output.url)) as AsyncGenerator<unknown>) if (feature) n++;
        counts.push(n);
      }
      assert.deepEqual(counts, [600, 600, 50]);

      assertError(await call(hub, 'GET', `/hub/jobs/${seq.id}/outputs/part-00004.geojsonl`), 404, 'jobOutputNotFound', 'part-00004.geojsonl');
      assertError(await call(hub, 'GET', `/hub/jobs/${seq.id}/outputs/..%2Foutput`), 404, 'jobOutputNotFound');
      const single = await createJob({ source: { type: 'Space', id: space }, target: { type: 'Files', format: 'CSV' } });
      assert.equal((await finished(single.body.id as string)).state, 'SUCCEEDED');
      assertError(await call(hub, 'GET', `/hub/jobs/${single.body.id as string}/outputs/part-00001.csv`), 404, 'jobOutputNotFound');
      for (const bad of [0, 1.5, '10', -3]) {
        assertError(await createJob({ source: { type: 'Space', id: space }, target: { type: 'Files', format: 'CSV', maxFeaturesPerFile: bad } }), 400, 'invalidJob', 'target.maxFeaturesPerFile');
      }
      const many = await createJob({ source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOJSONSEQ', maxFeaturesPerFile: 1 } });
      assert.equal((await finished(many.body.id as string)).state, 'SUCCEEDED', 'one file per feature is allowed up to 10,000 files');
      assert.equal(((await call(hub, 'GET', `/hub/jobs/${many.body.id as string}/outputs`)).body.outputs as unknown[]).length, 1250);
    });

    test('CANCEL stops a job (before START or while it runs); RESUME continues it from its checkpoint', async () => {
      const space = await createSpace(hub);
      const created = await createJob({ source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } });
      const id = created.body.id as string;
      assert.equal((await upload(id, geojsonSeq(0, 12_000))).status, 200);
      const cancelled = await act(id, 'CANCEL');
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.equal(cancelled.body.state, 'CANCELLED');
      assertError(await act(id, 'START'), 409, 'jobStateConflict', 'CANCELLED', 'WAITING_FOR_INPUT');
      assert.equal((await act(id, 'RESUME')).status, 200);
      const running = await until(id, (now) => now.writtenFeatures > 0 || now.state !== 'SUBMITTED', undefined, 'the first chunk');
      assert.equal((await act(id, 'CANCEL')).status, 200, JSON.stringify(running));
      const stopped = await status(id);
      assert.equal(stopped.state, 'CANCELLED');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const written = await count(space);
      assert.ok(written < 12_000, `the cancelled job stopped before the end (${written})`);
      // A chunk in flight when CANCEL came is not committed: its write commits only while the job is RUNNING (the fence).
      assert.equal((await status(id)).writtenFeatures, written, 'the space holds what the job counted');
      assert.equal((await act(id, 'RESUME')).status, 200);
      const done = await finished(id);
      assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
      assert.equal(done.writtenFeatures, 12_000);
      assert.equal(await count(space), 12_000);
      assertError(await call(hub, 'DELETE', `/hub/jobs/${id}/nothing`), 404, 'routeNotFound');
      const deleted = await call(hub, 'DELETE', `/hub/jobs/${id}`);
      assert.equal(deleted.status, 200, deleted.text);
      assertError(await call(hub, 'GET', `/hub/jobs/${id}`), 404, 'jobNotFound');
    });

    test('bad input: 4xx naming what is wrong, and nothing created or written', async () => {
      const space = await createSpace(hub);
      const job = (body: object) => createJob(body);
      assertError(await job({ source: { type: 'Files' }, target: { type: 'Space', id: space }, extra: 1 }), 400, 'invalidJob', '"extra"');
      assertError(await job({ source: { type: 'Files', format: 'SHAPEFILE' }, target: { type: 'Space', id: space } }), 400, 'invalidJob', 'source.format', 'GEOJSONSEQ');
      assertError(await job({ source: { type: 'Space', id: space }, target: { type: 'Files', format: 'SHAPEFILE' } }), 400, 'invalidJob', 'target.format', 'GEOPACKAGE');
      assertError(await job({ source: { type: 'Space', id: space, bbox: [10, 0, 0, 5] }, target: { type: 'Files', format: 'CSV' } }), 400, 'invalidJob', 'source.bbox');
      assertError(await job({ source: { type: 'Files' }, target: { type: 'Files', format: 'CSV' } }), 400, 'invalidJob', 'imports Files into a Space');
      assertError(await job({ source: { type: 'Files' }, target: { type: 'Space', id: 'no-such-space' } }), 404, 'spaceNotFound');
      assertError(await job({ source: { type: 'Files' }, target: { type: 'Space', id: 'a\u0000b' } }), 400, 'invalidJob', 'target.id');
      assertError(await call(hub, 'POST', '/hub/jobs', { rawBody: '{"source":', headers: { 'content-type': 'application/json' } }), 400, 'invalidJsonBody');
      assertError(await call(hub, 'GET', '/hub/jobs/..%2F..%2Fetc'), 404, 'jobNotFound');

      const created = await job({ source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } });
      const id = created.body.id as string;
      assertError(await act(id, 'START'), 409, 'jobNoInput', 'POST /hub/jobs/');
      assertError(await act(id, 'GO'), 400, 'invalidJobAction', 'START, CANCEL, RESUME');
      assertError(await call(hub, 'PATCH', `/hub/jobs/${id}/status`, { body: { desiredAction: 'START', force: true } }), 400, 'invalidJobAction', '"force"');
      assertError(await upload(id, new Uint8Array(17 * 1024 * 1024)), 413, 'jobInputTooLarge', String(16 * 1024 * 1024));
      assertError(await call(hub, 'GET', `/hub/jobs/${id}/outputs`), 409, 'jobNoOutput', 'is an import');
      assert.equal((await status(id)).inputBytes, undefined, 'the refused upload left no input');

      // A bad record stops the import with its line; SKIP counts it as failed and goes on.
      const bad = geojsonSeq(0, 2) + '{"type":"Feature","geometry":{"type":"Point"},"properties":{}}\n{"type": "Feat\n' + geojsonSeq(2, 2);
      const stopped = await finished(await startImport(space, bad));
      assert.equal(stopped.state, 'FAILED');
      assert.match(stopped.lastError ?? '', /^line 4: not valid JSON/, JSON.stringify(stopped));
      const skipped = await finished(await startImport(await createSpace(hub), geojsonSeq(0, 2) + '{"type": "Feat\n' + geojsonSeq(2, 2), { type: 'Files', format: 'GEOJSONSEQ', onError: 'SKIP' }));
      assert.equal(skipped.state, 'SUCCEEDED', JSON.stringify(skipped));
      assert.equal(skipped.writtenFeatures, 4);
      assert.equal(skipped.failedFeatures, 1);
      // A line longer than HUB_MAX_BODY (no feature could be sent that large) fails the import instead of filling the hub's memory.
      const long = await finished(await startImport(await createSpace(hub), geojsonSeq(0, 2) + `{"type": "Feature", "properties": {"s": "${'x'.repeat(1100 * 1024)}"}}\n`));
      assert.equal(long.state, 'FAILED');
      assert.match(long.lastError ?? '', /^line 3: a line longer than 1048576 bytes/, JSON.stringify(long));
      // A feature the write pipeline refuses (an invalid geometry) fails the job, naming the items of its chunk.
      const invalid = await finished(await startImport(await createSpace(hub), `${JSON.stringify({ type: 'Feature', id: 'x', geometry: { type: 'Point', coordinates: [500, 0] }, properties: {} })}\n`));
      assert.equal(invalid.state, 'FAILED');
      assert.match(invalid.lastError ?? '', /^Items 0 to 0 of the input: Invalid geometry/, JSON.stringify(invalid));
      assert.doesNotMatch(invalid.lastError ?? '', /at .*\.js:\d+/, 'no stack trace');
    });

    test('a token deleted while its job runs fails the job with a clear error; the job stops writing', async () => {
      const aid = `jobs-del-${backend}-${Date.now()}`;
      const first = await issueToken(hub, { aid, urm: ownerRights(aid) });
      const second = await issueToken(hub, { aid, urm: ownerRights(aid) });
      const space = await createSpace(hub, { owner: aid });
      const id = await startImport(space, geojsonSeq(0, 20_000), undefined, first.token);
      await until(id, (now) => now.writtenFeatures > 0 || now.state !== 'SUBMITTED', second.token, 'the first chunk');
      assert.ok(await storage.access.deleteToken(first.tid));
      const failed = await finished(id, second.token);
      assert.equal(failed.state, 'FAILED', JSON.stringify(failed));
      assert.match(failed.lastError ?? '', /token the job acts with was deleted or has expired/);
      assert.ok(!(failed.lastError ?? '').includes(first.token), 'the error holds no token');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const written = await count(space);
      assert.ok(written < 20_000, `the job stopped writing (${written})`);
      assert.equal(failed.writtenFeatures, written);
    });

    test('another account cannot see, change or download a job; a token of the account without the space\'s rights gets 403', async () => {
      const aid = `jobs-a-${backend}-${Date.now()}`;
      const owner = await issueToken(hub, { aid, urm: ownerRights(aid) });
      const limited = await issueToken(hub, { aid, urm: { 'xyz-hub': { readFeatures: [{ space: 'some-other-space' }] } } });
      const other = await issueToken(hub, { aid: `${aid}-b`, urm: ownerRights(`${aid}-b`) });
      const space = await createSpace(hub, { owner: aid });
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [point(1)] }, ...as(owner.token) })).status, 200);
      const created = await createJob({ source: { type: 'Space', id: space }, target: { type: 'Files', format: 'GEOJSONSEQ' } }, owner.token);
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      assert.equal((await finished(id, owner.token)).state, 'SUCCEEDED');
      const outputs = await call(hub, 'GET', `/hub/jobs/${id}/outputs`, as(owner.token));
      assert.equal(outputs.status, 200);
      assert.ok(outputs.text.includes('"p1"'));
      const refused = async (token: string, statusCode: number, code: string) => {
        const answers: TestResponse[] = [
          await call(hub, 'GET', `/hub/jobs/${id}`, as(token)), await call(hub, 'GET', `/hub/jobs/${id}/status`, as(token)),
          await call(hub, 'GET', `/hub/jobs/${id}/outputs`, as(token)), await act(id, 'RESUME', token), await call(hub, 'DELETE', `/hub/jobs/${id}`, as(token)),
        ];
        for (const answer of answers) assertError(answer, statusCode, code);
        const listed = await call(hub, 'GET', '/hub/jobs', as(token));
        assert.equal(listed.status, 200);
        assert.ok(!listed.text.includes(id), 'not listed');
      };
      await refused(other.token, 404, 'jobNotFound');
      await refused(hub.token, 404, 'jobNotFound');
      await refused(limited.token, 403, 'insufficientRights');
      // The other account may not import into the space nor export it.
      assert.equal((await createJob({ source: { type: 'Files' }, target: { type: 'Space', id: space } }, other.token)).status, 403);
      assert.equal((await createJob({ source: { type: 'Space', id: space }, target: { type: 'Files', format: 'CSV' } }, other.token)).status, 403);
      assert.equal((await status(id, owner.token)).state, 'SUCCEEDED', 'nothing changed');
    });

    test('a node killed (kill -9) mid-import is restarted and resumes from its checkpoint: every feature once, ids exact', async () => {
      const space = await createSpace(hub);
      const total = 12_000;
      const id = await startImport(space, geojsonSeq(0, total / 2) + geojsonSeq(total / 2, total / 2, false));
      const before = await until(id, (now) => now.writtenFeatures >= 1500 || now.state !== 'SUBMITTED' && now.state !== 'RUNNING', undefined, 'some chunks');
      assert.equal(before.state, 'RUNNING', JSON.stringify(before));
      await hub.kill();
      hub = await startHub({ backend, env: ENV, dataDir: hub.dataDir });
      const done = await finished(id);
      assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
      assert.equal(done.writtenFeatures, total);
      assert.ok(done.startedAt !== undefined);
      assert.equal(await count(space), total);
      const ids = await allIds(hub, space);
      assert.equal(ids.length, total);
      assert.equal(new Set(ids).size, total, 'no id twice');
      assert.deepEqual(ids.slice(0, total / 2), Array.from({ length: total / 2 }, (_, i) => `p${i}`), 'the ids of the file, in file order');
      const derived = ids.slice(total / 2);
      const prefix = derived[0].replace(/-\d+$/, '');
      assert.deepEqual(derived, Array.from({ length: total / 2 }, (_, i) => `${prefix}-${total / 2 + i}`), 'the derived ids, one per position');
    });
  });
}
