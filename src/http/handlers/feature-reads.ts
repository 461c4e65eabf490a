// Handlers of the feature read routes: by id, one feature, search, iterate (also as files by Accept), count and statistics.
import { parseHandle } from '../query/iterate-handle.js';
import { hubError } from '../../core/errors.js';
import type { ReadOptions } from '../../hub/features/read-pipeline.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { clientGone, sendFeatureCollection, sendFeatureText, sendJsonRead } from '../reply/read-reply.js';
import { acceptedFileFormat, type FileFormat, linkHeader, sendFeatureFile } from '../reply/feature-formats.js';
import { authorFilter, featureFilter, readOptions as readParameters } from './read-parameters.js';
import { versionRefOf } from '../query/version-ref.js';
import type { VersionRef } from '../../hub/versions/space-versions.js';

/**
 * The read parameters of the request, and its signal that aborts when the client goes away. A GeoJSON sequence takes
 * plain texts (read-pipeline.ts), which it copies; the other file formats read each property of a text, so they scan it anyway.
 */
function readOptions(context: HandlerContext, format?: FileFormat): ReadOptions {
  return { ...readParameters(context), signal: clientGone(context.reply), ...(format === 'jsonseq' ? { plainTexts: true } : {}) };
}

export async function getFeaturesById(context: HandlerContext): Promise<unknown> {
  const ids = context.query.values('id').filter((id) => id !== '');
  if (ids.length === 0) throw hubError('missingFeatureIds');
  const result = await context.hub.features.getByIds(callerOf(context), context.params.spaceId, ids, readOptions(context), versionRefOf(context.query),
    { properties: authorFilter(context) });
  return sendFeatureCollection(context.request, context.reply, result);
}

/** One short statement: nothing worth cancelling, so no signal is set up for the most frequent read. */
export async function getFeature(context: HandlerContext): Promise<unknown> {
  const { spaceId, featureId } = context.params;
  const at = versionRefOf(context.query);
  if (at === '*') {
    const states = await context.hub.features.getByIds(callerOf(context), spaceId, [featureId], readOptions(context), at);
    return sendFeatureCollection(context.request, context.reply, states);
  }
  const feature = await context.hub.features.getOne(callerOf(context), spaceId, featureId, readParameters(context), at);
  return sendFeatureText(context.request, context.reply, feature.json, feature.etag, feature.cacheTTL);
}

export async function searchFeatures(context: HandlerContext): Promise<unknown> {
  const limit = context.query.limit();
  const format = acceptedFileFormat(context.request.headers.accept);
  const result = await context.hub.features.search(callerOf(context), context.params.spaceId, { ...featureFilter(context), limit }, readOptions(context, format),
    versionRefOf(context.query));
  if (format) return sendFeatureFile(context.reply, { format, pages: result.features, links: () => [], linksFirst: true });
  return sendFeatureCollection(context.request, context.reply, result);
}

/**
 * `handle` (or `nextPageToken`) as a previous page returned it; `0` starts over (API.md 5.7). A handle of a read at a
 * version goes on at that version; asking for another one with it is a 400.
 */
function handleOf(context: HandlerContext): { afterSeq: number; at: VersionRef } {
  const handle = context.query.first('handle') ?? context.query.first('nextPageToken');
  const position = parseHandle(handle);
  const asked = versionRefOf(context.query);
  if (position.version === undefined) return { afterSeq: position.afterSeq, at: asked };
  if (asked !== 'HEAD' && typeof asked !== 'object' && asked !== position.version) throw hubError('invalidHandle', { handle: (handle ?? '').slice(0, 40) });
  return { afterSeq: position.afterSeq, at: position.version };
}

/**
 * The `Link` header of an iterate page in a file format, whose body has no place for the handle: the same request with
 * the next page's handle, as a reference relative to the hub (the token stays out of it).
 */
function nextPageLinks(context: HandlerContext, handle: unknown): string[] {
  if (typeof handle !== 'string') return [];
  const [path, search = ''] = context.request.url.split('?');
  const parameters = new URLSearchParams(search);
  for (const name of ['handle', 'nextPageToken', 'access_token']) parameters.delete(name);
  parameters.set('handle', handle);
  return [linkHeader(`${path}?${parameters}`, 'next')];
}

export async function iterateFeatures(context: HandlerContext): Promise<unknown> {
  const limit = context.query.limit();
  const { afterSeq, at } = handleOf(context);
  const format = acceptedFileFormat(context.request.headers.accept);
  const result = await context.hub.features.iterate(callerOf(context), context.params.spaceId, featureFilter(context), afterSeq, limit, readOptions(context, format), at);
  if (format) return sendFeatureFile(context.reply, { format, pages: result.features, links: () => nextPageLinks(context, result.trailer().handle), linksFirst: false });
  return sendFeatureCollection(context.request, context.reply, result);
}

export async function countFeatures(context: HandlerContext): Promise<unknown> {
  const { count } = await context.hub.features.count(callerOf(context), context.params.spaceId, featureFilter(context), clientGone(context.reply),
    versionRefOf(context.query));
  return sendJsonRead(context.request, context.reply, { type: 'CountResponse', count, estimated: false });
}

export async function spaceStatistics(context: HandlerContext): Promise<unknown> {
  const { body } = await context.hub.statistics.statistics(callerOf(context), context.params.spaceId, versionRefOf(context.query));
  return sendJsonRead(context.request, context.reply, body);
}
