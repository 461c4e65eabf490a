// The space rows this process read last, reused while the storage's stamp says nothing committed since (SQLite): a cached tile then skips the row's lookup and parse.
import type { Storage, StoredSpace } from '../../storage/storage.js';

/** Rows remembered at most; past it the memo starts over (a full memo is rare: every commit outdates it anyway). */
const REMEMBERED_SPACES = 10_000;

interface Remembered {
  stamp: string;
  space: StoredSpace;
}

/**
 * A row is reused only under the stamp taken before it was read (Storage.spacesStamp), which the storage takes anew
 * for every lookup: any commit on any node or process since, to any space, gives another stamp, and the row is read
 * again. So a remembered row is the row a read would find now: rights are decided on the space as it is, and a write
 * makes the next read see its new revision, hence miss the answer cache. A space not found is not remembered. Rows
 * are shared between requests and must not be changed (nothing in the hub changes a StoredSpace it was given).
 */
export class SpaceMemo {
  private readonly rows = new Map<string, Remembered>();

  constructor(private readonly storage: Storage) {}

  async get(id: string): Promise<StoredSpace | undefined> {
    const stamp = this.storage.spacesStamp();
    if (stamp === undefined) return this.storage.spaces.get(id);
    const remembered = this.rows.get(id);
    if (remembered?.stamp === stamp) return remembered.space;
    const space = await this.storage.spaces.get(id);
    if (!space) this.rows.delete(id);
    else {
      if (this.rows.size >= REMEMBERED_SPACES) this.rows.clear();
      this.rows.set(id, { stamp, space });
    }
    return space;
  }
}
