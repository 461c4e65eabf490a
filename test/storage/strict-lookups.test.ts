// Space lookups are strict while they are coalesced (PostgreSQL: the batched lookups of space-store.ts and the batched area reads of area-batches.ts; SQLite: the space memo's shared stamp): a change committed before a lookup is asked for is in its answer, however many lookups of the space are under way; on both engines.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS } from '../helpers/backends.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import type { FeatureQuery } from '../../src/core/feature-query.js';
import { SpaceMemo } from '../../src/hub/resolve/space-memo.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';

const SPACE = 'strict';
/** Rounds of a change then a lookup; each round's lookup arrives while others of the same space are in flight. */
const ROUNDS = 300;
/** Lookups kept in flight by the load, of each kind. */
const LOADERS = 8;
/** A small box: an engine that reads an area's first page with the space's lookup (getWithArea) batches such reads. */
const BOX: FeatureQuery = { spatial: { kind: 'box', box: [0, 0, 1, 1] }, limit: 100 };

for (const backend of BACKENDS) {
  describe(`strict space lookups under load (${backend})`, () => {
    /** The storage changes are committed through: another node, or a tool. */
    let writer: Storage;
    /** The node whose lookups are coalesced, and its memo of space rows, as the hub's resolver looks spaces up. */
    let reader: Storage;
    let memo: SpaceMemo;
    let remove: () => Promise<void>;
    before(async () => {
      let spec: string;
      if (backend === 'postgres') {
        const database = await createTestDatabase();
        spec = database.url;
        remove = database.remove;
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'hub-strict-'));
        spec = `sqlite:${join(dir, 'hub.db')}`;
        remove = async () => rmSync(dir, { recursive: true, force: true });
      }
      writer = await openStorage(spec);
      reader = await openStorage(spec);
      memo = new SpaceMemo(reader);
      await writer.spaces.create(SPACE, { title: 'round 0', createdAt: 1, updatedAt: 1 }, Date.now());
    });
    after(async () => {
      await reader?.close();
      await writer?.close();
      await remove?.();
    });

    test('a change acknowledged before a lookup is asked for is in its answer, never one of a lookup already under way', async () => {
      let busy = true;
      const withArea = reader.spaces.getWithArea?.bind(reader.spaces);
      // Keeps the reader's kinds of lookup (space; space with a feature; space with an area) of the same space always in flight.
      const load = Array.from({ length: LOADERS }, async () => {
        while (busy) await Promise.all([memo.get(SPACE), reader.spaces.getWithFeature(SPACE, 'f'), withArea?.(SPACE, BOX)]);
      });
      try {
        for (let round = 1; round <= ROUNDS; round++) {
          const title = `round ${round}`;
          await writer.spaces.update(SPACE, (current) => ({ ...current.definition, title }));
          // Asked for right after the acknowledgement, while the load's lookups (some started before it) are in flight.
          const [space, withFeature, area] = await Promise.all([memo.get(SPACE), reader.spaces.getWithFeature(SPACE, 'f'), withArea?.(SPACE, BOX)]);
          assert.equal(space?.definition.title, title, `space lookup after change ${round}`);
          assert.equal(withFeature?.definition.title, title, `space-with-feature lookup after change ${round}`);
          if (withArea) assert.equal(area?.space.definition.title, title, `space-with-area lookup after change ${round}`);
        }
      } finally {
        busy = false;
        await Promise.all(load);
      }
    });
  });
}
