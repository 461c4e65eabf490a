// What a node's processes tell each other of committed versions, where the storage does not (SQLite: each process hears only its own commits).
import type { SpaceKey } from '../../storage/storage.js';

/**
 * The node's other processes (HUB_WORKERS, src/cluster): a version committed here is told to them, so that an event
 * stream served by another process hears of it at once rather than at its next look.
 */
export interface ChangePeers {
  /** Tells the node's other processes that this process committed `version` of the space. Fire and forget. */
  announceChange(space: SpaceKey, version: number): void;
  /** Calls `listener` with each version another process of the node committed and announced. */
  onChange(listener: (space: SpaceKey, version: number) => void): void;
}
