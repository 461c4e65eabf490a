// An import job: reads the uploaded file with the CLI's format readers and writes it through the hub's write pipeline, a chunk per transaction.
import { HubError } from '../../core/errors.js';
import { InputError, type ReaderOptions, type TransferFeature } from '../../transfer/transfer-feature.js';
import { detectFormat, READERS } from '../../transfer/formats/format-registry.js';
import { openInput } from '../../transfer/input-source.js';
import { StorageError } from '../../storage/storage-error.js';
import type { JobProgress, JobRecord } from '../../storage/storage.js';
import type { JobSpec } from './job-spec.js';
import { withLineLimit } from './line-limit.js';
import { callerOfJob, type JobControl, JobFailure, type JobWork } from './job-work.js';

/**
 * Each chunk is written in one transaction, which records it as committed (`next`) and commits only while this node holds
 * the job's lease (the fence): a node that lost the lease (paused, or its database slow, while another node took the job
 * over) writes nothing more, and the node holding it continues from the last recorded chunk. Features keep their ids
 * across runs (from the file, or derived from the position as the CLI derives them).
 */
export async function runImport(work: JobWork, job: JobRecord, spec: Extract<JobSpec, { kind: 'import' }>, control: JobControl): Promise<void> {
  const input = await openInput(work.files.inputPath(job.id));
  const format = spec.source.format ?? detectFormat(undefined, input.head);
  if (format === undefined) throw new JobFailure('The format of the input cannot be told from its first bytes: give source.format.');
  const { idProperty, lon, lat, wkt, layer } = spec.source;
  const options: ReaderOptions = { idProperty, lon, lat, wkt, layer };
  const progress: JobProgress = { next: job.next, written: job.written, failed: job.failed, bytes: job.bytes, total: input.size ?? 0 };
  let features: TransferFeature[] = [];
  let failed = 0;
  let index = progress.next;

  /** Writes the chunk ending before item `end`, with the progress it makes; false when the job must stop. */
  const commit = async (end: number): Promise<boolean> => {
    if (control.signal.aborted) return false;
    const next: JobProgress = { ...progress, next: end, written: progress.written + features.length, failed: progress.failed + failed, bytes: input.bytesRead() };
    const writes = features.length > 0;
    if (writes) {
      const caller = await callerOfJob(work, job);
      try {
        await work.writes.writeCollection({
          caller, spaceId: spec.target.id, body: { type: 'FeatureCollection', features },
          transactional: true, respond: false, addTags: spec.target.addTags ?? [], removeTags: [],
          onExists: 'replace', onNotExists: 'create', onConflict: 'error', prefixId: '', fence: control.fence(next),
        });
      } catch (error) {
        // Cancelled, or another node holds the job now and continues it from the last recorded chunk: this run ends quietly.
        if (error instanceof StorageError && error.failure === 'leaseLost') return false;
        if (error instanceof HubError && error.status < 500) {
          throw new JobFailure(`Items ${progress.next} to ${end - 1} of the input: ${error.message}`);
        }
        throw error;
      }
    }
    Object.assign(progress, next);
    features = [];
    failed = 0;
    return writes ? control.committed(progress) : control.record(progress);
  };

  try {
    const source = format === 'geojsonseq' || format === 'csv' ? withLineLimit(input.source, work.maxLine) : input.source;
    const read = await READERS[format]();
    for await (const item of read(source, { ...options, skip: progress.next })) {
      index++;
      if (item.error !== undefined) {
        if (spec.source.onError === 'STOP') throw new JobFailure(`${item.position}: ${item.error} (source.onError SKIP passes over bad records)`);
        failed++;
      } else {
        item.feature.id ??= `${input.fingerprint}-${index - 1}`;
        features.push(item.feature);
      }
      if (features.length >= work.chunk && !(await commit(index))) return;
    }
  } catch (error) {
    if (error instanceof InputError) throw new JobFailure(error.message);
    throw error;
  }
  if (!(await commit(index))) return;
  await control.record({ ...progress, bytes: progress.total }, { state: 'SUCCEEDED', lastError: null });
}
