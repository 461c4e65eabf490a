// The job loop (docs/jobs.md): each node runs the jobs whose lease it holds, renews the leases while they run, and takes over jobs whose node stopped.
import { randomUUID } from 'node:crypto';
import { HubError } from '../../core/errors.js';
import type { JobEnd, JobProgress, JobRecord, JobState, Storage } from '../../storage/storage.js';
import { runExport } from './job-export.js';
import { runImport } from './job-import.js';
import type { JobSpec } from './job-spec.js';
import { type JobControl, JobFailure, type JobWork } from './job-work.js';
import { PollLoop } from '../poll-loop.js';

export interface JobRunnerOptions {
  /** HUB_JOBS_POLL: how often the node looks for jobs to run and renews its leases, in ms. */
  pollMs: number;
  /** HUB_JOBS_LEASE: how long a lease lasts unless renewed; a crashed node's jobs move on after it. */
  leaseMs: number;
  /** Jobs one process runs at once. */
  running: number;
  /** HUB_JOBS_RETENTION: a finished job and its files are removed this long after its last change; 0 keeps them. */
  retentionMs: number;
  /** Told of a poll or a run that failed on something other than the job's input or rights. */
  onError?: (error: unknown) => void;
}

/** Features per write transaction of an import job, and per page of an export job. */
export const DEFAULT_JOB_CHUNK = 5000;

export const DEFAULT_JOB_RUNNER: Omit<JobRunnerOptions, 'onError'> = { pollMs: 1000, leaseMs: 30_000, running: 2, retentionMs: 7 * 86_400_000 };

/** States in which no node works on a job any more: those the retention removes. WAITING_FOR_INPUT stays (its client may come back). */
const FINISHED: readonly JobState[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** At most this often, and this many jobs at a time, are old jobs looked for and removed. */
const CLEANUP_EVERY_MS = 60_000;
const CLEANUP_BATCH = 100;

/** What a job's lastError says of a failure that is not the job's own (a storage failure): no internals, and what to do. */
const INTERNAL_FAILURE = 'The job stopped on a failure of the hub or its storage; RESUME it to continue from its last checkpoint.';

export class JobRunner {
  /** This process's identity in the leases: a restarted process is another node, and waits for its old leases to expire. */
  private readonly node = randomUUID();
  private readonly runs = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private readonly loop: PollLoop;
  private nextCleanup = 0;

  constructor(private readonly storage: Storage, private readonly work: JobWork, private readonly options: JobRunnerOptions) {
    this.loop = new PollLoop(options.pollMs, () => this.poll(), options.onError);
  }

  start(): void {
    this.loop.start();
  }

  /** Stops polling and the runs (they continue from their checkpoints elsewhere or after a restart) and gives up this node's leases. */
  async stop(): Promise<void> {
    const polled = this.loop.stop();
    for (const run of this.runs.values()) run.stop.abort();
    await polled;
    await Promise.allSettled([...this.runs.values()].map((run) => run.done));
    await this.storage.jobs.release(this.node).catch(() => undefined);
  }

  /** Renews the leases of the jobs running here and takes new ones; a run whose lease was lost (or job cancelled) is stopped. */
  private async poll(): Promise<void> {
    const now = Date.now();
    const held = await this.storage.jobs.claim(this.node, now, now + this.options.leaseMs, this.options.running);
    const ids = new Set(held.map((job) => job.id));
    for (const [id, run] of this.runs) if (!ids.has(id)) run.stop.abort();
    for (const job of held) {
      if (this.runs.has(job.id) || this.loop.stopped.aborted) continue;
      const stop = new AbortController();
      const done = this.run(job, stop.signal).catch((error: unknown) => this.options.onError?.(error)).finally(() => this.runs.delete(job.id));
      this.runs.set(job.id, { stop, done });
    }
    if (this.options.retentionMs > 0 && now >= this.nextCleanup) await this.removeOld(now);
  }

  /**
   * Removes finished jobs older than the retention, then their files. Every node does it (at most every minute, sooner
   * for a shorter retention); the storage hands each job to one of them. A crash between the two leaves a folder without
   * a job, which nothing reads.
   */
  private async removeOld(now: number): Promise<void> {
    this.nextCleanup = now + Math.min(this.options.retentionMs, CLEANUP_EVERY_MS);
    for (let removed = CLEANUP_BATCH; removed === CLEANUP_BATCH && !this.loop.stopped.aborted;) {
      const ids = await this.storage.jobs.removeOlder(FINISHED, now - this.options.retentionMs, CLEANUP_BATCH);
      for (const id of ids) await this.work.files.remove(id);
      removed = ids.length;
    }
  }

  private async run(job: JobRecord, signal: AbortSignal): Promise<void> {
    let latest: JobProgress = { next: job.next, written: job.written, failed: job.failed, bytes: job.bytes, total: job.total };
    // Progress is recorded while the lease is this node's, which the storage checks, also when the run was stopped by its
    // own node (the node stopping): the answer says whether the run may go on. An import's chunk records its progress in
    // its own write's transaction (the fence), so the job's counts never differ from its space.
    const record = async (progress: JobProgress, end?: JobEnd) => {
      latest = { ...progress };
      const recorded = await this.storage.jobs.record(job.id, this.node, latest, Date.now(), end);
      return recorded && !signal.aborted;
    };
    const control: JobControl = {
      signal,
      record,
      fence: (progress) => ({ job: job.id, node: this.node, progress: { ...progress }, now: Date.now() }),
      committed: (progress) => {
        latest = { ...progress };
        return !signal.aborted;
      },
    };
    try {
      const spec = JSON.parse(job.spec) as JobSpec;
      if (spec.kind === 'import') await runImport(this.work, job, spec, control);
      else await runExport(this.work, job, spec, control);
    } catch (error) {
      if (signal.aborted) return;
      const known = error instanceof JobFailure || (error instanceof HubError && error.status < 500);
      if (!known) this.options.onError?.(error);
      await this.storage.jobs.record(job.id, this.node, latest, Date.now(), { state: 'FAILED', lastError: known ? (error as Error).message : INTERNAL_FAILURE });
    }
  }
}
