// Handlers of the jobs API (docs/jobs.md): create, list, read, status, actions, upload of the input, download of the output, delete.
import { bodyStream } from '../body/body-stream.js';
import { readSmallJsonObject } from '../body/json-body.js';
import type { JobOutput } from '../../hub/jobs/job-service.js';
import { callerOf, type HandlerContext } from '../request-context.js';

/** A job body is a source, a target and a description: larger ones are cut off with 413. */
const MAX_JOB_BODY = 64 * 1024;

const jobBody = (context: HandlerContext) => readSmallJsonObject(context.request.raw, context.maxBody, MAX_JOB_BODY, 'invalidJsonBody');

export async function createJob(context: HandlerContext): Promise<unknown> {
  const body = await jobBody(context);
  return context.reply.send(await context.hub.jobs.create(callerOf(context), body));
}

export async function listJobs(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache').send(await context.hub.jobs.list(callerOf(context)));
}

export async function getJob(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache').send(await context.hub.jobs.get(callerOf(context), context.params.jobId));
}

export async function getJobStatus(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache').send(await context.hub.jobs.status(callerOf(context), context.params.jobId));
}

export async function patchJobStatus(context: HandlerContext): Promise<unknown> {
  const body = await jobBody(context);
  return context.reply.send(await context.hub.jobs.act(callerOf(context), context.params.jobId, body));
}

/** The body goes to disk as it arrives, up to HUB_JOBS_MAX_INPUT (not HUB_MAX_BODY, which bounds bodies held in memory). */
export async function uploadJobInput(context: HandlerContext): Promise<unknown> {
  const { jobs } = context.hub;
  return context.reply.send(await jobs.upload(callerOf(context), context.params.jobId, () => bodyStream(context.request.raw, jobs.maxInput, false)));
}

const sendFile = (context: HandlerContext, output: JobOutput) => context.reply.header('content-type', output.contentType)
  .header('content-length', String(output.bytes)).header('content-disposition', `attachment; filename="${output.fileName}"`)
  .header('cache-control', 'no-cache').send(output.stream);

/** The file of an export, or the list of a partitioned export's files. */
export async function downloadJobOutput(context: HandlerContext): Promise<unknown> {
  const output = await context.hub.jobs.output(callerOf(context), context.params.jobId);
  return 'outputs' in output ? context.reply.header('cache-control', 'no-cache').send(output) : sendFile(context, output);
}

export async function downloadJobOutputPart(context: HandlerContext): Promise<unknown> {
  return sendFile(context, await context.hub.jobs.outputPart(callerOf(context), context.params.jobId, context.params.name));
}

export async function deleteJob(context: HandlerContext): Promise<unknown> {
  return context.reply.send(await context.hub.jobs.delete(callerOf(context), context.params.jobId));
}
