// The messages a hub's primary process and its workers exchange over the cluster's IPC channel.

/** From a worker to the primary. `id` pairs a question with its answer. */
export type WorkerMessage =
  /** The worker serves HTTP on this port. */
  | { type: 'listening'; port: number }
  /** Take one request of a token's rate from the node's buckets. */
  | { type: 'rate'; id: number; tid: string; perMinute: number }
  /** A token was deleted through this worker: tell the others. */
  | { type: 'revoked'; id: number; secretHash: string }
  /** The answer to a `forget`: the token is out of this worker's cache. */
  | { type: 'forgot'; id: number }
  /** This worker committed `version` of a space: tell the others (SQLite tells no other process). */
  | SpaceChanged
  /** GET /metrics reached this worker: the node's metrics, summed over the workers. */
  | { type: 'metrics'; id: number };

/** From the primary to a worker. */
export type PrimaryMessage =
  /** The answer to `rate`: null when allowed, else the whole seconds until a request is. */
  | { type: 'rate'; id: number; wait: number | null }
  /** The answer to `revoked`: every other worker forgot the token (or no longer could accept it). */
  | { type: 'revoked'; id: number }
  /** Another worker deleted this token. */
  | { type: 'forget'; id: number; secretHash: string }
  /** Another worker committed `version` of a space. */
  | SpaceChanged
  /** The answer to `metrics`: Prometheus text, or null when a worker did not answer in time. */
  | { type: 'metrics'; id: number; text: string | null };

/** A committed version, relayed by the primary to the workers that did not commit it, as it came. */
export interface SpaceChanged {
  type: 'changed';
  location: string;
  sid: number;
  version: number;
}

/** What the primary hands a worker it starts, in the environment variable named WORKER_START, as JSON. */
export interface WorkerStart {
  /** The port to listen on: the node's, once the first workers picked it (`--port 0`). */
  port: number;
  /** When the node started (GET /hub `upSince`), the same from every worker. */
  upSince: number;
}

export const WORKER_START = 'SPATIAL_HUB_WORKER_START';
