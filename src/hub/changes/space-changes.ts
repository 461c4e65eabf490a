// The hub's one "space changed" signal: the new HEAD version of each space, heard from the storage as writes commit on any node. The event stream listens to it; a response cache can too.
import type { ChangeWatch, SpaceKey, Storage } from '../../storage/storage.js';
import type { ChangePeers } from './change-peers.js';

export type VersionListener = (version: number) => void;

const keyOf = (space: SpaceKey): string => `${space.location}/${space.sid}`;

/**
 * What the storage reports (PostgreSQL: NOTIFY from every node; SQLite: this process's commits), fanned out to the
 * listeners of each space. The storage is watched from the first listener on. Where the storage tells only the
 * committing process (SQLite) and the node has other processes, each commit here is relayed to them through `peers`
 * (the primary, over IPC), and theirs reach the listeners here the same way. A signal may be missed (a lost
 * connection, another node's process on the same SQLite file): listeners also look at the versions themselves from time to time.
 */
export class SpaceChanges {
  private readonly listeners = new Map<string, Set<VersionListener>>();
  private watch?: ChangeWatch;

  constructor(private readonly storage: Storage, peers?: ChangePeers) {
    if (!peers || !storage.changesStayInProcess) return;
    // Every commit is relayed, listened to here or not: the streams are on the other processes.
    this.watch = storage.watchChanges((changed, version) => {
      this.heard(changed, version);
      peers.announceChange(changed, version);
    });
    peers.onChange((changed, version) => this.heard(changed, version));
  }

  /** Calls `listener` with each version committed to the space from now on; returns the call that stops it. */
  listen(space: SpaceKey, listener: VersionListener): () => void {
    this.watch ??= this.storage.watchChanges((changed, version) => this.heard(changed, version));
    const key = keyOf(space);
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  private heard(space: SpaceKey, version: number): void {
    for (const listener of this.listeners.get(keyOf(space)) ?? []) listener(version);
  }
}
