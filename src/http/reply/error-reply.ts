// Writes any error as one of the two documented error bodies (API.md 1.6) with its status, including errors the framework and Node's HTTP parser detect.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { HubError, hubError } from '../../core/errors.js';
import { MAX_ID_LENGTH } from '../../core/id-limits.js';
import { randomId } from '../../hub/ids.js';
import { fromStorage } from '../../hub/storage-failures.js';
import { clientWentAway, noteParserAnswer } from '../departed-clients.js';
import { isUriOverflow, MAX_URI_LENGTH } from '../uri-limit.js';

/** Fastify's router errors, raised before any route runs; their own messages would echo the URL. */
const ROUTER_ERRORS: Record<string, () => HubError> = {
  FST_ERR_BAD_URL: () => hubError('malformedUrl', { problem: 'its path holds a malformed percent-encoding' }),
  FST_ERR_MAX_PARAM_LENGTH: () => hubError('uriTooLong', { problem: `a path segment is longer than ${MAX_ID_LENGTH} characters` }),
};

/**
 * Maps what is not already a HubError: router errors, zlib errors (a bad gzip body), other framework
 * errors by their status. No framework message is passed on: they may hold the URL and its token.
 */
function toHubError(raised: unknown, request: FastifyRequest): HubError {
  const error = fromStorage(raised);
  if (error instanceof HubError) return error;
  const failure = error as { code?: string; statusCode?: number; message?: string };
  const routerError = typeof failure.code === 'string' ? ROUTER_ERRORS[failure.code] : undefined;
  if (routerError) return routerError();
  if (typeof failure.code === 'string' && failure.code.startsWith('Z_')) {
    return hubError('invalidCompressedBody', { encoding: String(request.headers['content-encoding']), detail: failure.message ?? '' });
  }
  if (failure.statusCode === 413) return hubError('payloadTooLarge');
  if (failure.statusCode && failure.statusCode >= 400 && failure.statusCode < 500) {
    return hubError('malformedRequest', { problem: STATUS_CODES[failure.statusCode] ?? 'refused' });
  }
  // Code and message only: a stack trace never goes into a log line.
  request.log.error({ code: failure.code, message: failure.message }, 'unexpected error');
  return hubError('internal');
}

/** Paths of the OGC API, whose errors take its exception shape (OGC API Features 7.5.1) instead of the hub's. */
const isOgcPath = (url: string): boolean => /^\/ogc(?:[/?#]|$)/.test(url);

function errorBody(hub: HubError, streamId: string, ogc = false): object {
  if (ogc) return { code: hub.code, description: hub.message };
  return hub.shape === 'error'
    ? { type: 'error', statusCode: hub.status, reasonPhrase: STATUS_CODES[hub.status], message: hub.message, code: hub.code, streamId }
    : { type: 'ErrorResponse', streamId, error: hub.kind, errorMessage: hub.message, code: hub.code, ...(hub.details ? { errorDetails: hub.details } : {}) };
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (clientWentAway(error, request.raw, reply.raw)) return leave(error, request, reply);
  const hub = toHubError(error, request);
  const streamId = String(reply.getHeader('stream-id') ?? '');
  if (hub.retryAfter !== undefined) reply.header('retry-after', String(hub.retryAfter));
  if (hub.headers !== undefined) reply.headers(hub.headers);
  if (hub.shape === 'text') return reply.status(hub.status).type('text/plain; charset=utf-8').send(hub.message);
  return reply.status(hub.status).type('application/json').send(errorBody(hub, streamId, isOgcPath(request.url)));
}

/** A client that went away gets nothing written: the request ends here, and its access line says it was cut (499). */
function leave(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.debug({ code: (error as { code?: unknown }).code }, 'client went away');
  reply.hijack();
  // A connection that can no longer be written is closed now rather than left to the client.
  reply.raw.destroy();
  return reply;
}

/** CORS answer headers for requests that never reached the CORS hook (API.md 1.9: every answer carries them). */
function corsHeaders(origin: string | undefined): Record<string, string> {
  return origin
    ? { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', 'access-control-expose-headers': 'Stream-Id, Stream-Info, ETag', vary: 'Origin' }
    : { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Stream-Id, Stream-Info, ETag' };
}

/** Fastify's `frameworkErrors`: the router refused the URL before any hook ran, so stream id and CORS are set here. */
export function sendFrameworkError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('stream-id', request.id);
  reply.headers(corsHeaders(request.headers.origin));
  // A preflight answers 204 on any path (API.md 1.9), so that the browser sends the request and shows its error.
  if (request.method === 'OPTIONS') {
    return reply.status(204).headers({
      'access-control-allow-methods': 'OPTIONS, GET, POST, PUT, DELETE, PATCH',
      'access-control-allow-headers': request.headers['access-control-request-headers'] ?? 'Authorization, Content-Type, Accept',
    }).send();
  }
  const hub = toHubError(error, request);
  // The code only: the URL, and any token in it, stays out of the log.
  request.log.debug({ code: hub.code }, 'request refused by the router');
  return sendError(hub, request, reply);
}

/** The 414 of a whole URI over MAX_URI_LENGTH, whether Node's parser or the hub found it. */
export const uriOverLimit = (): HubError => hubError('uriTooLong', { problem: `it is longer than ${MAX_URI_LENGTH} characters` });

/** What Node's parser adds to the errors it reports; `rawPacket` is a Buffer, whatever Fastify's types say. */
interface ParserError extends Error {
  code?: string;
  rawPacket?: unknown;
  bytesParsed?: unknown;
}

/** An overflow of Node's limit for the request line and headers is a 414 when the URI overflowed it (uri-limit.ts). */
function headerOverflow(error: ParserError): HubError {
  const raw = Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined;
  const parsed = typeof error.bytesParsed === 'number' ? error.bytesParsed : undefined;
  return isUriOverflow(raw, parsed) ? uriOverLimit() : hubError('headersTooLarge');
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request (414 for a URI too long, 431 for
 * headers too large, 400 for malformed HTTP, 408 when it came too slowly), so there is no request object and
 * the answer is written to the socket directly, in the documented shape.
 */
export function writeClientError(this: FastifyInstance, error: ParserError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const hub = error.code === 'HPE_HEADER_OVERFLOW' ? headerOverflow(error)
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? hubError('requestTimeout')
      : hubError('malformedRequest', { problem: 'it is not valid HTTP/1.1' });
  const streamId = randomId(10);
  this.log.debug({ code: hub.code, parserError: error.code, streamId }, 'request refused by the HTTP parser');
  const body = JSON.stringify(errorBody(hub, streamId));
  const headers = {
    'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close',
    'stream-id': streamId, ...corsHeaders(undefined),
  };
  if (socket.writable) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`HTTP/1.1 ${hub.status} ${STATUS_CODES[hub.status]}\r\n${lines}\r\n${body}`);
    noteParserAnswer(socket, hub.status);
  }
  socket.destroy();
}
