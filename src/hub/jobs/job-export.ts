// An export job: pages through the space on the hub's read path in insertion order and writes the features with the CLI's format writers.
import { finished } from 'node:stream/promises';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { JobProgress, JobRecord } from '../../storage/storage.js';
import { plain } from '../../transfer/export-run.js';
import { WRITERS } from '../../transfer/formats/format-registry.js';
import type { TransferFeature } from '../../transfer/transfer-feature.js';
import type { JobSpec } from './job-spec.js';
import { callerOfJob, type JobControl, type JobWork } from './job-work.js';

/**
 * Every page is read with the job's caller decided again (a deleted token or lost right stops it). An export that
 * stopped (a restart, CANCEL then RESUME) writes its file again from the start: the file is the output only once complete.
 */
export async function runExport(work: JobWork, job: JobRecord, spec: Extract<JobSpec, { kind: 'export' }>, control: JobControl): Promise<void> {
  const { source } = spec;
  const filter: Omit<FeatureQuery, 'limit' | 'afterSeq'> = {};
  if (source.tags) filter.tags = source.tags.map((tag) => [tag]);
  if (source.bbox) filter.spatial = { kind: 'box', box: source.bbox };
  const first = await work.features.reader(await callerOfJob(work, job), source.id);
  filter.version = await work.features.versionOf(first, source.version ?? 'HEAD');
  const progress: JobProgress = { next: 0, written: 0, failed: 0, bytes: 0, total: await first.countUpTo({ ...filter, limit: Number.MAX_SAFE_INTEGER }) };
  const out = await work.files.openOutput(job.id);
  const writer = WRITERS[spec.target.format](out);
  try {
    for (let read = work.chunk; read === work.chunk;) {
      if (control.signal.aborted) return;
      const reader = await work.features.reader(await callerOfJob(work, job), source.id);
      read = 0;
      for await (const rows of reader.query({ ...filter, afterSeq: progress.next, limit: work.chunk }, control.signal)) {
        for (const row of rows) {
          await writer.write(plain(JSON.parse(row.json) as TransferFeature));
          progress.next = row.seq;
        }
        read += rows.length;
      }
      progress.written += read;
      if (!(await control.record(progress))) return;
    }
    await writer.end();
    out.end();
    await finished(out);
  } finally {
    out.destroy();
  }
  await work.files.finishOutput(job.id);
  await control.record({ ...progress, total: progress.written }, { state: 'SUCCEEDED', lastError: null });
}
