// Sends read answers with their ETag, the freshness rule of API.md 1.9, and 304 for a matching If-None-Match.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureCollectionStream } from '../../hub/features/read-pipeline.js';
import { featureCollectionBody, featureCollectionBuffer } from './feature-collection.js';

const GEOJSON = 'application/geo+json';

/**
 * Aborts when the connection closes before the answer has been sent completely: the client went away,
 * and the query working for it is cancelled. A response that finished also closes, but then nothing aborts.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Compares ignoring a weak `W/` prefix and the quotes (API.md 7); `*` matches any tag. */
function matchesIfNoneMatch(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

function cacheControl(cacheTTL: number | undefined): string {
  return cacheTTL ? `private, max-age=${cacheTTL}` : 'no-cache';
}

/** Sets the validators and answers 304 when the client already has this version; returns whether it did. */
function notModified(request: FastifyRequest, reply: FastifyReply, etag: string, cacheTTL?: number): boolean {
  reply.header('etag', etag).header('cache-control', cacheControl(cacheTTL));
  if (!matchesIfNoneMatch(request, etag)) return false;
  reply.code(304).send();
  return true;
}

/**
 * Runs the query up to its first page before the status line goes out, so that a failing query
 * (unknown space, storage error or timeout) becomes an error answer instead of a cut-off body.
 */
export async function started<T>(pages: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = pages[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* all(): AsyncIterable<T> {
    try {
      if (first.done) return;
      yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    } finally {
      // A client that goes away mid-body stops the query too.
      await iterator.return?.();
    }
  }
  return all();
}

/**
 * Answers whose pages come to at most this many characters go out as one buffer with a Content-Length, in one
 * write; larger ones stream. A stream costs a write per piece, which made small reads (a tile, a small box) pay
 * several system calls each.
 */
const ONE_WRITE_ANSWER = 64 * 1024;

/**
 * A matching If-None-Match costs no query: the rows are only fetched for a 200. Pages are read before the
 * status line goes out until they end or pass ONE_WRITE_ANSWER, so a failing query still becomes an error answer.
 */
export async function sendFeatureCollection(request: FastifyRequest, reply: FastifyReply, result: FeatureCollectionStream): Promise<FastifyReply> {
  if (notModified(request, reply, result.etag, result.cacheTTL)) return reply;
  const iterator = result.features[Symbol.asyncIterator]();
  const head: Array<string | Buffer> = [];
  let size = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return reply.type(GEOJSON).send(await featureCollectionBuffer(result, head));
    head.push(next.value);
    size += next.value.length;
    if (size > ONE_WRITE_ANSWER) break;
  }
  async function* rest(): AsyncIterable<string | Buffer> {
    try {
      yield* head;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    } finally {
      // A client that goes away mid-body stops the query too.
      await iterator.return?.();
    }
  }
  return reply.type(GEOJSON).send(featureCollectionBody({ ...result, features: rest() }));
}

export function sendFeatureText(request: FastifyRequest, reply: FastifyReply, json: string, etag: string, cacheTTL?: number): FastifyReply {
  if (notModified(request, reply, etag, cacheTTL)) return reply;
  return reply.type(GEOJSON).send(json);
}

/** A vector tile; a tile without features has no body, hence 204 (API.md 1.9: a 200 always carries a body). */
export function sendVectorTile(request: FastifyRequest, reply: FastifyReply, answer: { etag: string; cacheTTL?: number; tile: Buffer }): FastifyReply {
  if (notModified(request, reply, answer.etag, answer.cacheTTL)) return reply;
  if (answer.tile.length === 0) return reply.code(204).send();
  return reply.type('application/vnd.mapbox-vector-tile').send(answer.tile);
}

export function sendJsonRead(request: FastifyRequest, reply: FastifyReply, body: object, etag: string): FastifyReply {
  if (notModified(request, reply, etag)) return reply;
  return reply.type('application/json').send(body);
}

/**
 * A text answer (a stored project, a JSON document or an HTML page) whose ETag is a digest of the text itself, so it
 * changes with every write.
 */
export function sendTextRead(request: FastifyRequest, reply: FastifyReply, text: string, type: string): FastifyReply {
  const etag = `"${createHash('sha1').update(text).digest('hex').slice(0, 32)}"`;
  if (notModified(request, reply, etag)) return reply;
  return reply.type(type).send(text);
}
