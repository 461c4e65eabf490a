// Black-box tests of area reads sent at the same time (PostgreSQL reads a turn's boxes with one statement): each answers as if read alone, and only to a caller who may read it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { call, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const BOX = 'west=10&south=10&east=11&north=11';

/** Point `i` of a space inside BOX (shifted by `east` degrees), placed so that insertion order is not the order of any coordinate. */
function point(i: number, prefix: string, count: number, east = 0): object {
  const x = 10 + east + ((i * 7919) % count) / count;
  const y = 10 + ((i * 104729) % count) / count;
  return { type: 'Feature', id: `${prefix}${i}`, geometry: { type: 'Point', coordinates: [x, y] }, properties: { i, prefix } };
}

const points = (count: number, prefix: string, east = 0) => Array.from({ length: count }, (_, i) => point(i, prefix, count, east));

/** What a read answered: its status, ETag and body (an error's without its request's own streamId), which a read beside others must answer alike. */
const answerOf = (response: TestResponse) => ({ status: response.status, etag: response.headers.get('etag'), text: response.text.replace(/"streamId":"[^"]*",/, '') });

for (const backend of BACKENDS) {
  describe(`area reads at the same time (${backend})`, () => {
    let hub: HubProcess;
    const alice = `alice-${randomBytes(5).toString('hex')}`;
    const bob = `bob-${randomBytes(5).toString('hex')}`;
    let big: string;
    let small: string;
    let aside: string;
    let alices: string;
    let bobs: string;

    before(async () => {
      // Without the answer cache, which would answer a read made before from memory: every read here goes to the storage.
      hub = await startHub({ backend, env: { HUB_CACHE_SIZE: '0' } });
      // More than the first page's 250 features in the box: a read with a large limit goes on after the first page.
      big = await createSpaceWith(hub, points(400, 'big'));
      small = await createSpaceWith(hub, points(40, 'small'));
      // Its features lie half a degree and more east of BOX: a box read beside the others must not find theirs.
      aside = await createSpaceWith(hub, points(30, 'aside', 1.5));
      alices = await createSpaceWith(hub, points(20, 'alice'), { owner: alice });
      bobs = await createSpaceWith(hub, points(25, 'bob'), { owner: bob });
    });
    after(async () => { await hub.stop(); });

    test('boxes, tiles and searches read together each answer as when read alone', async () => {
      const paths = [
        `/hub/spaces/${big}/bbox?${BOX}&limit=100`,
        `/hub/spaces/${big}/bbox?${BOX}&limit=5000`,
        `/hub/spaces/${big}/bbox?west=10.5&south=10.5&east=10&north=10`,
        `/hub/spaces/${small}/bbox?${BOX}`,
        `/hub/spaces/${small}/bbox?${BOX}&limit=7`,
        `/hub/spaces/${aside}/bbox?${BOX}`,
        `/hub/spaces/${aside}/bbox?west=11.4&south=10&east=12.6&north=11`,
        `/hub/spaces/${small}/tile/web/6_33_30`,
        `/hub/spaces/${big}/spatial?lat=10.5&lon=10.5&radius=20000`,
        `/hub/spaces/no-such-space/bbox?${BOX}`,
      ];
      const alone: Array<ReturnType<typeof answerOf>> = [];
      for (const path of paths) alone.push(answerOf(await call(hub, 'GET', path)));
      assert.deepEqual(alone.map((answer) => answer.status), [200, 200, 200, 200, 200, 200, 200, 200, 200, 404]);
      const count = (index: number) => (JSON.parse(alone[index].text) as { features: unknown[] }).features.length;
      assert.deepEqual([0, 1, 3, 4, 5, 6].map(count), [100, 400, 40, 7, 0, 30]);
      for (let round = 0; round < 3; round++) {
        // Each round in another order, every path twice: the same reads sit in other places of a batch.
        const order = [...paths.keys(), ...paths.keys()].sort((a, b) => ((a * 7 + round * 3) % 11) - ((b * 7 + round * 3) % 11));
        const together = await Promise.all(order.map(async (index) => answerOf(await call(hub, 'GET', paths[index]))));
        together.forEach((answer, i) => assert.deepEqual(answer, alone[order[i]], `round ${round}: ${paths[order[i]]}`));
      }
    });

    test('a caller reads the spaces it may, whatever is read beside it', async () => {
      const tokens = {
        alice: (await issueToken(hub, { aid: alice, urm: ownerRights(alice) })).token,
        bob: (await issueToken(hub, { aid: bob, urm: ownerRights(bob) })).token,
      };
      const reads: Array<{ who: 'alice' | 'bob'; space: string; status: number; prefix: string }> = [
        { who: 'alice', space: alices, status: 200, prefix: 'alice' },
        { who: 'alice', space: bobs, status: 403, prefix: '' },
        { who: 'bob', space: bobs, status: 200, prefix: 'bob' },
        { who: 'bob', space: alices, status: 403, prefix: '' },
      ];
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all([...reads, ...reads].map((read) =>
          call(hub, 'GET', `/hub/spaces/${read.space}/bbox?${BOX}`, { headers: { authorization: `Bearer ${tokens[read.who]}` } })));
        answers.forEach((answer, i) => {
          const read = reads[i % reads.length];
          assert.equal(answer.status, read.status, `${read.who} reading ${read.space}: ${answer.text}`);
          if (read.status !== 200) assert.ok(!answer.text.includes('"Feature"'), 'a refused read shows no feature');
          else assert.ok((answer.body.features ?? []).every((feature) => feature.id.startsWith(read.prefix)), `${read.who} sees only ${read.prefix}'s features`);
        });
      }
    });
  });
}
