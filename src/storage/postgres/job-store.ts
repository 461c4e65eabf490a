// Jobs of the jobs API and their leases in the PostgreSQL catalog database (docs/jobs.md).
import type { JobChange, JobEnd, JobFence, JobKind, JobProgress, JobRecord, JobState, JobStore } from '../storage.js';
import type { Client, Database } from './database.js';

type Counted = 'next' | 'written' | 'failed' | 'bytes' | 'total' | 'createdAt' | 'updatedAt';
interface JobRow extends Omit<JobRecord, 'kind' | 'state' | 'inputBytes' | 'startedAt' | Counted> {
  kind: string; state: string; inputBytes: string | null; startedAt: string | null;
  next: string; written: string; failed: string; bytes: string; total: string; createdAt: string; updatedAt: string;
}

const COLUMNS = `id, owner, token_id AS "tokenId", kind, space_id AS "spaceId", spec, state, input_bytes AS "inputBytes", next_item AS next, written, failed,
  bytes_read AS bytes, total, last_error AS "lastError", created_at AS "createdAt", updated_at AS "updatedAt", started_at AS "startedAt"`;

const numberOrNull = (value: string | null) => (value === null ? null : Number(value));

const recordOf = (row: JobRow): JobRecord => ({
  ...row, kind: row.kind as JobKind, state: row.state as JobState, inputBytes: numberOrNull(row.inputBytes), startedAt: numberOrNull(row.startedAt),
  next: Number(row.next), written: Number(row.written), failed: Number(row.failed), bytes: Number(row.bytes), total: Number(row.total),
  createdAt: Number(row.createdAt), updatedAt: Number(row.updatedAt),
});

/** As in sqlite/job-store.ts; $1 is the node, $2 now. */
const CLAIMABLE = `(j.state = 'SUBMITTED' OR (j.state = 'RUNNING' AND (j.lease_owner = $1 OR j.lease_until < $2)))
  AND (j.state = 'RUNNING' OR j.kind = 'export' OR NOT EXISTS (SELECT 1 FROM jobs o WHERE o.space_id = j.space_id AND o.kind = 'import' AND o.id <> j.id
    AND (o.state = 'RUNNING' OR (o.state = 'SUBMITTED' AND (o.created_at, o.id) < (j.created_at, j.id)))))`;

/** A RUNNING job's progress (and with $9 its end), while $2 holds its lease; it answers the job's id when it does. */
const RECORD = `UPDATE jobs SET next_item = $3, written = $4, failed = $5, bytes_read = $6, total = $7, updated_at = $8,
    state = coalesce($9, state), last_error = CASE WHEN $9::text IS NULL THEN last_error ELSE $10 END,
    lease_owner = CASE WHEN $9::text IS NULL THEN lease_owner END, lease_until = CASE WHEN $9::text IS NULL THEN lease_until ELSE 0 END
  WHERE id = $1 AND lease_owner = $2 AND state = 'RUNNING' RETURNING id`;

const recordValues = (id: string, node: string, progress: JobProgress, now: number, end?: JobEnd) =>
  [id, node, progress.next, progress.written, progress.failed, progress.bytes, progress.total, now, end?.state ?? null, end?.lastError ?? null];

/**
 * The fence of a job's write (JobFence), in a transaction of the catalog database (the write's own when its space lives
 * there): records the progress if the node holds the lease of the RUNNING job; whether it does. The job's row stays locked
 * until that transaction ends, so no node takes the lease over in between (their claims pass locked rows over).
 */
export async function holdsLease(client: Client, fence: JobFence): Promise<boolean> {
  const { rowCount } = await client.query(RECORD, recordValues(fence.job, fence.node, fence.progress, fence.now));
  return rowCount === 1;
}

/** Text cannot hold U+0000: ids and space ids with it are refused before they get here. */
export class PostgresJobStore implements JobStore {
  constructor(private readonly db: Database) {}

  async create(job: JobRecord): Promise<void> {
    await this.db.query(`INSERT INTO jobs (id, owner, token_id, kind, space_id, spec, state, input_bytes, next_item, written, failed, bytes_read, total,
        last_error, created_at, updated_at, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
    [job.id, job.owner, job.tokenId, job.kind, job.spaceId, job.spec, job.state, job.inputBytes, job.next, job.written, job.failed, job.bytes, job.total,
      job.lastError, job.createdAt, job.updatedAt, job.startedAt]);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const [row] = await this.db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
    return row && recordOf(row);
  }

  async list(owner: string, limit: number): Promise<JobRecord[]> {
    return (await this.db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE owner = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [owner, limit])).map(recordOf);
  }

  async update(id: string, change: JobChange): Promise<JobRecord | undefined> {
    const [row] = await this.db.query<JobRow>(`UPDATE jobs SET state = $3, token_id = coalesce($4, token_id), input_bytes = coalesce($5, input_bytes),
        last_error = CASE WHEN $6 THEN $7 ELSE last_error END,
        next_item = CASE WHEN $8 THEN 0 ELSE next_item END, written = CASE WHEN $8 THEN 0 ELSE written END,
        failed = CASE WHEN $8 THEN 0 ELSE failed END, bytes_read = CASE WHEN $8 THEN 0 ELSE bytes_read END,
        lease_owner = NULL, lease_until = 0, updated_at = $9
      WHERE id = $1 AND state = ANY($2::text[]) RETURNING ${COLUMNS}`,
    [id, change.from, change.state, change.tokenId ?? null, change.inputBytes ?? null, change.lastError !== undefined, change.lastError ?? null,
      change.restart === true, change.now]);
    return row && recordOf(row);
  }

  async delete(id: string, states: readonly JobState[]): Promise<boolean> {
    return (await this.db.query('DELETE FROM jobs WHERE id = $1 AND state = ANY($2::text[]) RETURNING id', [id, states])).length === 1;
  }

  async removeOlder(states: readonly JobState[], before: number, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = ANY($1::text[]) AND updated_at < $2
      ORDER BY updated_at LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING id`, [states, before, limit]);
    return rows.map((row) => row.id);
  }

  /**
   * The node's own leases are renewed first, waiting for their rows: a chunk of the node's that is committing holds its
   * job's row from its fence to its commit (holdsLease), and skipping that row would read as a lost lease and stop the run.
   * Other jobs are taken skipping locked rows: nodes claiming at once pass each other's over instead of waiting for them,
   * and a job whose chunk is committing stays with its node.
   */
  async claim(node: string, now: number, until: number, limit: number): Promise<JobRecord[]> {
    const renewed = await this.db.query<JobRow>(`UPDATE jobs SET lease_until = $2 WHERE lease_owner = $1 AND state = 'RUNNING' RETURNING ${COLUMNS}`,
      [node, until]);
    if (renewed.length >= limit) return renewed.map(recordOf);
    const taken = await this.db.query<JobRow>(`UPDATE jobs SET state = 'RUNNING', lease_owner = $1, lease_until = $3, started_at = coalesce(started_at, $2)
      WHERE id IN (SELECT j.id FROM jobs j WHERE ${CLAIMABLE} AND j.lease_owner IS DISTINCT FROM $1 ORDER BY j.created_at, j.id LIMIT $4
        FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`, [node, now, until, limit - renewed.length]);
    return [...renewed, ...taken].map(recordOf);
  }

  async record(id: string, node: string, progress: JobProgress, now: number, end?: JobEnd): Promise<boolean> {
    return (await this.db.query(RECORD, recordValues(id, node, progress, now, end))).length === 1;
  }

  async release(node: string): Promise<void> {
    await this.db.query('UPDATE jobs SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = $1', [node]);
  }
}
