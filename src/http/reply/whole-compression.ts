// Compresses small whole answers in one call, before @fastify/compress would wrap them in a compression stream.
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EncodedBody } from '../../hub/features/answer-cache.js';
import { deflateSync, gzipSync } from 'node:zlib';

/**
 * @fastify/compress turns every answer it compresses into a stream (its own, a zlib stream and a pipe), also one it
 * holds whole: for a cached 3.5 KB tile that cost the hub about 0.7 ms of CPU, three times the rest of the request,
 * where compressing the same bytes in one call takes 75 µs (docs/decisions.md, "Requests"). Answers up to this size
 * are compressed here in one synchronous call (about 1.2 ms at 64 KiB); larger ones and streams stay with the plugin,
 * whose zlib stream works off the event loop.
 */
const WHOLE_LIMIT = 64 * 1024;

/** The plugin's threshold: smaller answers go out as they are. */
const THRESHOLD = 1024;

/** The types compressed: given to the plugin as its `customTypes` too (its default, `defaultCompressibleTypes`), so both decide alike. */
export const COMPRESSIBLE_TYPES = /^text\/(?!event-stream)|(?:\+|\/)json(?:;|$)|(?:\+|\/)text(?:;|$)|(?:\+|\/)xml(?:;|$)|octet-stream(?:;|$)/u;

export const COMPRESSION_ENCODINGS: Array<'gzip' | 'deflate'> = ['gzip', 'deflate'];

/** The plugin's choice for this Accept-Encoding (`*` and `x-gzip` read as gzip), so both agree on every request. */
function chosenEncoding(header: string | undefined): string | null {
  if (header === undefined) return null;
  return negotiate(header.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), COMPRESSION_ENCODINGS);
}

/**
 * The body compressed as @fastify/compress would for this request, with its headers set on the reply, or undefined where
 * it goes out as it is or stays with the plugin. `known` is a compressed body kept from before (the answer cache's), used
 * when the client asks for its encoding.
 */
export function encodedWhole(request: FastifyRequest, reply: FastifyReply, body: string | Buffer, known?: EncodedBody): EncodedBody | undefined {
  const size = Buffer.byteLength(body);
  if (size < THRESHOLD || size > WHOLE_LIMIT) return undefined;
  if (reply.hasHeader('content-encoding') || request.headers['x-no-compression'] !== undefined) return undefined;
  const type = reply.getHeader('content-type');
  if (!COMPRESSIBLE_TYPES.test(typeof type === 'string' ? type : 'application/json')) return undefined;
  const encoding = chosenEncoding(request.headers['accept-encoding']);
  if (encoding !== 'gzip' && encoding !== 'deflate') return undefined;
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'accept-encoding');
  else if (!String(vary).includes('accept-encoding')) reply.header('vary', `${String(vary)}, accept-encoding`);
  reply.header('content-encoding', encoding);
  if (known?.encoding === encoding) return known;
  return { encoding, body: encoding === 'gzip' ? gzipSync(body) : deflateSync(body) };
}

/** Registered after @fastify/compress: global onSend hooks run before the plugin's, which it adds to each route. */
export function registerWholeCompression(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!(typeof payload === 'string' || Buffer.isBuffer(payload))) return done(null, payload);
    done(null, encodedWhole(request, reply, payload)?.body ?? payload);
  });
}
