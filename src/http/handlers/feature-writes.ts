// Handlers of the feature write routes: PUT/POST of collections, single-feature PUT/PATCH/DELETE, and deletes.
import { hubError } from '../../core/errors.js';
import { ON_CONFLICT, ON_EXISTS, ON_NOT_EXISTS } from '../../hub/writes/write-entries.js';
import type { WriteOptions, WriteResult } from '../../hub/writes/write-plan.js';
import { splitTagParameter } from '../../hub/tags.js';
import { bodyStream } from '../body/body-stream.js';
import { readFeatureBody } from '../body/feature-body.js';
import { readJsonObject } from '../body/json-body.js';
import { checkListLength } from '../query/raw-query.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { writeResultBody } from '../reply/feature-collection.js';

function enumParameter<T extends string>(context: HandlerContext, name: string, allowed: readonly T[], fallback: T): T {
  const value = context.query.first(name);
  if (value === undefined || value === '') return fallback;
  if (allowed.includes(value as T)) return value as T;
  throw hubError('invalidParameter', { name, problem: `"${value}" is not one of ${allowed.join(', ')}` });
}

/** `Accept: application/x-empty` asks for no body (API.md 1.4). */
const wantsNoBody = (context: HandlerContext): boolean => context.request.headers.accept === 'application/x-empty';

function writeOptions(context: HandlerContext): WriteOptions & { prefixId: string } {
  return {
    transactional: context.query.boolean('transactional', true),
    respond: !wantsNoBody(context),
    addTags: splitTagParameter('addTags', context.query.values('addTags')),
    removeTags: splitTagParameter('removeTags', context.query.values('removeTags')),
    prefixId: context.query.first('prefixId') ?? '',
  };
}

function sendWriteResult(context: HandlerContext, result: WriteResult): unknown {
  if (wantsNoBody(context)) return context.reply.code(204).send();
  return context.reply.type('application/geo+json').send(writeResultBody(result));
}

async function writeCollection(context: HandlerContext, method: 'PUT' | 'POST'): Promise<unknown> {
  const options = writeOptions(context);
  const rules = method === 'PUT'
    ? { onExists: 'replace' as const, onNotExists: 'create' as const, onConflict: 'error' as const }
    : {
        onExists: enumParameter(context, 'e', ON_EXISTS, 'patch'),
        onNotExists: enumParameter(context, 'ne', ON_NOT_EXISTS, 'create'),
        onConflict: enumParameter(context, 'cr', ON_CONFLICT, 'error'),
      };
  const body = await readFeatureBody(bodyStream(context.request.raw, context.maxBody));
  const result = await context.hub.writes.writeCollection({ caller: callerOf(context), spaceId: context.params.spaceId, body, ...rules, ...options });
  return sendWriteResult(context, result);
}

export const putFeatures = (context: HandlerContext) => writeCollection(context, 'PUT');
export const postFeatures = (context: HandlerContext) => writeCollection(context, 'POST');

async function writeOne(context: HandlerContext, mode: 'put' | 'patch'): Promise<unknown> {
  const body = await readJsonObject(bodyStream(context.request.raw, context.maxBody), 'invalidJsonFeatures');
  const { spaceId, featureId } = context.params;
  const json = await context.hub.writes.writeOne({ caller: callerOf(context), spaceId, featureId, body, ...writeOptions(context) }, mode);
  return context.reply.type('application/geo+json').send(json);
}

export const putFeature = (context: HandlerContext) => writeOne(context, 'put');
export const patchFeature = (context: HandlerContext) => writeOne(context, 'patch');

export async function deleteFeature(context: HandlerContext): Promise<unknown> {
  await context.hub.writes.deleteOne(callerOf(context), context.params.spaceId, context.params.featureId);
  return context.reply.code(204).send();
}

/** JSON is sent only when the client asks for it (API.md 4.4). */
function wantsJson(context: HandlerContext): boolean {
  const accept = context.request.headers.accept ?? '';
  return accept.includes('application/json') || accept.includes('application/geo+json');
}

/** By ids when `id` is given (ids win over tags, API.md 1.9), else by tag expression; `tags=*` deletes all. */
export async function deleteFeatures(context: HandlerContext): Promise<unknown> {
  const { spaceId } = context.params;
  // Only here a decoded comma separates ids too: the Python client sends `id=ITA%2CBRA` (API.md 1.2).
  const ids = context.query.values('id').flatMap((id) => id.split(',')).filter((id) => id !== '');
  checkListLength('id', ids.length);
  if (ids.length > 0) {
    const result = await context.hub.writes.deleteByIds(callerOf(context), spaceId, ids);
    return wantsJson(context) ? context.reply.type('application/geo+json').send(writeResultBody(result)) : context.reply.code(204).send();
  }
  const tags = context.query.tags();
  if (!context.query.isDeleteAll() && tags.length === 0) throw hubError('missingDeleteSelector');
  const count = await context.hub.writes.deleteMatching(callerOf(context), spaceId, context.query.isDeleteAll() ? {} : { tags });
  return wantsJson(context)
    ? context.reply.type('application/geo+json').send({ type: 'FeatureCollection', features: [], count })
    : context.reply.code(204).send();
}
