// The space rows this process read last, reused while the storage's stamp says nothing committed since (SQLite): a cached tile then skips the row's lookup and parse.
import type { Storage, StoredSpace } from '../../storage/storage.js';

/** Rows remembered at most; past it the memo starts over (a full memo is rare: every commit outdates it anyway). */
const REMEMBERED_SPACES = 10_000;

interface Remembered {
  stamp: string;
  space: StoredSpace;
}

/**
 * A row is reused only under a stamp (Storage.spacesStamp) taken after the lookup was asked for and before the row
 * was read: any commit on any node or process since, to any space, gives another stamp, and the row is read again.
 * So a remembered row is the row a read would find now: rights are decided on the space as it is, and a write
 * makes the next read see its new revision, hence miss the answer cache. A space not found is not remembered. Rows
 * are shared between requests and must not be changed (nothing in the hub changes a StoredSpace it was given).
 *
 * The lookups asked for during one round of the event loop share one stamp, taken at the end of that round
 * (setImmediate), after all of them arrived: the stamp is a statement, and under load several requests share it
 * (docs/cache-and-changed-tiles.md, fourth look). A stamp is never reused for a
 * lookup asked for after it was taken.
 */
export class SpaceMemo {
  private readonly rows = new Map<string, Remembered>();
  /** The stamp the lookups of this round will share, not taken yet. */
  private nextStamp: Promise<string> | undefined;

  /** The storage's stamp, when it has one. */
  private readonly takeStamp: (() => string) | undefined;

  constructor(private readonly storage: Storage) {
    this.takeStamp = storage.spacesStamp?.bind(storage);
  }

  /** A stamp taken after this call, shared with the other calls of this round. */
  private stampAfterNow(take: () => string): Promise<string> {
    this.nextStamp ??= new Promise<string>((resolve, reject) => setImmediate(() => {
      this.nextStamp = undefined;
      try {
        resolve(take());
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }));
    return this.nextStamp;
  }

  async get(id: string): Promise<StoredSpace | undefined> {
    if (!this.takeStamp) return this.storage.spaces.get(id);
    const stamp = await this.stampAfterNow(this.takeStamp);
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
