// Edge cases where the PostgreSQL engine could drift from SQLite (jsonb, collations, array paths); runs on every backend so that both must agree.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { point } from '../helpers/features.js';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const idsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);

for (const backend of BACKENDS) {
  describe(`storage engine parity (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    async function spaceWith(features: unknown[]): Promise<string> {
      const space = await createSpace(hub);
      const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
      assert.equal(put.status, 200, put.text);
      return space;
    }

    async function searchIds(space: string, query: string): Promise<string[]> {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/search?${query}`);
      assert.equal(response.status, 200, response.text);
      return idsOf(response);
    }

    test('a \\u0000 escape in a property is stored and returned exactly, and its neighbours stay searchable', async () => {
      // PostgreSQL jsonb cannot hold the NUL character; a literal backslash-u0000 text is something else.
      const text = '{"type":"FeatureCollection","features":[' +
        '{"type":"Feature","id":"nul","properties":{"s":"x\\u0000y","t":"\\\\u0000","n":1}},' +
        '{"type":"Feature","id":"plain","properties":{"n":2}}]}';
      const space = await createSpace(hub);
      const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: text });
      assert.equal(put.status, 200, put.text);
      const read = await call(hub, 'GET', `/hub/spaces/${space}/features/nul`);
      assert.equal(read.status, 200, read.text);
      assert.ok(read.text.includes('"s":"x\\u0000y"'), read.text);
      assert.deepEqual(await searchIds(space, 'p.t=%5Cu0000'), ['nul']);
      assert.deepEqual(await searchIds(space, 'p.n>=1'), ['nul', 'plain']);
    });

    test('a property name that looks like an array index only matches an object member', async () => {
      const space = await spaceWith([
        { type: 'Feature', id: 'array', properties: { list: [5, 6] } },
        { type: 'Feature', id: 'object', properties: { list: { 0: 5 } } },
      ]);
      assert.deepEqual(await searchIds(space, 'p.list.0=5'), ['object']);
      assert.deepEqual(await searchIds(space, 'p.list.0!=7'), ['object']);
      assert.deepEqual(await searchIds(space, 'p.list.0=.null'), ['array']);
    });

    test('strings compare by code point, whatever the database collation', async () => {
      const space = await spaceWith(['Zulu', 'alpha', 'Éclair', 'zeta', 'Bravo'].map((name) =>
        ({ type: 'Feature', id: name, properties: { name } })));
      assert.deepEqual(await searchIds(space, 'p.name<a'), ['Zulu', 'Bravo']);
      assert.deepEqual(await searchIds(space, 'p.name>z'), ['Éclair', 'zeta']);
      assert.deepEqual(await searchIds(space, 'f.id>=a'), ['alpha', 'Éclair', 'zeta']);
    });

    test('f.* filters reach foreign members at the feature root', async () => {
      const space = await spaceWith([
        { type: 'Feature', id: 'with', properties: {}, source: { system: 'survey', year: 2021 } },
        { type: 'Feature', id: 'without', properties: {} },
      ]);
      assert.deepEqual(await searchIds(space, 'f.source.system=survey'), ['with']);
      assert.deepEqual(await searchIds(space, 'f.source.year>2020'), ['with']);
      assert.deepEqual(await searchIds(space, 'f.source=.null'), ['without']);
    });

    test('a type mismatch never matches an ordering comparison and never breaks the query', async () => {
      const space = await spaceWith([
        { type: 'Feature', id: 'number', properties: { v: 5 } },
        { type: 'Feature', id: 'text', properties: { v: 'high' } },
        { type: 'Feature', id: 'flag', properties: { v: true } },
        { type: 'Feature', id: 'object', properties: { v: { x: 1 } } },
      ]);
      assert.deepEqual(await searchIds(space, 'p.v>1'), ['number']);
      assert.deepEqual(await searchIds(space, 'p.v>a'), ['text']);
      assert.deepEqual(await searchIds(space, 'p.v>=false'), ['flag']);
      assert.deepEqual(await searchIds(space, 'p.v!=5'), ['text', 'flag', 'object']);
    });

    test('a write mixing inserts, updates and deletes keeps insertion order and the counters', async () => {
      const space = await spaceWith(['a', 'b', 'c'].map((id) => ({ type: 'Feature', id, properties: { round: 1 } })));
      const modification = await call(hub, 'POST', `/hub/spaces/${space}/features`, {
        headers: { 'content-type': 'application/vnd.here.feature-modification-list' },
        body: {
          type: 'FeatureModificationList',
          modifications: [
            { onFeatureExists: 'replace', featureData: { type: 'FeatureCollection', features: [
              { type: 'Feature', id: 'd', properties: { round: 2 } },
              { type: 'Feature', id: 'a', properties: { round: 2 } },
            ] } },
            { onFeatureExists: 'delete', featureIds: ['b'] },
          ],
        },
      });
      assert.equal(modification.status, 200, modification.text);
      const iterate = await call(hub, 'GET', `/hub/spaces/${space}/iterate`);
      assert.deepEqual(idsOf(iterate), ['a', 'c', 'd']);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count, 3);
      const deleted = await call(hub, 'DELETE', `/hub/spaces/${space}/features?tags=*`);
      assert.ok(deleted.status === 200 || deleted.status === 204, deleted.text);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count, 0);
      const statistics = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.equal(statistics.status, 200, statistics.text);
      assert.equal((statistics.body.count as { value: number }).value, 0);
      assert.equal((statistics.body.byteSize as { value: number }).value, 0);
    });

    test('a page of more than a megabyte reads back exactly, all ASCII or not', async () => {
      // PostgreSQL hands such a page to the hub as one text of about 1.4 MB, which is read as Latin-1 only when every
      // byte of it is ASCII (src/storage/postgres/large-ascii-texts.ts); one feature beyond ASCII must keep it UTF-8.
      const features = (beyondAscii: string) => Array.from({ length: 5000 }, (_, i) => point(`t${i}`, {
        text: `${i === 2500 ? beyondAscii : ''}${'x'.repeat(200)} ${i}`,
      }, [(i % 100) / 10, Math.floor(i / 100) / 10]));
      for (const beyondAscii of ['', 'Zürich — 東京 😀 ']) {
        const written = features(beyondAscii);
        const space = await spaceWith(written);
        const read = await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=-1&south=-1&east=11&north=11&limit=10000`);
        assert.equal(read.status, 200, read.text.slice(0, 300));
        assert.ok(read.text.length > 1_100_000, `the answer holds ${read.text.length} characters`);
        const texts = new Map((read.body.features ?? []).map((feature) => [feature.id, feature.properties?.text]));
        assert.equal(texts.size, written.length);
        for (const feature of written) {
          const { id, properties } = feature as { id: string; properties: { text: string } };
          assert.equal(texts.get(id), properties.text, `feature ${id}`);
        }
      }
    });
  });
}
