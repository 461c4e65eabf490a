// Black-box tests of GET /hub/spaces over many storage pages (HUB_SPACE_PAGE_SIZE): owner, contentUpdatedAt and access filters (API.md 3.6, 8.2).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { AttributeMap } from '../../src/hub/access/claims.js';
import { call, type RequestOptions } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster.js';
import { issueToken } from '../helpers/tokens.js';

/** Small pages, so that a handful of spaces spans many of them. */
const PAGE_SIZE = 3;

interface Space {
  id: string;
  owner: string;
  shared: boolean;
  packages: string[];
  contentUpdatedAt: number;
}

interface Listing {
  ids: string[];
  /** The elements as listed, by id. */
  byId: Map<string, Record<string, unknown>>;
}

async function list(hub: HubProcess, query: string, options: RequestOptions = {}): Promise<Listing> {
  const response = await call(hub, 'GET', `/hub/spaces${query}`, options);
  assert.equal(response.status, 200, `${query}: ${response.text}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const elements = JSON.parse(response.text) as Array<Record<string, unknown>>;
  assert.ok(Array.isArray(elements), response.text);
  const ids = elements.map((element) => element.id as string);
  return { ids, byId: new Map(elements.map((element) => [element.id as string, element])) };
}

/**
 * A token with the given rights matrix, stored as the hub stores tokens: there is no Token API yet, and
 * the first-start token always has every right.
 */
async function createToken(hub: HubProcess, aid: string, rights: Record<string, AttributeMap[]>): Promise<RequestOptions> {
  const { token } = await issueToken(hub, { aid, urm: { 'xyz-hub': rights } });
  return { headers: { authorization: `Bearer ${token}` } };
}

/**
 * Spaces of several owners in an order that puts each kind on several pages, some shared, some in
 * packages, some with features written later (so that contentUpdatedAt is not the creation order).
 */
async function createSpaces(hub: HubProcess, admin: string): Promise<Space[]> {
  const plan: Array<{ owner: string; shared?: boolean; packages?: string[]; prefix?: string; write?: boolean }> = [
    { owner: admin }, { owner: 'alice' }, { owner: 'bob', shared: true }, { owner: admin, write: true },
    { owner: 'alice', packages: ['OSM'] }, { owner: 'alice' }, { owner: 'bob', prefix: 'proj-' }, { owner: admin, shared: true },
    { owner: 'alice', write: true }, { owner: 'bob' }, { owner: 'bob', packages: ['OSM', 'other'] }, { owner: admin },
    { owner: 'alice', prefix: 'proj-', write: true }, { owner: 'carol' },
  ];
  const ids: string[] = [];
  for (const entry of plan) {
    const body: Record<string, unknown> = { title: 'list test', owner: entry.owner };
    if (entry.shared) body.shared = true;
    if (entry.packages) body.packages = entry.packages;
    if (entry.prefix) body.id = `${entry.prefix}${randomBytes(4).toString('hex')}`;
    const created = await call(hub, 'POST', '/hub/spaces', { body });
    assert.equal(created.status, 200, created.text);
    ids.push(created.body.id as string);
    // Distinct creation times make the contentUpdatedAt conditions tell spaces apart.
    await sleep(3);
  }
  for (const [index, entry] of plan.entries()) {
    if (!entry.write) continue;
    const feature = { type: 'Feature', id: 'f', geometry: { type: 'Point', coordinates: [1, 2] }, properties: {} };
    assert.equal((await call(hub, 'PUT', `/hub/spaces/${ids[index]}/features/f`, { body: feature })).status, 200);
    await sleep(3);
  }
  const spaces: Space[] = [];
  for (const [index, entry] of plan.entries()) {
    const stored = await call(hub, 'GET', `/hub/spaces/${ids[index]}`);
    spaces.push({ id: ids[index], owner: entry.owner, shared: entry.shared === true, packages: entry.packages ?? [], contentUpdatedAt: stored.body.contentUpdatedAt as number });
  }
  return spaces;
}

const idsOf = (spaces: Space[], keep: (space: Space) => boolean): string[] => spaces.filter(keep).map((space) => space.id);

const COMPARE: Record<string, (actual: number, wanted: number) => boolean> = {
  '=': (a, b) => a === b, '!=': (a, b) => a !== b, '>': (a, b) => a > b, '>=': (a, b) => a >= b, '<': (a, b) => a < b, '<=': (a, b) => a <= b,
};

for (const backend of BACKENDS) {
  describe(`space list over many pages (${backend})`, () => {
    let hub: HubProcess;
    let admin: string;
    let spaces: Space[];
    before(async () => {
      hub = await startHub({ backend, env: { HUB_SPACE_PAGE_SIZE: String(PAGE_SIZE) } });
      const probe = await call(hub, 'POST', '/hub/spaces', { body: { title: 'whose token' } });
      admin = probe.body.owner as string;
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${probe.body.id}`)).status, 204);
      spaces = await createSpaces(hub, admin);
    });
    after(async () => { await hub?.stop(); });

    test('owner=* lists every space once, in creation order, each as GET shows it (connectors with includeConnectors)', async () => {
      const listed = await list(hub, '?owner=*&includeConnectors=true');
      assert.deepEqual(listed.ids, spaces.map((space) => space.id));
      for (const space of spaces) {
        assert.deepEqual(listed.byId.get(space.id), (await call(hub, 'GET', `/hub/spaces/${space.id}`)).body, space.id);
      }
    });

    test('owner=me, others, an owner id and an unknown owner across pages', async () => {
      assert.deepEqual((await list(hub, '')).ids, idsOf(spaces, (space) => space.owner === admin));
      assert.deepEqual((await list(hub, '?owner=me')).ids, idsOf(spaces, (space) => space.owner === admin));
      assert.deepEqual((await list(hub, '?owner=others')).ids, idsOf(spaces, (space) => space.owner !== admin));
      for (const owner of ['alice', 'bob', 'carol']) {
        assert.deepEqual((await list(hub, `?owner=${owner}`)).ids, idsOf(spaces, (space) => space.owner === owner), owner);
      }
      assert.equal((await call(hub, 'GET', '/hub/spaces?owner=nobody')).text, '[]');
    });

    test('every contentUpdatedAt operator, alone and OR-ed, with and without an owner filter, across pages', async () => {
      const times = spaces.map((space) => space.contentUpdatedAt).sort((a, b) => a - b);
      const middle = times[Math.floor(times.length / 2)];
      const early = times[2];
      const late = times[times.length - 3];
      const valueSets = [[middle], [early, late], [late, early], [middle, middle], [0], [times[times.length - 1] + 1]];
      for (const [op, symbols] of [['=', ['=']], ['!=', ['!=']], ['>', ['>', '=gt=']], ['>=', ['>=', '=gte=']], ['<', ['<', '=lt=']], ['<=', ['<=', '=lte=']]] as const) {
        for (const values of valueSets) {
          const matches = (space: Space) => values.some((value) => COMPARE[op](space.contentUpdatedAt, value));
          for (const symbol of symbols) {
            const condition = `contentUpdatedAt${symbol}${values.join(',')}`;
            assert.deepEqual((await list(hub, `?owner=*&${condition}`)).ids, idsOf(spaces, matches), condition);
            assert.deepEqual((await list(hub, `?owner=alice&${condition}`)).ids,
              idsOf(spaces, (space) => space.owner === 'alice' && matches(space)), `owner=alice&${condition}`);
            assert.deepEqual((await list(hub, `?owner=others&${condition}`)).ids,
              idsOf(spaces, (space) => space.owner !== admin && matches(space)), `owner=others&${condition}`);
          }
        }
      }
    });

    test('timestamps beyond any stored one are compared, not refused', async () => {
      const huge = '9'.repeat(30);
      assert.equal((await call(hub, 'GET', `/hub/spaces?owner=*&contentUpdatedAt>${huge}`)).text, '[]');
      assert.equal((await call(hub, 'GET', `/hub/spaces?owner=*&contentUpdatedAt=${huge},${'9'.repeat(400)}`)).text, '[]');
      assert.deepEqual((await list(hub, `?owner=*&contentUpdatedAt<${huge}`)).ids, spaces.map((space) => space.id));
      assert.deepEqual((await list(hub, `?owner=*&contentUpdatedAt!=${huge}`)).ids, spaces.map((space) => space.id));
      // Beyond the largest double: infinity.
      const endless = '9'.repeat(400);
      assert.deepEqual((await list(hub, `?owner=*&contentUpdatedAt<=${endless}`)).ids, spaces.map((space) => space.id));
      assert.equal((await call(hub, 'GET', `/hub/spaces?owner=*&contentUpdatedAt=gte=${endless}`)).text, '[]');
    });

    describe('a token that sees only some spaces', () => {
      const visible = (space: Space, rule: (space: Space) => boolean) => space.shared || rule(space);
      const cases: Array<[string, Record<string, AttributeMap[]>, (space: Space) => boolean]> = [
        ['owner maps: the spaces of those owners', { readFeatures: [{ owner: 'alice' }], manageSpaces: [{ owner: 'carol' }] },
          (space) => space.owner === 'alice' || space.owner === 'carol'],
        ['a space id prefix', { manageSpaces: [{ space: 'proj-*' }] }, (space) => space.id.startsWith('proj-')],
        ['a package', { readFeatures: [{ packages: 'OSM' }] }, (space) => space.packages.includes('OSM')],
        ['an owner prefix', { deleteFeatures: [{ owner: 'b*' }] }, (space) => space.owner.startsWith('b')],
        ['owner and package together', { createFeatures: [{ owner: 'bob', packages: 'OSM' }] }, (space) => space.owner === 'bob' && space.packages.includes('OSM')],
        ['no listing right at all: shared spaces only', { useCapabilities: [{}] }, () => false],
        ['{} for one listing action: everything', { readFeatures: [{ owner: 'alice' }], adminSpaces: [{}] }, () => true],
      ];
      for (const [name, rights, rule] of cases) {
        test(name, async () => {
          const token = await createToken(hub, 'dave', rights);
          const expected = idsOf(spaces, (space) => visible(space, rule));
          assert.deepEqual((await list(hub, '?owner=*', token)).ids, expected, 'owner=*');
          assert.deepEqual((await list(hub, '?owner=others', token)).ids, expected, 'owner=others (dave owns nothing)');
          assert.deepEqual((await list(hub, '?owner=bob', token)).ids, idsOf(spaces, (space) => space.owner === 'bob' && visible(space, rule)), 'owner=bob');
          assert.equal((await call(hub, 'GET', '/hub/spaces', token)).text, '[]', 'owner=me');
          const recent = spaces[spaces.length - 4].contentUpdatedAt;
          assert.deepEqual((await list(hub, `?owner=*&contentUpdatedAt>=${recent}`, token)).ids,
            idsOf(spaces, (space) => visible(space, rule) && space.contentUpdatedAt >= recent), 'contentUpdatedAt');
        });
      }

      test('own spaces are listed only where the rights reach them', async () => {
        const token = await createToken(hub, 'carol', { readFeatures: [{ owner: 'alice' }] });
        assert.equal((await call(hub, 'GET', '/hub/spaces', token)).text, '[]');
        const owned = await createToken(hub, 'carol', { manageSpaces: [{ owner: 'carol' }] });
        assert.deepEqual((await list(hub, '', owned)).ids, idsOf(spaces, (space) => space.owner === 'carol'));
        assert.deepEqual((await list(hub, '?owner=others', owned)).ids, idsOf(spaces, (space) => space.owner !== 'carol' && space.shared));
      });

      test('the listed members follow the token: connectors only with includeConnectors, and accessConnectors or adminSpaces', async () => {
        const reader = await createToken(hub, 'dave', { readFeatures: [{}] });
        const element = (await list(hub, '?owner=*&includeConnectors=true', reader)).byId.get(spaces[0].id);
        assert.equal(element?.id, spaces[0].id);
        assert.equal(element && 'storage' in element, false);
        assert.ok('storage' in ((await list(hub, '?owner=*&includeConnectors=true')).byId.get(spaces[0].id) ?? {}), 'the admin sees storage');
        assert.equal('storage' in ((await list(hub, '?owner=*')).byId.get(spaces[0].id) ?? {}), false, 'not without includeConnectors');
      });
    });

    test('an owner with U+0000 is stored and found by the owner filter', async () => {
      const owner = `nul\u0000owner-${backend}`;
      const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'nul owner', owner } });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.owner, owner);
      const listed = await list(hub, `?owner=${encodeURIComponent(owner)}`);
      assert.deepEqual(listed.ids, [created.body.id]);
      assert.equal(listed.byId.get(created.body.id as string)?.owner, owner);
      assert.ok((await list(hub, '?owner=others')).ids.includes(created.body.id as string));
      assert.equal((await call(hub, 'GET', `/hub/spaces?owner=${encodeURIComponent('nul\u0000')}`)).text, '[]');
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${created.body.id}`)).status, 204);
    });

    test('a shared space with U+0000 in its title is listed to a token that sees only shared spaces', async () => {
      const created = await call(hub, 'POST', '/hub/spaces', { body: { title: 'nul \u0000 title', shared: true, owner: 'erin' } });
      assert.equal(created.status, 200, created.text);
      const token = await createToken(hub, 'dave', { readFeatures: [{ owner: 'nobody' }] });
      const listed = await list(hub, '?owner=erin', token);
      assert.deepEqual(listed.ids, [created.body.id]);
      assert.equal(listed.byId.get(created.body.id as string)?.title, 'nul \u0000 title');
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${created.body.id}`)).status, 204);
    });
  });
}

describe('space list over two databases (postgres)', { skip: BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run' }, () => {
  let one: PostgresCluster;
  let two: PostgresCluster;
  let hub: HubProcess;
  before(async () => {
    [one, two] = await Promise.all([startPostgresCluster(), startPostgresCluster()]);
    hub = await startHub({ backend: 'postgres', storage: `${one.url},${two.url}`, env: { HUB_SPACE_PAGE_SIZE: '2' } });
  });
  after(async () => {
    await hub?.stop();
    await Promise.all([one?.destroy(), two?.destroy()]);
  });

  test('contentUpdatedAt filters the counters of each database, page by page', async () => {
    // New spaces alternate between the databases; a feature write moves contentUpdatedAt of every third one.
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      const created = await call(hub, 'POST', '/hub/spaces', { body: { title: `spread ${i}` } });
      ids.push(created.body.id as string);
      await sleep(3);
    }
    const cut = Date.now();
    await sleep(3);
    const written = ids.filter((_, index) => index % 3 === 1);
    for (const id of written) {
      const feature = { type: 'Feature', id: 'f', geometry: { type: 'Point', coordinates: [1, 2] }, properties: {} };
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/f`, { body: feature })).status, 200);
    }
    assert.deepEqual((await list(hub, '')).ids, ids);
    assert.deepEqual((await list(hub, `?contentUpdatedAt>${cut}`)).ids, written);
    assert.deepEqual((await list(hub, `?contentUpdatedAt<=${cut}`)).ids, ids.filter((id) => !written.includes(id)));
    const first = (await call(hub, 'GET', `/hub/spaces/${ids[0]}`)).body.contentUpdatedAt as number;
    const second = (await call(hub, 'GET', `/hub/spaces/${ids[1]}`)).body.contentUpdatedAt as number;
    assert.deepEqual((await list(hub, `?contentUpdatedAt=${first},${second}`)).ids, [ids[0], ids[1]]);
  });
});
