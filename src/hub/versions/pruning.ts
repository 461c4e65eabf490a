// Background pruning of history (ADR 002, "Pruning"): what no kept version and no tag needs is deleted in short batches after the writes that make it old.
import type { Storage } from '../../storage/storage.js';
import { keepsHistory, oldestReadable } from './space-versions.js';

export interface PruningOptions {
  /** How long after a space was named the pass starts: the writes of that time share one pass. */
  delayMs?: number;
  /** History rows (and version records) deleted by the first transaction of a space's pass; later ones adapt (see BATCH_MS). */
  batch?: number;
  /**
   * How many versions behind HEAD a subscription's undelivered history is kept for it (HUB_SUBSCRIPTION_MAX_LAG); one
   * further behind pins nothing and is suspended by its delivery (docs/subscriptions.md).
   */
  maxPinned?: number;
  /** Told of a pass that failed (the next write of the space schedules another). */
  onError?: (spaceId: string, error: unknown) => void;
}

const DEFAULT_DELAY_MS = 500;
export const DEFAULT_MAX_PINNED = 100_000;
const DEFAULT_BATCH = 500;
/**
 * What one batch's transaction may take: the next batch is halved when one took longer, doubled when one took less than
 * half. SQLite's writers wait for a batch's transaction (one write lock per file): batches of 2,000 took the writers'
 * p99 from 21 to 174 ms while 100,000 versions were pruned (docs/decisions.md, "Versions").
 */
const BATCH_MS = 10;
const MIN_BATCH = 50;
const MAX_BATCH = 5000;

/** A macrotask between batches, so that the node's requests run between them (and, on SQLite, other processes' writes). */
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/**
 * Spaces are named after every write to them that keeps history, a `DELETE /changesets`, a tag deletion and a change of
 * `versionsToKeep`; a pass over the named spaces runs once per delay, so a busy space is pruned at most that often and
 * writers never wait for it. Each pass reads the space's definition and versions as they are then, and deletes batch
 * after batch until nothing is left. Deletes are idempotent: nodes (or workers) pruning one space at once delete the same
 * rows. A space named on a node that stops before its pass is pruned after its next write.
 */
export class Pruning {
  private readonly due = new Set<string>();
  private timer?: NodeJS.Timeout;
  private running = false;
  private readonly delayMs: number;
  private readonly batch: number;

  constructor(private readonly storage: Storage, private readonly options: PruningOptions = {}) {
    this.delayMs = options.delayMs ?? DEFAULT_DELAY_MS;
    this.batch = options.batch ?? DEFAULT_BATCH;
  }

  /** The space may hold history no kept version needs any more. */
  schedule(spaceId: string): void {
    this.due.add(spaceId);
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.running || this.due.size === 0) return;
    this.timer = setTimeout(() => void this.pass(), this.delayMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    this.timer = undefined;
    this.running = true;
    try {
      const spaces = [...this.due];
      this.due.clear();
      for (const id of spaces) {
        try {
          await this.prune(id);
        } catch (error) {
          this.options.onError?.(id, error);
        }
      }
    } finally {
      this.running = false;
      this.arm();
    }
  }

  /** Prunes one space to what its definition and versions keep now; returns how many rows it deleted. */
  async prune(spaceId: string): Promise<number> {
    const space = await this.storage.spaces.get(spaceId);
    if (!space) return 0;
    const versions = await this.storage.features.versions(space.key);
    // A space keeping one version has none before HEAD to read: its history goes entirely. Otherwise what a
    // subscription has not delivered yet stays, as the reference hub keeps it with a system tag.
    const pinned = keepsHistory(space.definition)
      ? await this.storage.subscriptions.pinnedFrom(space.key.sid, versions.head - (this.options.maxPinned ?? DEFAULT_MAX_PINNED)) : undefined;
    const oldest = keepsHistory(space.definition) ? Math.min(oldestReadable(space.definition, versions), pinned ?? Infinity) : versions.head + 1;
    let deleted = 0;
    for (let batch = this.batch; ;) {
      const started = performance.now();
      const removed = await this.storage.history.prune(space.key, oldest, batch);
      const took = performance.now() - started;
      deleted += removed;
      // Fewer than a batch in all: fewer than a batch of each kind, so nothing of either is left.
      if (removed < batch) return deleted;
      if (took > BATCH_MS) batch = Math.max(MIN_BATCH, Math.floor(batch / 2));
      else if (took < BATCH_MS / 2) batch = Math.min(MAX_BATCH, batch * 2);
      await pause();
    }
  }
}
