// An export job: pages through the space on the hub's read path in insertion order and writes the features with the CLI's format writers.
import { finished } from 'node:stream/promises';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { JobProgress, JobRecord } from '../../storage/storage.js';
import type { Writable } from 'node:stream';
import { OUTPUT_FILES, WRITERS } from '../../transfer/formats/format-registry.js';
import { writeStoredFeature } from '../../transfer/formats/plain-feature-text.js';
import type { FormatWriter } from '../../transfer/transfer-feature.js';
import type { JobSpec } from './job-spec.js';
import { callerOfJob, type JobControl, JobFailure, type JobWork } from './job-work.js';

/** The most files a partitioned export writes: a folder of millions of files would help no one download them. */
export const MAX_PARTS = 10_000;

/** The name of the n-th file (from 1) of a partitioned export: they sort in their order. */
export const partName = (n: number, extension: string) => `part-${String(n).padStart(5, '0')}.${extension}`;

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
  const { format, maxFeaturesPerFile: perFile } = spec.target;
  if (perFile !== undefined && Math.ceil(progress.total / perFile) > MAX_PARTS) {
    throw new JobFailure(`The export would write ${Math.ceil(progress.total / perFile)} files of at most ${perFile} features; the most is ${MAX_PARTS}: raise target.maxFeaturesPerFile.`);
  }
  if (perFile !== undefined) await work.files.resetParts(job.id);
  let parts = 0;
  let inPart = 0;
  const open = async (): Promise<{ out: Writable; writer: FormatWriter }> => {
    parts++;
    inPart = 0;
    const out = perFile === undefined ? await work.files.openOutput(job.id) : await work.files.openPart(job.id, partName(parts, OUTPUT_FILES[format].extension));
    return { out, writer: (await WRITERS[format]())(out, { rowGroupSize: spec.target.rowGroupSize }) };
  };
  const close = async ({ out, writer }: { out: Writable; writer: FormatWriter }) => {
    await writer.end();
    out.end();
    await finished(out);
  };
  let current = await open();
  try {
    for (let read = work.chunk; read === work.chunk;) {
      if (control.signal.aborted) return;
      const reader = await work.features.reader(await callerOfJob(work, job), source.id);
      read = 0;
      for await (const rows of reader.query({ ...filter, afterSeq: progress.next, limit: work.chunk }, control.signal)) {
        for (const row of rows) {
          if (inPart === perFile) {
            await close(current);
            current = await open();
          }
          const text = Buffer.from(row.json);
          await writeStoredFeature(current.writer, text, 0, text.length);
          inPart++;
          progress.next = row.seq;
        }
        read += rows.length;
      }
      progress.written += read;
      if (!(await control.record(progress))) return;
    }
    await close(current);
  } finally {
    current.writer.release();
    current.out.destroy();
  }
  if (perFile === undefined) await work.files.finishOutput(job.id);
  else await work.files.finishParts(job.id);
  await control.record({ ...progress, total: progress.written }, { state: 'SUCCEEDED', lastError: null });
}
