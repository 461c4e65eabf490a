// PostgreSQL only: several hub nodes over one database, spaces spread over two databases, and recovery from a database outage.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, type PostgresCluster, startPostgresCluster, type TestDatabase } from '../helpers/postgres-cluster.js';

const NS = '@ns:com:here:xyz';

const skip = BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run (see HUB_TEST_BACKENDS)';

function point(id: string, properties: Record<string, unknown>): FeatureJson {
  return { type: 'Feature', id, geometry: { type: 'Point', coordinates: [8.5, 50.1] }, properties };
}

function collection(features: FeatureJson[]): { type: string; features: FeatureJson[] } {
  return { type: 'FeatureCollection', features };
}

function idsOf(response: TestResponse): string[] {
  return (response.body.features ?? []).map((feature) => feature.id);
}

/** Unreachable storage is a documented ErrorResponse, 502 or (when the driver gives up waiting) 504. */
function assertStorageUnavailable(response: TestResponse): void {
  assert.ok(response.status === 502 || response.status === 504, `expected 502 or 504, got ${response.status}: ${response.text}`);
  assert.equal(response.body.type, 'ErrorResponse');
  assert.ok(response.body.code === 'storageFailure' || response.body.code === 'storageTimeout', response.text);
}

async function sql<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as R[];
  } finally {
    await client.end();
  }
}

describe('two hub nodes over one database (postgres)', { skip }, () => {
  let a: HubProcess;
  let b: HubProcess;
  before(async () => {
    a = await startHub({ backend: 'postgres' });
    b = await startHub({ backend: 'postgres', storage: a.storage });
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  test('a write through one node is read through the other', async () => {
    const space = await createSpace(a);
    const put = await call(a, 'PUT', `/hub/spaces/${space}/features`, { body: collection([point('x', { n: 1 }), point('y', { n: 2 })]) });
    assert.equal(put.status, 200, put.text);
    const read = await call(b, 'GET', `/hub/spaces/${space}/features/y`);
    assert.equal(read.status, 200, read.text);
    assert.equal((read.body as unknown as FeatureJson).properties.n, 2);
    const iterate = await call(b, 'GET', `/hub/spaces/${space}/iterate`);
    assert.deepEqual(idsOf(iterate), ['x', 'y']);
    const count = await call(b, 'GET', `/hub/spaces/${space}/count`);
    assert.equal(count.body.count, 2);
  });

  test('a space created on one node is listed by the other, and once deleted it is gone on both', async () => {
    const space = await createSpace(a, { title: 'shared between nodes' });
    const listed = await call(b, 'GET', '/hub/spaces');
    assert.equal(listed.status, 200, listed.text);
    assert.ok((listed.body as unknown as Array<{ id: string }>).some((entry) => entry.id === space));

    const deleted = await call(b, 'DELETE', `/hub/spaces/${space}`);
    assert.equal(deleted.status, 204, deleted.text);
    for (const hub of [a, b]) {
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}`)).status, 404);
      const list = await call(hub, 'GET', '/hub/spaces');
      assert.ok(!(list.body as unknown as Array<{ id: string }>).some((entry) => entry.id === space));
    }
  });

  test('two concurrent conditional updates of one feature through two nodes: exactly one 200 and one 409', async () => {
    const space = await createSpace(a, { enableUUID: true });
    const path = `/hub/spaces/${space}/features/contested`;
    const created = await call(a, 'PUT', path, { body: point('contested', { by: 'setup' }) });
    assert.equal(created.status, 200, created.text);
    // Several rounds, each racing the two nodes on the head state the previous round left.
    for (let round = 0; round < 5; round++) {
      const head = await call(a, 'GET', path);
      const uuid = (head.body as unknown as FeatureJson).properties[NS]?.uuid;
      assert.ok(uuid, 'the head state carries a uuid');
      const update = (hub: HubProcess, by: string) =>
        call(hub, 'PUT', path, { body: point('contested', { by, [NS]: { uuid } }) });
      const [fromA, fromB] = await Promise.all([update(a, 'a'), update(b, 'b')]);
      assert.deepEqual([fromA.status, fromB.status].sort(), [200, 409], `${fromA.text}\n${fromB.text}`);
      const loser = fromA.status === 409 ? fromA : fromB;
      assert.equal(loser.body.code, 'uuidMismatch');
      const winner = fromA.status === 200 ? 'a' : 'b';
      const after = await call(b, 'GET', path);
      assert.equal((after.body as unknown as FeatureJson).properties.by, winner);
    }
  });
});

describe('spaces spread over two databases (postgres)', { skip }, () => {
  let one: TestDatabase;
  /** A private cluster: the test stops it. */
  let two: PostgresCluster;
  let hub: HubProcess;
  before(async () => {
    [one, two] = await Promise.all([createTestDatabase(), startPostgresCluster()]);
    hub = await startHub({ backend: 'postgres', storage: `${one.url},${two.url}` });
  });
  after(async () => {
    await hub?.stop();
    await Promise.all([one?.remove(), two?.destroy()]);
  });

  test('new spaces go to the database with the fewest spaces, and reads and writes go to the right one', async () => {
    const spaces: string[] = [];
    for (let i = 0; i < 4; i++) {
      const space = await createSpace(hub);
      spaces.push(space);
      const features = Array.from({ length: i + 1 }, (_, k) => point(`f${k}`, { space: i }));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(features) })).status, 200);
    }

    // Fewest spaces first, the earlier database on a tie: one, two, one, two.
    const [identityOne] = await sql<{ id: string }>(one.url, 'SELECT id FROM hub_database');
    const [identityTwo] = await sql<{ id: string }>(two.url, 'SELECT id FROM hub_database');
    const catalog = await sql<{ id: string; sid: string; location: string }>(one.url, 'SELECT id, sid, location FROM spaces');
    const bySpace = new Map(catalog.map((row) => [row.id, row]));
    const expected = [one, two, one, two];
    for (const [index, space] of spaces.entries()) {
      const row = bySpace.get(space);
      assert.ok(row, `space ${space} is in the catalog of the first database`);
      const home = expected[index];
      assert.equal(row.location, home === one ? identityOne.id : identityTwo.id);
      const other = home === one ? two : one;
      const [stored] = await sql<{ n: string }>(home.url, 'SELECT count(*) AS n FROM features WHERE sid = $1', [row.sid]);
      const [elsewhere] = await sql<{ n: string }>(other.url, 'SELECT count(*) AS n FROM features WHERE sid = $1', [row.sid]);
      assert.equal(Number(stored.n), index + 1);
      assert.equal(Number(elsewhere.n), 0);
    }

    // GETs by id sent at once are looked up together: each must still come from its own space's database.
    const byId = spaces.flatMap((space, index) => Array.from({ length: index + 2 }, (_, k) => ({ space, index, id: `f${k}` })));
    const answers = await Promise.all(byId.map(({ space, id }) => call(hub, 'GET', `/hub/spaces/${space}/features/${id}`)));
    answers.forEach((response, i) => {
      const { space, index, id } = byId[i];
      if (Number(id.slice(1)) > index) return assert.equal(response.status, 404, `${space}/${id}`);
      assert.equal(response.status, 200, `${space}/${id}: ${response.text}`);
      assert.equal((response.body as { properties: { space: number } }).properties.space, index);
    });

    for (const [index, space] of spaces.entries()) {
      const iterate = await call(hub, 'GET', `/hub/spaces/${space}/iterate`);
      assert.equal(iterate.status, 200, iterate.text);
      assert.deepEqual(idsOf(iterate), Array.from({ length: index + 1 }, (_, k) => `f${k}`));
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, index + 1);
    }
    const listed = await call(hub, 'GET', '/hub/spaces');
    for (const space of spaces) assert.ok((listed.body as unknown as Array<{ id: string }>).some((entry) => entry.id === space));

    const removed = await call(hub, 'DELETE', `/hub/spaces/${spaces[1]}`);
    assert.equal(removed.status, 204, removed.text);
    const [left] = await sql<{ n: string }>(two.url, 'SELECT count(*) AS n FROM features WHERE sid = $1', [bySpace.get(spaces[1])?.sid]);
    assert.equal(Number(left.n), 0);
  });

  test('with the second database down, spaces on the first still work and those on the second fail until it is back', async () => {
    const first = await createSpace(hub);
    const second = await createSpace(hub);
    const [firstRow] = await sql<{ location: string }>(one.url, 'SELECT location FROM spaces WHERE id = $1', [first]);
    const [secondRow] = await sql<{ location: string }>(one.url, 'SELECT location FROM spaces WHERE id = $1', [second]);
    assert.notEqual(firstRow.location, secondRow.location, 'the two spaces are on different databases');
    const [identityTwo] = await sql<{ id: string }>(two.url, 'SELECT id FROM hub_database');
    const [onOne, onTwo] = firstRow.location === identityTwo.id ? [second, first] : [first, second];
    for (const space of [onOne, onTwo]) {
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features/p`, { body: point('p', {}) })).status, 200);
    }

    await two.stop();
    try {
      assert.equal((await call(hub, 'GET', `/hub/spaces/${onOne}/features/p`)).status, 200);
      assertStorageUnavailable(await call(hub, 'GET', `/hub/spaces/${onTwo}/features/p`));
      assertStorageUnavailable(await call(hub, 'PUT', `/hub/spaces/${onTwo}/features/q`, { body: point('q', {}) }));
    } finally {
      await two.start();
    }
    assert.equal((await call(hub, 'GET', `/hub/spaces/${onTwo}/features/p`)).status, 200);
    assert.equal((await call(hub, 'PUT', `/hub/spaces/${onTwo}/features/q`, { body: point('q', {}) })).status, 200);
  });
});

describe('database outage (postgres)', { skip }, () => {
  /** A private cluster: the test stops it. */
  let cluster: PostgresCluster;
  let hub: HubProcess;
  before(async () => {
    cluster = await startPostgresCluster();
    hub = await startHub({ backend: 'postgres', cluster });
  });
  after(async () => {
    await hub?.stop();
    await cluster?.destroy();
  });

  test('with the database stopped requests get 502/504 ErrorResponses; once it is back they succeed without a hub restart', async () => {
    const space = await createSpace(hub);
    const base = `/hub/spaces/${space}/features`;
    assert.equal((await call(hub, 'PUT', `${base}/before`, { body: point('before', { n: 1 }) })).status, 200);

    await cluster.stop();
    try {
      assertStorageUnavailable(await call(hub, 'GET', `${base}/before`));
      assertStorageUnavailable(await call(hub, 'PUT', `${base}/during`, { body: point('during', {}) }));
      assertStorageUnavailable(await call(hub, 'GET', `/hub/spaces/${space}/iterate`));
      assertStorageUnavailable(await call(hub, 'GET', '/hub/spaces'));
      assertStorageUnavailable(await call(hub, 'POST', '/hub/spaces', { body: { title: 'during the outage' } }));
      assert.equal(hub.process.exitCode, null, 'the hub is still running');
    } finally {
      await cluster.start();
    }

    const read = await call(hub, 'GET', `${base}/before`);
    assert.equal(read.status, 200, read.text);
    assert.equal((read.body as unknown as FeatureJson).properties.n, 1);
    assert.equal((await call(hub, 'PUT', `${base}/after`, { body: point('after', {}) })).status, 200);
    const iterate = await call(hub, 'GET', `/hub/spaces/${space}/iterate`);
    assert.deepEqual(idsOf(iterate), ['before', 'after']);
  });
});
