// Sends read answers with their ETag (a hash of the body, API.md 7), the freshness rule of API.md 1.9, and 304 for a matching If-None-Match.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyEtag, bodyHasher } from '../../core/body-etag.js';
import type { FeatureCollectionStream } from '../../hub/features/read-pipeline.js';
import { etagMemory } from './etag-memory.js';
import { members, openCollection } from './feature-collection.js';
import { encodedWhole } from './whole-compression.js';

const GEOJSON = 'application/geo+json';

/**
 * Aborts when the connection closes before the answer has been sent completely: the client went away,
 * and the query working for it is cancelled. A response that finished also closes, but then nothing aborts.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  // Made late (clientGoneOnUse): the connection may have closed already.
  if (reply.raw.destroyed && !reply.raw.writableFinished) controller.abort();
  else {
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
  }
  return controller.signal;
}

/**
 * Read options whose `signal` (clientGone) is made when the read first asks for it: an answer from the answer cache
 * reads nothing and never does, and a signal and its listener were a tenth of such an answer's cost. `signal` is an
 * own, enumerable accessor, so a spread copy of the options (spatial-service.ts) takes the signal along.
 *
 * Every instance gets the same getter in the same order and so shares one hidden class. A getter written in an object
 * literal is a new closure per object, and V8 gives each such object a map of its own; maps are allocated in the old
 * generation, which a scavenge takes as live, so the closure, the reply it held and with it everything of the request
 * outlived every scavenge until a full GC: about 7 KB per small bbox read, promoted (docs/decisions.md, "What
 * survives a scavenge"). A copy made by spreading an object and then given the accessor has a map of its own too.
 */
class SignalOnUse {
  declare readonly signal: AbortSignal;
  readonly #reply: FastifyReply;
  #signal: AbortSignal | undefined;

  constructor(reply: FastifyReply) {
    this.#reply = reply;
    Object.defineProperty(this, 'signal', SIGNAL_ON_USE);
  }

  static signalOf(options: SignalOnUse): AbortSignal {
    return (options.#signal ??= clientGone(options.#reply));
  }
}

const SIGNAL_ON_USE: PropertyDescriptor = { enumerable: true, get(this: SignalOnUse) { return SignalOnUse.signalOf(this); } };

/** The options with a `signal` (clientGone) made when the read first asks for it (SignalOnUse); they hold no signal of their own. */
export function clientGoneOnUse<T extends object>(options: T, reply: FastifyReply): T & { readonly signal: AbortSignal } {
  return Object.assign(new SignalOnUse(reply), options);
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
 * Collections up to this many bytes are read whole before the status line goes out, hashed for their ETag and sent in
 * one write with a Content-Length. Larger ones stream, tagged with their answer key: the tag must precede a body that
 * is not held. This bounds what one read holds (twice this, while the buffer is joined); docs/decisions.md, "ETags".
 */
const HASHED_ANSWER = 4 * 1024 * 1024;

/**
 * An ETag as long as any: it sizes a hashed answer's last members before its own ETag is known, so that the answer is
 * encoded once into the buffer that is sent. Joining encoded chunks copied a 10,000-feature answer (about 2.7 MB) a
 * second time, into memory of its own, whose growth outside V8's heap is what starts its full collections
 * (docs/decisions.md, "Large boxes on PostgreSQL: the sort in memory, the text outside V8's heap").
 */
const ANY_ETAG = bodyEtag('');

/** What a collection answer is besides its features: its media type and the members before `features`. */
export interface CollectionForm {
  type: string;
  head?: Record<string, unknown>;
}

const GEOJSON_FORM: CollectionForm = { type: GEOJSON };

/** The last members of a collection and its closing brace. */
const closing = (tail: Record<string, unknown>) => Buffer.from(`${members(tail)}}`);

/**
 * The ETag is a hash of the body as sent without its own `etag` member and the `untagged` ones (OGC's `timeStamp`,
 * which says when, not what), all of which come last. A matching If-None-Match costs no query when this node remembers
 * the tag of the same answer key; otherwise the answer is produced, and a match still saves sending it. An answer from
 * the answer cache goes out as its bytes; one made whole here is offered to it (`keep`), a streamed one is not.
 */
export async function sendFeatureCollection(request: FastifyRequest, reply: FastifyReply, result: FeatureCollectionStream,
  untagged: () => Record<string, unknown> = () => ({}), form: CollectionForm = GEOJSON_FORM): Promise<FastifyReply> {
  if (result.cached) {
    const { body, etag, encoded: known } = result.cached;
    if (notModified(request, reply, etag, result.cacheTTL)) return reply;
    const encoded = encodedWhole(request, reply.type(form.type), body, known);
    if (encoded !== undefined && encoded !== known) result.keepEncoded?.(encoded);
    return reply.send(encoded?.body ?? body);
  }
  const remembered = request.headers['if-none-match'] ? etagMemory.get(result.key) : undefined;
  if (remembered !== undefined && notModified(request, reply, remembered, result.cacheTTL)) return reply;
  const body = openCollection(result.features, result.trailer, form.head)[Symbol.asyncIterator]();
  const head: (string | Buffer)[] = [];
  let size = 0;
  for (let next = await body.next(); !next.done; next = await body.next()) {
    head.push(next.value);
    size += typeof next.value === 'string' ? Buffer.byteLength(next.value) : next.value.length;
    if (size > HASHED_ANSWER) return streamed(request, reply, result, head, body, untagged, form.type);
  }
  // Every ETag has the same length, so the last members' length is known before the hash is.
  const last = untagged();
  const whole = Buffer.allocUnsafe(size + closing({ ...last, etag: ANY_ETAG }).length);
  let offset = 0;
  for (const chunk of head) offset += typeof chunk === 'string' ? whole.write(chunk, offset) : chunk.copy(whole, offset);
  const hasher = bodyHasher();
  hasher.update(whole.subarray(0, size));
  hasher.update('}');
  const etag = hasher.etag();
  etagMemory.set(result.key, etag);
  closing({ ...last, etag }).copy(whole, size);
  result.keep?.({ body: whole, etag });
  if (notModified(request, reply, etag, result.cacheTTL)) return reply;
  return reply.type(form.type).send(whole);
}

/** A collection past HASHED_ANSWER: its first chunks are in `head`, the rest still in `body`. */
async function streamed(request: FastifyRequest, reply: FastifyReply, result: FeatureCollectionStream, head: (string | Buffer)[],
  body: AsyncIterator<string | Buffer>, untagged: () => Record<string, unknown>, type: string): Promise<FastifyReply> {
  const etag = `"${result.key}"`;
  etagMemory.set(result.key, etag);
  if (notModified(request, reply, etag, result.cacheTTL)) {
    await body.return?.();
    return reply;
  }
  async function* rest(): AsyncIterable<Buffer | string> {
    try {
      // Each chunk is let go once written.
      for (let chunk = head.shift(); chunk !== undefined; chunk = head.shift()) yield chunk;
      for (let next = await body.next(); !next.done; next = await body.next()) yield next.value;
      yield closing({ ...untagged(), etag });
    } finally {
      // A client that goes away mid-body stops the query too.
      await body.return?.();
    }
  }
  return reply.type(type).send(Readable.from(rest(), { objectMode: false }));
}

export function sendFeatureText(request: FastifyRequest, reply: FastifyReply, json: string, etag: string, cacheTTL?: number, type = GEOJSON): FastifyReply {
  if (notModified(request, reply, etag, cacheTTL)) return reply;
  return reply.type(type).send(json);
}

/** A vector tile; a tile without features has no body, hence 204 (API.md 1.9: a 200 always carries a body). */
export function sendVectorTile(request: FastifyRequest, reply: FastifyReply, answer: { etag: string; cacheTTL?: number; tile: Buffer }): FastifyReply {
  if (notModified(request, reply, answer.etag, answer.cacheTTL)) return reply;
  if (answer.tile.length === 0) return reply.code(204).send();
  return reply.type('application/vnd.mapbox-vector-tile').send(answer.tile);
}

/** A JSON object answer that ends with its own `etag`: the hash of the body as sent without that member (API.md 7). */
export function sendJsonRead(request: FastifyRequest, reply: FastifyReply, body: { type: string } & Record<string, unknown>): FastifyReply {
  const text = JSON.stringify(body);
  const etag = bodyEtag(text);
  if (notModified(request, reply, etag)) return reply;
  return reply.type('application/json').send(`${text.slice(0, -1)}${members({ etag })}}`);
}

/** A text answer (a stored project, a JSON document or an HTML page) tagged with a hash of the text itself. */
export function sendTextRead(request: FastifyRequest, reply: FastifyReply, text: string, type: string): FastifyReply {
  const etag = bodyEtag(text);
  if (notModified(request, reply, etag)) return reply;
  return reply.type(type).send(text);
}
