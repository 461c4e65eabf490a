// What a running job works with: the hub's own write and read paths, the token it acts with, its files, and the record of its progress.
import type { JobEnd, JobFence, JobProgress, JobRecord } from '../../storage/storage.js';
import type { AccessService } from '../access/access-service.js';
import type { Claims } from '../access/claims.js';
import type { FeatureService } from '../features/feature-service.js';
import type { WriteService } from '../writes/write-service.js';
import type { JobFiles } from './job-files.js';

export interface JobWork {
  access: AccessService;
  writes: WriteService;
  features: FeatureService;
  files: JobFiles;
  /** Features per write transaction of an import, and per page read of an export (HUB_JOBS_CHUNK). */
  chunk: number;
  /** The longest line of a GeoJSONSeq or CSV input: HUB_MAX_BODY, the largest body a client could send the same feature in. */
  maxLine: number;
}

export interface JobControl {
  /** Aborted when the node stops or loses the job's lease. */
  signal: AbortSignal;
  /**
   * The fence of a chunk's write: the write commits only while this node holds the job's lease and the job is RUNNING,
   * and records `progress` (the job's progress once the chunk is written) in its transaction. Else it throws a
   * StorageError `leaseLost` and writes nothing.
   */
  fence(progress: JobProgress): JobFence;
  /** Takes note of the progress a fenced write recorded; false when the job must stop. */
  committed(progress: JobProgress): boolean;
  /** Records progress, and with `end` ends the run; false when the job must stop (it was cancelled, or another node holds it now). */
  record(progress: JobProgress, end?: JobEnd): Promise<boolean>;
}

/** Ends the job FAILED with this message (the job's lastError: no stack, no token). */
export class JobFailure extends Error {}

/**
 * The caller the job acts as, read again before each chunk: a token deleted or expired since stops the job, and rights
 * taken from it stop it at the next write or read, decided by the one authorization module as for a request.
 */
export async function callerOfJob(work: JobWork, job: JobRecord): Promise<Claims> {
  const claims = await work.access.claimsOfToken(job.tokenId);
  if (!claims) throw new JobFailure('The token the job acts with was deleted or has expired; RESUME the job with a valid token to continue from its last checkpoint.');
  return claims;
}
