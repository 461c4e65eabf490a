// Black-box tests of the per-process memo of space rows (docs/cache-and-changed-tiles.md): a change committed by another process — rights, content, deletion — is followed by the next cached tile read; on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken } from '../helpers/tokens.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { webTileId } from '../helpers/web-tiles.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, lon: number, lat: number, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties: { ...properties, [NS]: { tags: [] } } });
const collection = (...features: object[]) => ({ type: 'FeatureCollection', features });

/** The web tile of level 8 holding 11.1° E 50.6° N, where the test features are. */
const TILE = webTileId(8, 11.1, 50.6);

const PACKAGE = 'memo-package';

interface Figures { hits: number; misses: number }

for (const backend of BACKENDS) {
  describe(`space memo across processes (${backend})`, () => {
    /** Where changes are made. */
    let writer: HubProcess;
    /** Another hub process on the same database or SQLite file, whose memo and answer cache must follow them. */
    let reader: HubProcess;
    before(async () => {
      writer = await startHub({ backend });
      reader = backend === 'postgres'
        ? await startHub({ backend, storage: writer.storage })
        : await startHub({ backend, dataDir: writer.dataDir });
    });
    after(async () => {
      await reader?.stop({ keepData: true });
      await writer?.stop();
    });

    const hits = async () => (JSON.parse((await call(reader, 'GET', '/hub')).text) as { cache: Figures }).cache.hits;
    const as = (token: string, path: string) => call(reader, 'GET', path, { headers: { authorization: `Bearer ${token}` } });

    /** A space with a feature whose tile the reader has cached for `token` (the second read is a hit). */
    async function cachedTile(token: string, definition: Record<string, unknown> = {}): Promise<{ space: string; path: string; body: string }> {
      const space = await createSpace(writer, { packages: [PACKAGE], ...definition });
      assert.equal((await call(writer, 'PUT', `/hub/spaces/${space}/features`, { body: collection(point('p', 11.1, 50.6, { n: 0 })) })).status, 200);
      const path = `/hub/spaces/${space}/tile/web/${TILE}`;
      const first = await as(token, path);
      assert.equal(first.status, 200, first.text);
      const before = await hits();
      const second = await as(token, path);
      assert.equal(second.text, first.text);
      assert.equal(await hits(), before + 1, 'the second read came from the cache');
      return { space, path, body: first.text };
    }

    test('rights taken away on another process: the next read is refused, never answered from the cache', async () => {
      const { token } = await issueToken(writer, { aid: 'memo-reader', urm: { 'xyz-hub': { readFeatures: [{ packages: PACKAGE }] } } });
      const { space, path } = await cachedTile(token);
      const patched = await call(writer, 'PATCH', `/hub/spaces/${space}`, { body: { packages: ['another-package'] } });
      assert.equal(patched.status, 200, patched.text);
      const refused = await as(token, path);
      assertError(refused, 403, 'insufficientRights');
      assert.ok(!refused.text.includes('"n":0'), refused.text);
      assertError(await as(token, `${path}.mvt`), 403, 'insufficientRights');
    });

    test('rights given on another process: the next read is granted', async () => {
      const { token } = await issueToken(writer, { aid: 'memo-later', urm: { 'xyz-hub': { readFeatures: [{ packages: PACKAGE }] } } });
      const space = await createSpace(writer, { packages: ['not-yet'] });
      const path = `/hub/spaces/${space}/tile/web/${TILE}`;
      assertError(await as(token, path), 403, 'insufficientRights');
      assert.equal((await call(writer, 'PATCH', `/hub/spaces/${space}`, { body: { packages: [PACKAGE] } })).status, 200);
      assert.equal((await as(token, path)).status, 200);
    });

    test('a feature written on another process: the next read has it', async () => {
      const { space, path } = await cachedTile(writer.token);
      for (let round = 1; round <= 3; round++) {
        assert.equal((await call(writer, 'PUT', `/hub/spaces/${space}/features`, { body: collection(point('p', 11.1, 50.6, { n: round })) })).status, 200);
        const next = await as(writer.token, path);
        assert.ok(next.text.includes(`"n":${round}`), `after write ${round}: ${next.text}`);
      }
    });

    test('a space deleted on another process: the next read is 404, and a new space of the same id is read afresh', async () => {
      const { space, path, body } = await cachedTile(writer.token, { title: 'first' });
      assert.equal((await call(writer, 'DELETE', `/hub/spaces/${space}`)).status, 204);
      assertError(await as(writer.token, path), 404, 'spaceOfFeaturesNotFound');
      const again = await call(writer, 'POST', '/hub/spaces', { body: { id: space, title: 'second', packages: [PACKAGE] } });
      assert.equal(again.status, 200, again.text);
      const empty = await as(writer.token, path);
      assert.equal(empty.status, 200, empty.text);
      assert.notEqual(empty.text, body, 'the new space has no feature yet');
      assert.ok(!empty.text.includes('"n":0'), empty.text);
    });

    test('a change committed by a tool on the storage itself, outside any hub: followed too', async () => {
      const { token } = await issueToken(writer, { aid: 'memo-tool', urm: { 'xyz-hub': { readFeatures: [{ packages: PACKAGE }] } } });
      const { space, path } = await cachedTile(token);
      const storage = await openStorage(writer.storage, { pgPoolSize: 1 });
      try {
        await storage.spaces.update(space, (current) => ({ ...current.definition, packages: [] }));
      } finally {
        await storage.close();
      }
      assertError(await as(token, path), 403, 'insufficientRights');
    });
  });
}
