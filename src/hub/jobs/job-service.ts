// Jobs as the API serves them (docs/jobs.md): create, read, status, START/CANCEL/RESUME, upload the input, download the output, delete.
import type { Readable } from 'node:stream';
import { HubError, hubError } from '../../core/errors.js';
import type { JobChange, JobRecord, JobState, Storage } from '../../storage/storage.js';
import { detectFormat, OUTPUT_FILES } from '../../transfer/formats/format-registry.js';
import { openInput } from '../../transfer/input-source.js';
import type { Claims } from '../access/claims.js';
import { randomId } from '../ids.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { JobFiles } from './job-files.js';
import { formatName, type JobSpec, jobSpecOf, spaceOfJob } from './job-spec.js';

/** A job as the API shows it. */
export type JobView = Record<string, unknown>;

/** The largest upload a job takes by default: 10 GiB. */
export const DEFAULT_JOB_MAX_INPUT = 10 * 1024 ** 3;

/** The jobs GET /hub/jobs lists, newest first. */
const LISTED = 100;

const ACTIONS = ['START', 'CANCEL', 'RESUME'] as const;
type Action = typeof ACTIONS[number];

/** The states each action moves a job from, and to. */
const MOVES: Record<Action, { from: readonly JobState[]; to: JobState }> = {
  START: { from: ['WAITING_FOR_INPUT'], to: 'SUBMITTED' },
  CANCEL: { from: ['WAITING_FOR_INPUT', 'SUBMITTED', 'RUNNING'], to: 'CANCELLED' },
  RESUME: { from: ['FAILED', 'CANCELLED'], to: 'SUBMITTED' },
};

/** A job that no node is working on: it may be deleted with its files. */
const IDLE: readonly JobState[] = ['WAITING_FOR_INPUT', 'SUCCEEDED', 'FAILED', 'CANCELLED'];

const isJobId = (id: string) => /^[A-Za-z0-9]{1,64}$/.test(id);

const specOf = (job: JobRecord) => JSON.parse(job.spec) as JobSpec;

export interface JobOutput {
  stream: Readable;
  bytes: number;
  contentType: string;
  fileName: string;
}

/** The files of a partitioned export, each downloaded by its url. */
export interface JobOutputList {
  outputs: Array<{ name: string; bytes: number; url: string }>;
}

export class JobService {
  constructor(private readonly storage: Storage, private readonly spaces: SpaceResolver, private readonly files: JobFiles, readonly maxInput: number) {}

  /**
   * The caller may do what the job does to its space: create and replace features (an import, reading every layer below
   * a layered space as its writes do) or read them (an export), decided by the one authorization module as for the
   * requests themselves. A space the caller may not see is a 404;
   * with `gone: 'pass'` a deleted space decides nothing (its jobs can still be looked at, cancelled and deleted by their account).
   */
  private async allowed(caller: Claims, spec: JobSpec, gone: 'refuse' | 'pass' = 'refuse'): Promise<void> {
    const spaceId = spaceOfJob(spec);
    if (gone === 'pass' && !(await this.storage.spaces.get(spaceId))) return;
    const scope = await this.spaces.open(caller, spaceId, () => { throw hubError('spaceNotFound'); });
    if (spec.kind === 'import') scope.importable();
    else scope.reader();
  }

  /**
   * The caller's job of that id, once the caller has the rights the job uses: another account's job is not found, as
   * one that does not exist; a token of the account without those rights gets 403.
   */
  private async owned(caller: Claims, id: string): Promise<JobRecord> {
    const job = isJobId(id) ? await this.storage.jobs.get(id) : undefined;
    if (!job || job.owner !== caller.aid) throw hubError('jobNotFound', { id: id.slice(0, 64) });
    await this.allowed(caller, specOf(job), 'pass');
    return job;
  }

  async create(caller: Claims, body: Record<string, unknown>): Promise<JobView> {
    const spec = jobSpecOf(body);
    await this.allowed(caller, spec);
    const now = Date.now();
    const job: JobRecord = {
      id: randomId(16), owner: caller.aid, tokenId: caller.tid, kind: spec.kind, spaceId: spaceOfJob(spec), spec: JSON.stringify(spec),
      state: spec.kind === 'import' ? 'WAITING_FOR_INPUT' : 'SUBMITTED', inputBytes: null, next: 0, written: 0, failed: 0, bytes: 0, total: 0,
      lastError: null, createdAt: now, updatedAt: now, startedAt: null,
    };
    await this.storage.jobs.create(job);
    return this.viewOf(job);
  }

  /** The account's jobs that this token has the rights of (a token limited to some spaces sees the jobs of those). */
  async list(caller: Claims): Promise<JobView[]> {
    const views: JobView[] = [];
    for (const job of await this.storage.jobs.list(caller.aid, LISTED)) {
      try {
        await this.allowed(caller, specOf(job), 'pass');
        views.push(this.viewOf(job));
      } catch (error) {
        if (!(error instanceof HubError) || error.status >= 500) throw error;
      }
    }
    return views;
  }

  async get(caller: Claims, id: string): Promise<JobView> {
    return this.viewOf(await this.owned(caller, id));
  }

  async status(caller: Claims, id: string): Promise<Record<string, unknown>> {
    return statusOf(await this.owned(caller, id));
  }

  /**
   * `desiredAction` START (an import whose input is uploaded), CANCEL or RESUME (from the last checkpoint; an export writes
   * its file again). START and RESUME check the caller's rights again, and the job acts with the caller's token from then on.
   */
  async act(caller: Claims, id: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const unknown = Object.keys(body).filter((key) => key !== 'desiredAction');
    if (unknown.length > 0) throw hubError('invalidJobAction', { problem: `unknown members ${unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 40))).join(', ')}; the body is {"desiredAction": …}` });
    const action = body.desiredAction;
    if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
      throw hubError('invalidJobAction', { problem: `expected one of ${ACTIONS.join(', ')}, got ${JSON.stringify(action)?.slice(0, 40) ?? 'nothing'}` });
    }
    const job = await this.owned(caller, id);
    const move = MOVES[action as Action];
    const change: JobChange = { from: move.from, state: move.to, now: Date.now() };
    if (action !== 'CANCEL') {
      const spec = specOf(job);
      await this.allowed(caller, spec);
      if (job.kind === 'import' && job.inputBytes === null) throw hubError('jobNoInput', { id });
      if (action === 'START' && spec.kind === 'import' && spec.source.format === undefined) await this.detectable(job);
      Object.assign(change, { tokenId: caller.tid, lastError: null, restart: job.kind === 'export' });
    }
    const changed = await this.storage.jobs.update(id, change);
    if (!changed) {
      const now = await this.owned(caller, id);
      throw hubError('jobStateConflict', { id, state: now.state, action, needed: move.from.join(' or ') });
    }
    return statusOf(changed);
  }

  /** An input whose format is not given must show it in its first bytes, as the CLI detects it. */
  private async detectable(job: JobRecord): Promise<void> {
    const input = await openInput(this.files.inputPath(job.id));
    if (detectFormat(undefined, input.head) === undefined) {
      throw hubError('invalidJob', { problem: 'the format of the uploaded input cannot be told from its first bytes: give source.format' });
    }
  }

  /**
   * Streams the upload to disk (`open` makes the body stream, after the job was found: a refused upload is not read);
   * a second upload before START replaces the first.
   */
  async upload(caller: Claims, id: string, open: () => Readable): Promise<Record<string, unknown>> {
    const job = await this.owned(caller, id);
    if (job.kind !== 'import') throw hubError('jobNotImport', { id });
    if (job.state !== 'WAITING_FOR_INPUT') throw hubError('jobStateConflict', { id, state: job.state, action: 'an upload', needed: 'WAITING_FOR_INPUT' });
    let bytes: number;
    try {
      bytes = await this.files.receive(id, open);
    } catch (error) {
      if (error instanceof HubError && error.code === 'payloadTooLarge') throw hubError('jobInputTooLarge', { limit: this.maxInput });
      throw error;
    }
    const changed = await this.storage.jobs.update(id, { from: ['WAITING_FOR_INPUT'], state: 'WAITING_FOR_INPUT', inputBytes: bytes, now: Date.now() });
    if (!changed) throw hubError('jobStateConflict', { id, state: (await this.owned(caller, id)).state, action: 'an upload', needed: 'WAITING_FOR_INPUT' });
    return statusOf(changed);
  }

  /**
   * The file of a SUCCEEDED export, or the list of the files of a partitioned one, while the caller may still read the
   * space it came from.
   */
  async output(caller: Claims, id: string): Promise<JobOutput | JobOutputList> {
    const spec = await this.finishedExport(caller, id);
    if (spec.target.maxFeaturesPerFile !== undefined) {
      const parts = await this.files.listParts(id);
      if (parts.length === 0) throw hubError('jobNoOutput', { id, problem: 'has lost its output files' });
      return { outputs: parts.map((part) => ({ ...part, url: `/hub/jobs/${id}/outputs/${part.name}` })) };
    }
    const file = await this.files.readOutput(id);
    if (!file) throw hubError('jobNoOutput', { id, problem: 'has lost its output file' });
    const format = spec.target.format;
    return { ...file, contentType: OUTPUT_FILES[format].mediaType, fileName: `${id}.${OUTPUT_FILES[format].extension}` };
  }

  /** One file of a partitioned export, by a name its list gave. */
  async outputPart(caller: Claims, id: string, name: string): Promise<JobOutput> {
    const spec = await this.finishedExport(caller, id);
    const file = spec.target.maxFeaturesPerFile === undefined ? undefined : await this.files.readPart(id, name);
    if (!file) throw hubError('jobOutputNotFound', { id, name: name.slice(0, 40) });
    return { ...file, contentType: OUTPUT_FILES[spec.target.format].mediaType, fileName: `${id}-${name}` };
  }

  private async finishedExport(caller: Claims, id: string): Promise<Extract<JobSpec, { kind: 'export' }>> {
    const job = await this.owned(caller, id);
    const spec = specOf(job);
    if (spec.kind !== 'export') throw hubError('jobNoOutput', { id, problem: 'is an import: it has no output file; its features are in the space' });
    if (job.state !== 'SUCCEEDED') throw hubError('jobNoOutput', { id, problem: `is ${job.state}: its output can be downloaded once it SUCCEEDED` });
    await this.allowed(caller, spec);
    return spec;
  }

  /** A job no node works on, with its files; a SUBMITTED or RUNNING one must be cancelled first. */
  async delete(caller: Claims, id: string): Promise<JobView> {
    const job = await this.owned(caller, id);
    if (!(await this.storage.jobs.delete(id, IDLE))) {
      const now = await this.owned(caller, id);
      throw hubError('jobStateConflict', { id, state: now.state, action: 'DELETE', needed: `${IDLE.join(', ')} (CANCEL it first)` });
    }
    await this.files.remove(id);
    return this.viewOf(job);
  }

  private viewOf(job: JobRecord): JobView {
    const spec = specOf(job);
    const source: Record<string, unknown> = { ...spec.source };
    const target: Record<string, unknown> = { ...spec.target };
    if (spec.kind === 'import' && spec.source.format !== undefined) source.format = formatName(spec.source.format);
    if (spec.kind === 'export') target.format = formatName(spec.target.format);
    return {
      id: job.id, type: job.kind === 'import' ? 'Import' : 'Export', ...(spec.description ? { description: spec.description } : {}),
      source, target, status: statusOf(job), createdAt: job.createdAt, updatedAt: job.updatedAt,
    };
  }
}

/**
 * estimatedProgress: the share of the input read by the last committed chunk (import) or of the features written (export);
 * estimatedEndTime extrapolates the time since the job started.
 */
export function statusOf(job: JobRecord): Record<string, unknown> {
  const share = job.kind === 'import' ? (job.inputBytes ? job.bytes / job.inputBytes : 0) : (job.total > 0 ? job.written / job.total : 0);
  const progress = job.state === 'SUCCEEDED' ? 1 : Math.min(0.999, Math.round(share * 1000) / 1000);
  const status: Record<string, unknown> = { state: job.state, estimatedProgress: progress, writtenFeatures: job.written, failedFeatures: job.failed };
  if (job.kind === 'import') {
    status.processedItems = job.next;
    if (job.inputBytes !== null) status.inputBytes = job.inputBytes;
  }
  if (job.startedAt !== null) status.startedAt = job.startedAt;
  if (job.state === 'RUNNING' && job.startedAt !== null && progress > 0) {
    status.estimatedEndTime = Math.round(job.updatedAt + (job.updatedAt - job.startedAt) * (1 - progress) / progress);
  }
  status.updatedAt = job.updatedAt;
  if (job.lastError !== null) status.lastError = job.lastError;
  return status;
}
