// Jobs of the jobs API and their leases in the embedded SQLite database (docs/jobs.md).
import type Database from 'better-sqlite3';
import type { JobChange, JobEnd, JobFence, JobKind, JobProgress, JobRecord, JobState, JobStore } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

interface JobRow extends Omit<JobRecord, 'kind' | 'state'> { kind: string; state: string }

const COLUMNS = `id, owner, token_id AS tokenId, kind, space_id AS spaceId, spec, state, input_bytes AS inputBytes, next_item AS next, written, failed,
  bytes_read AS bytes, total, last_error AS lastError, created_at AS createdAt, updated_at AS updatedAt, started_at AS startedAt`;

const recordOf = (row: JobRow): JobRecord => ({ ...row, kind: row.kind as JobKind, state: row.state as JobState });

/**
 * A job that may be taken: SUBMITTED, or RUNNING with an expired lease or the node's own. A SUBMITTED import waits while
 * another import of its space runs or was submitted before it.
 */
const CLAIMABLE = `(j.state = 'SUBMITTED' OR (j.state = 'RUNNING' AND (j.lease_owner = @node OR j.lease_until < @now)))
  AND (j.state = 'RUNNING' OR j.kind = 'export' OR NOT EXISTS (SELECT 1 FROM jobs o WHERE o.space_id = j.space_id AND o.kind = 'import' AND o.id <> j.id
    AND (o.state = 'RUNNING' OR (o.state = 'SUBMITTED' AND (o.created_at, o.id) < (j.created_at, j.id)))))`;

export class SqliteJobStore implements JobStore {
  private readonly insert;
  private readonly selectOne;
  private readonly selectOfOwner;
  private readonly change;
  private readonly remove;
  private readonly removeOld;
  private readonly claimable;
  private readonly take;
  private readonly progress;
  private readonly free;

  constructor(db: Database.Database, private readonly writes: WriteTransactions) {
    this.insert = db.prepare(`INSERT INTO jobs (id, owner, token_id, kind, space_id, spec, state, input_bytes, next_item, written, failed, bytes_read, total,
        last_error, created_at, updated_at, started_at)
      VALUES (@id, @owner, @tokenId, @kind, @spaceId, @spec, @state, @inputBytes, @next, @written, @failed, @bytes, @total, @lastError, @createdAt, @updatedAt, @startedAt)`);
    this.selectOne = db.prepare<[string], JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`);
    this.selectOfOwner = db.prepare<[string, number], JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE owner = ? ORDER BY created_at DESC, id DESC LIMIT ?`);
    this.change = db.prepare(`UPDATE jobs SET state = @state, token_id = coalesce(@tokenId, token_id), input_bytes = coalesce(@inputBytes, input_bytes),
        last_error = CASE WHEN @setError THEN @lastError ELSE last_error END,
        next_item = CASE WHEN @restart THEN 0 ELSE next_item END, written = CASE WHEN @restart THEN 0 ELSE written END,
        failed = CASE WHEN @restart THEN 0 ELSE failed END, bytes_read = CASE WHEN @restart THEN 0 ELSE bytes_read END,
        lease_owner = NULL, lease_until = 0, updated_at = @now
      WHERE id = @id AND state IN (SELECT value FROM json_each(@from)) RETURNING ${COLUMNS}`);
    this.remove = db.prepare('DELETE FROM jobs WHERE id = ? AND state IN (SELECT value FROM json_each(?))');
    this.removeOld = db.prepare<[string, number, number], { id: string }>(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs
      WHERE state IN (SELECT value FROM json_each(?)) AND updated_at < ? ORDER BY updated_at LIMIT ?) RETURNING id`);
    this.claimable = db.prepare<{ node: string; now: number }, { found: number }>(`SELECT EXISTS (SELECT 1 FROM jobs j WHERE ${CLAIMABLE}) AS found`);
    this.take = db.prepare(`UPDATE jobs SET state = 'RUNNING', lease_owner = @node, lease_until = @until, started_at = coalesce(started_at, @now)
      WHERE id IN (SELECT j.id FROM jobs j WHERE ${CLAIMABLE} ORDER BY coalesce(j.lease_owner = @node, 0) DESC, j.created_at, j.id LIMIT @limit)
      RETURNING ${COLUMNS}`);
    this.progress = db.prepare(`UPDATE jobs SET next_item = @next, written = @written, failed = @failed, bytes_read = @bytes, total = @total, updated_at = @now,
        state = coalesce(@end, state), last_error = CASE WHEN @end IS NULL THEN last_error ELSE @lastError END,
        lease_owner = CASE WHEN @end IS NULL THEN lease_owner END, lease_until = CASE WHEN @end IS NULL THEN lease_until ELSE 0 END
      WHERE id = @id AND lease_owner = @node AND state = 'RUNNING'`);
    this.free = db.prepare('UPDATE jobs SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = ?');
  }

  async create(job: JobRecord): Promise<void> {
    await this.writes.run(() => this.insert.run(job));
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const row = this.selectOne.get(id);
    return row && recordOf(row);
  }

  async list(owner: string, limit: number): Promise<JobRecord[]> {
    return this.selectOfOwner.all(owner, limit).map(recordOf);
  }

  async update(id: string, change: JobChange): Promise<JobRecord | undefined> {
    const row = await this.writes.run(() => this.change.get({
      id, from: JSON.stringify(change.from), state: change.state, tokenId: change.tokenId ?? null, inputBytes: change.inputBytes ?? null,
      setError: change.lastError === undefined ? 0 : 1, lastError: change.lastError ?? null, restart: change.restart ? 1 : 0, now: change.now,
    }) as JobRow | undefined);
    return row && recordOf(row);
  }

  async delete(id: string, states: readonly JobState[]): Promise<boolean> {
    return this.writes.run(() => this.remove.run(id, JSON.stringify(states)).changes === 1);
  }

  async removeOlder(states: readonly JobState[], before: number, limit: number): Promise<string[]> {
    return this.writes.run(() => this.removeOld.all(JSON.stringify(states), before, limit).map((row) => row.id));
  }

  /** Looked for first without the write lock: every process polls, and most polls find nothing to take. */
  async claim(node: string, now: number, until: number, limit: number): Promise<JobRecord[]> {
    if (this.claimable.get({ node, now })?.found !== 1) return [];
    return (await this.writes.run(() => this.take.all({ node, now, until, limit }) as JobRow[])).map(recordOf);
  }

  async record(id: string, node: string, progress: JobProgress, now: number, end?: JobEnd): Promise<boolean> {
    return this.writes.run(() => this.recordNow(id, node, progress, now, end));
  }

  /**
   * The fence of a job's write (JobFence), inside that write's transaction, which holds the file's write lock: records the
   * progress if the node holds the lease of the RUNNING job; whether it does.
   */
  holds(fence: JobFence): boolean {
    return this.recordNow(fence.job, fence.node, fence.progress, fence.now);
  }

  private recordNow(id: string, node: string, progress: JobProgress, now: number, end?: JobEnd): boolean {
    return this.progress.run({
      id, node, next: progress.next, written: progress.written, failed: progress.failed, bytes: progress.bytes, total: progress.total, now,
      end: end?.state ?? null, lastError: end?.lastError ?? null,
    }).changes === 1;
  }

  async release(node: string): Promise<void> {
    await this.writes.run(() => this.free.run(node));
  }
}
