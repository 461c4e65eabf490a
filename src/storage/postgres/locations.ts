// The databases named in HUB_STORAGE: which one holds the catalog, where each space lives, and where a new space goes.
import { StorageError } from '../storage-error.js';
import type { Client, Database } from './database.js';

export class Locations {
  constructor(readonly all: readonly Database[]) {}

  /** The first database holds the catalog: spaces with their locations, accounts and tokens. */
  get catalog(): Database {
    return this.all[0];
  }

  /** A catalog location that no configured database answers to (removed from HUB_STORAGE) is a storage failure. */
  byId(location: string): Database {
    const db = this.all.find((candidate) => candidate.id === location);
    if (!db) throw new StorageError('unavailable', `no configured database has the identity ${location}`);
    return db;
  }

  /**
   * Placement rule for a new space: the database holding the fewest spaces, the earliest in HUB_STORAGE
   * on a tie. Counting runs in the creating transaction; two nodes creating at once may both pick the
   * same database, which only skews the balance a little.
   */
  async placeNew(catalogClient: Client): Promise<Database> {
    if (this.all.length === 1) return this.catalog;
    const { rows } = await catalogClient.query<{ location: string; spaces: number }>(
      'SELECT location, count(*)::int AS spaces FROM spaces GROUP BY location');
    const counts = new Map(rows.map((row) => [row.location, row.spaces]));
    let best = this.all[0];
    for (const db of this.all) {
      if ((counts.get(db.id) ?? 0) < (counts.get(best.id) ?? 0)) best = db;
    }
    return best;
  }

  /**
   * Runs `work` against the database holding a space: on the catalog's own connection (and so in its
   * transaction) when that is the one, else in a transaction of its own on the other database.
   */
  async within<T>(db: Database, catalogClient: Client, work: (client: Client) => Promise<T>): Promise<T> {
    return db === this.catalog ? work(catalogClient) : db.transaction(work);
  }
}
