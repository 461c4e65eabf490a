// Tells this process that a space's row or counters changed on any node: triggers NOTIFY on every committed change (migrations.ts), heard on a dedicated connection per database.
import { listenToChannel } from './channel-listener.js';
import type { Database } from './database.js';

export const SPACE_ROW_CHANNEL = 'hub_space_row';

/**
 * The stamp of Storage.spacesStamp on PostgreSQL: it grows with every notification and whenever some may have been
 * missed (a listening connection lost or just (re)started), and is undefined unless every database is heard.
 */
export class SpaceRowStamp {
  private stamp = 0;
  private readonly listeners;

  constructor(databases: readonly Database[]) {
    const moved = () => { this.stamp++; };
    this.listeners = databases.map((db) => listenToChannel(db.url, SPACE_ROW_CHANNEL, 'space rows', { message: moved, gap: moved }));
  }

  current(): number | undefined {
    for (const listener of this.listeners) if (!listener.live()) return undefined;
    return this.stamp;
  }

  async close(): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener.close()));
  }
}
