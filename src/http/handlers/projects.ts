// Handlers of the Project API (API.md 10): list, create, read, replace, patch and delete projects.
import { hubError } from '../../core/errors.js';
import type { ProjectListQuery } from '../../hub/projects/project-service.js';
import { MAX_PROJECT_BYTES } from '../../hub/projects/project-fields.js';
import { readSmallJsonObject } from '../body/json-body.js';
import { projectArrayBody, projectPageBody } from '../reply/project-list.js';
import { sendTextRead, started } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';

/** Projects on one page of `paginate=true` when `limit` is absent, and the most one page may hold. */
const DEFAULT_PAGE_LIMIT = 100;
const MAX_PAGE_LIMIT = 1000;

/** The refusals name the rule, never the value: a client may have put anything there, its token included. */
function integerParameter(context: HandlerContext, name: string, fallback: number, min: number, max: number): number {
  const value = context.query.first(name);
  if (value === undefined || value === '') return fallback;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed >= min && parsed <= max)) throw hubError('invalidParameter', { name, problem: `expected an integer from ${min} to ${max}` });
  return parsed;
}

/** Exactly `true` or `false`, as booleans are on /hub (API.md 1.2); anything else is refused, as a typo would list something else. */
function booleanParameter(context: HandlerContext, name: string): boolean {
  const value = context.query.first(name);
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw hubError('invalidParameter', { name, problem: 'expected true or false' });
}

/** `limit` and `handle` apply with `paginate=true` only, but a bad value is refused either way. */
function listQuery(context: HandlerContext): { paginate: boolean; query: ProjectListQuery } {
  const paginate = booleanParameter(context, 'paginate');
  const published = booleanParameter(context, 'published');
  const limit = integerParameter(context, 'limit', DEFAULT_PAGE_LIMIT, 1, MAX_PAGE_LIMIT);
  const after = integerParameter(context, 'handle', 0, 0, Number.MAX_SAFE_INTEGER);
  return { paginate, query: paginate ? { published, after, limit } : { published, after: 0 } };
}

/**
 * A project body, cut off with 413 past MAX_PROJECT_BYTES (or a lower HUB_MAX_BODY): a JSON text larger than that
 * could not be stored anyway.
 */
function projectBody(context: HandlerContext): Promise<Record<string, unknown>> {
  return readSmallJsonObject(context.request.raw, context.maxBody, MAX_PROJECT_BYTES, 'invalidJsonProject');
}

/** The first page is read before the status line, so a storage failure is still an error answer. */
export async function listProjects(context: HandlerContext): Promise<unknown> {
  const { paginate, query } = listQuery(context);
  const pages = await started(context.hub.projects.list(callerOf(context), query));
  const body = paginate ? projectPageBody(pages, query.after) : projectArrayBody(pages);
  return context.reply.type('application/json').header('cache-control', 'no-cache').send(body);
}

export async function createProject(context: HandlerContext): Promise<unknown> {
  const project = await context.hub.projects.create(callerOf(context), await projectBody(context));
  return context.reply.type('application/json').send(project);
}

export async function getProject(context: HandlerContext): Promise<unknown> {
  const project = await context.hub.projects.get(callerOf(context), context.params.projectId);
  return sendTextRead(context.request, context.reply, project, 'application/json');
}

export async function replaceProject(context: HandlerContext): Promise<unknown> {
  const project = await context.hub.projects.replace(callerOf(context), context.params.projectId, await projectBody(context));
  return context.reply.type('application/json').send(project);
}

export async function patchProject(context: HandlerContext): Promise<unknown> {
  const project = await context.hub.projects.patch(callerOf(context), context.params.projectId, await projectBody(context));
  return context.reply.type('application/json').send(project);
}

/** 204: a 2xx without a body (API.md 1.9, 10). */
export async function deleteProject(context: HandlerContext): Promise<unknown> {
  await context.hub.projects.delete(callerOf(context), context.params.projectId);
  return context.reply.code(204).send();
}
