// Writes any error as one of the two documented error bodies (API.md 1.6) with its status.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { HubError, hubError } from '../../core/errors.js';
import { fromStorage } from '../../hub/storage-failures.js';

/** Maps what is not already a HubError: framework errors carry a status, zlib errors mean a bad gzip body. */
function toHubError(raised: unknown, request: FastifyRequest): HubError {
  const error = fromStorage(raised);
  if (error instanceof HubError) return error;
  const failure = error as { code?: string; statusCode?: number; message?: string };
  if (typeof failure.code === 'string' && failure.code.startsWith('Z_')) {
    return hubError('invalidCompressedBody', { encoding: String(request.headers['content-encoding']), detail: failure.message ?? '' });
  }
  if (failure.statusCode === 413) return hubError('payloadTooLarge');
  if (failure.statusCode && failure.statusCode >= 400 && failure.statusCode < 500) {
    return hubError('invalidParameter', { name: 'request', problem: failure.message ?? 'malformed request' });
  }
  request.log.error({ err: error }, 'unexpected error');
  return hubError('internal');
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const hub = toHubError(error, request);
  const streamId = String(reply.getHeader('stream-id') ?? '');
  const body = hub.shape === 'error'
    ? { type: 'error', statusCode: hub.status, reasonPhrase: STATUS_CODES[hub.status], message: hub.message, code: hub.code, streamId }
    : { type: 'ErrorResponse', streamId, error: hub.kind, errorMessage: hub.message, code: hub.code, ...(hub.details ? { errorDetails: hub.details } : {}) };
  return reply.status(hub.status).type('application/json').send(body);
}
