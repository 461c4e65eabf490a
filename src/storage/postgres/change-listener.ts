// Tells this node about versions committed to spaces on any node: each write NOTIFYs its space's new HEAD, heard on a dedicated connection per database.
import type { ChangeListener, ChangeWatch } from '../storage.js';
import { listenToChannel } from './channel-listener.js';
import type { Database } from './database.js';

export const CHANGE_CHANNEL = 'hub_space_changed';

/**
 * The expression a statement taking a space's version returns (`RETURNING …`): a notification of `sid version`, which
 * PostgreSQL delivers when the transaction commits and drops when it rolls back.
 */
export const NOTIFY_CHANGE = `pg_notify('${CHANGE_CHANNEL}', sid || ' ' || version)`;

/** One listening connection per database; a notification names the space by its number in that database. */
export function listenForChanges(databases: readonly Database[], listener: ChangeListener): ChangeWatch {
  const listeners = databases.map((db) => listenToChannel(db.url, CHANGE_CHANNEL, 'changes', {
    message(payload) {
      const [sid, version] = payload.split(' ').map(Number);
      // The identity of a database is known once the storage started, before any write could notify.
      if (Number.isSafeInteger(sid) && Number.isSafeInteger(version) && db.id) listener({ sid, location: db.id }, version);
    },
    // Listeners look at the versions themselves from time to time (Storage.watchChanges).
    gap: () => undefined,
  }));
  return { close: async () => { await Promise.all(listeners.map((channel) => channel.close())); } };
}
