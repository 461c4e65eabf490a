// Handlers of a space's history (ADR 002, API.md 12): changesets by range or version, DELETE /changesets, and tags.
import { Readable } from 'node:stream';
import { hubError } from '../../core/errors.js';
import { MAX_TILE_LEVEL, type TileScheme } from '../../geo/tile-schemes.js';
import { minTileLevel } from '../../geo/tile-cover.js';
import { type ChangedTilesQuery, DEFAULT_CHANGESET_LIMIT, type ChangesetQuery } from '../../hub/versions/history-service.js';
import { readSmallJsonObject } from '../body/json-body.js';
import { pointRefOf } from '../query/version-ref.js';
import { started } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';

/** A tag body is a few members: larger ones are cut off with 413. */
const MAX_TAG_BODY = 16 * 1024;

/** A version number parameter; undefined when absent. */
function versionParameter(context: HandlerContext, name: string): number | undefined {
  const value = context.query.first(name);
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw hubError('invalidParameter', { name, problem: 'expected a version number (an integer of at least 0)' });
  return Number(value);
}

/** A time as ms since the epoch or an ISO 8601 date; undefined when absent. */
function timeParameter(context: HandlerContext, name: string): number | undefined {
  const value = context.query.first(name);
  if (value === undefined || value === '') return undefined;
  const time = /^\d{1,15}$/.test(value) ? Number(value) : /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time)) throw hubError('invalidParameter', { name, problem: 'expected ms since the epoch or an ISO 8601 date such as 2024-01-31T10:00:00Z' });
  return time;
}

/** The range as startVersion/endVersion (both inclusive) or versionRef=a..b (after a, up to b), not both. */
function changesetQuery(context: HandlerContext): ChangesetQuery {
  const startVersion = versionParameter(context, 'startVersion');
  const endVersion = versionParameter(context, 'endVersion');
  const ref = context.query.first('versionRef');
  const common = {
    author: context.query.first('author') || undefined,
    startTime: timeParameter(context, 'startTime'),
    endTime: timeParameter(context, 'endTime'),
    limit: context.query.limit(DEFAULT_CHANGESET_LIMIT),
    pageToken: context.query.first('pageToken') || undefined,
  };
  if (ref === undefined || ref === '') return { ...common, start: startVersion, end: endVersion };
  if (startVersion !== undefined || endVersion !== undefined) {
    throw hubError('invalidParameter', { name: 'versionRef', problem: 'give either versionRef=a..b or startVersion/endVersion, not both' });
  }
  const ends = ref.split('..');
  if (ends.length !== 2 || ends[0] === '' || ends[1] === '') {
    throw hubError('invalidParameter', { name: 'versionRef', problem: 'expected a range a..b (after version a, up to version b; numbers, HEAD or tag ids)' });
  }
  return { ...common, start: pointRefOf('versionRef', ends[0]), startExclusive: true, end: pointRefOf('versionRef', ends[1]) };
}

/** The first chunk is made before the status line: a refusal or a range without versions is still an error answer. */
async function sendJsonStream(context: HandlerContext, text: AsyncIterable<string>): Promise<unknown> {
  const chunks = await started(text);
  return context.reply.type('application/json').header('cache-control', 'no-cache').send(Readable.from(chunks, { objectMode: false }));
}

export async function getChangesets(context: HandlerContext): Promise<unknown> {
  const query = changesetQuery(context);
  return sendJsonStream(context, await context.hub.history.changesets(callerOf(context), context.params.spaceId, query));
}

export async function getChangeset(context: HandlerContext): Promise<unknown> {
  const version = pointRefOf('version', context.params.version);
  const limit = context.query.limit(DEFAULT_CHANGESET_LIMIT);
  const pageToken = context.query.first('pageToken') || undefined;
  return sendJsonStream(context, await context.hub.history.changeset(callerOf(context), context.params.spaceId, version, limit, pageToken));
}

const TILE_TYPES = ['web', 'quadkey', 'here', 'tms'] as const;

/** `startVersion` (required), `endVersion`, `type` and `level=z` or `level=a..b` (docs/cache-and-changed-tiles.md). */
function changedTilesQuery(context: HandlerContext): ChangedTilesQuery {
  const start = versionParameter(context, 'startVersion');
  if (start === undefined) throw hubError('invalidParameter', { name: 'startVersion', problem: 'expected the version the tiles changed since (a number)' });
  const type = context.query.first('type');
  if (!TILE_TYPES.some((name) => name === type)) throw hubError('invalidParameter', { name: 'type', problem: `expected one of ${TILE_TYPES.join(', ')}` });
  const scheme = type as TileScheme;
  const lowest = minTileLevel(scheme);
  const match = /^(\d{1,2})(?:\.\.(\d{1,2}))?$/.exec(context.query.first('level') ?? '');
  const minLevel = Number(match?.[1]);
  const maxLevel = match?.[2] === undefined ? minLevel : Number(match[2]);
  if (!match || minLevel < lowest || maxLevel > MAX_TILE_LEVEL || minLevel > maxLevel) {
    throw hubError('invalidParameter', { name: 'level', problem: `expected a level z or a range a..b of levels from ${lowest} to ${MAX_TILE_LEVEL} (a at most b)` });
  }
  const end = versionParameter(context, 'endVersion');
  return { start, end, scheme, minLevel, maxLevel, hereEncoding: context.hereTileEncoding };
}

export async function getChangedTiles(context: HandlerContext): Promise<unknown> {
  const query = changedTilesQuery(context);
  return sendJsonStream(context, await context.hub.history.changedTiles(callerOf(context), context.params.spaceId, query));
}

/** `version=lt=N`, N at least 1, as the reference hub takes it: the versions before N are removed. */
export async function deleteChangesets(context: HandlerContext): Promise<unknown> {
  const given = context.query.first('version');
  const match = given === undefined ? null : /^lt=(\d{1,15})$/.exec(given);
  if (!match || Number(match[1]) < 1) {
    throw hubError('invalidParameter', { name: 'version', problem: 'expected lt=N with N a version number of at least 1: the versions before N are removed' });
  }
  await context.hub.history.deleteBefore(callerOf(context), context.params.spaceId, Number(match[1]));
  return context.reply.code(204).send();
}

const tagBody = (context: HandlerContext) =>
  readSmallJsonObject(context.request.raw, context.maxBody, MAX_TAG_BODY, 'invalidJsonBody');

export async function listTags(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache').send(await context.hub.tags.list(callerOf(context), context.params.spaceId));
}

export async function createTag(context: HandlerContext): Promise<unknown> {
  const body = await tagBody(context);
  return context.reply.send(await context.hub.tags.create(callerOf(context), context.params.spaceId, body));
}

export async function getTag(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache').send(await context.hub.tags.get(callerOf(context), context.params.spaceId, context.params.tagId));
}

export async function patchTag(context: HandlerContext): Promise<unknown> {
  const body = await tagBody(context);
  return context.reply.send(await context.hub.tags.update(callerOf(context), context.params.spaceId, context.params.tagId, body));
}

export async function deleteTag(context: HandlerContext): Promise<unknown> {
  return context.reply.send(await context.hub.tags.delete(callerOf(context), context.params.spaceId, context.params.tagId));
}
