// Clients that go away: what their departure surfaces as (one place for all routes), what the access log reports, and half-closed clients still answered.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HubError } from '../core/errors.js';
import { StorageError } from '../storage/storage-error.js';

/**
 * What reading the body or writing the answer fails with once the client's connection is gone: a reset (also Node's
 * `aborted` for a body cut off by a closed connection, whatever route reads it: a feature write, the streaming scanner,
 * a gzip body, a job's upload), a broken pipe (ECONNABORTED on some systems), and a stream closed before its end (the
 * job upload's pipeline, a body destroyed without an error).
 */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * A read whose client left is cancelled (read-reply.ts, `clientGone`) and fails as a storage timeout: PostgreSQL reports
 * the cancel as query_canceled, SQLite stops before its next page.
 */
const isCancelledRead = (error: unknown): boolean =>
  (error instanceof StorageError && error.failure === 'timeout') || (error instanceof HubError && error.code === 'storageTimeout');

/** No answer can reach the client any more: its connection closed, or can no longer be written, before the answer ended. */
function unreachable(request: IncomingMessage, response: ServerResponse): boolean {
  if (response.writableFinished) return false;
  const socket = request.socket;
  return response.destroyed || socket.destroyed || !socket.writable;
}

/**
 * The request failed because its client went away, not because of the hub: nothing to answer and nothing to log
 * above debug (the access line marks the request `completed: false`, closed by the client). Needs both the error and a
 * connection that is gone: a reset the database connection reports (mapped to 502 in storage) or a deadline passed
 * while the client still waits is the hub's to answer.
 */
export function clientWentAway(error: unknown, request: IncomingMessage, response: ServerResponse): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const lost = (typeof code === 'string' && CONNECTION_LOST.has(code)) || isCancelledRead(error);
  return lost && unreachable(request, response);
}

/**
 * Who closed the connection of an answer that did not end whole. The client: its FIN or reset arrived (as when it gave
 * up waiting, or a write met its closed socket). The hub: it cut the answer itself (a stream that failed after its
 * status line, a request past its deadline), destroying the socket without an error of the peer.
 */
export type ClosedBy = 'client' | 'hub';

export function closedBy(socket: Socket): ClosedBy {
  return socket.readableEnded || socket.errored !== null ? 'client' : 'hub';
}

/**
 * Answers Node's parser had the hub write straight to a connection whose request was in progress (a 400 for a body cut
 * by a FIN, a 408 past HUB_REQUEST_TIMEOUT; error-reply.ts, `writeClientError`): that request's own answer never starts.
 */
const parserAnswers = new WeakMap<object, number>();

export function noteParserAnswer(socket: object, status: number): void {
  parserAnswers.set(socket, status);
}

/**
 * The status to report for an answer that did not end whole, after nginx: the one that went out (its head, or the
 * parser's answer), else 499 ("client closed request") when the client left first, else 444 (closed without an answer)
 * when the hub did. The handler's status alone is no answer: it is 200 until the handler sets another, also when
 * nothing was sent.
 */
export function cutStatus(response: ServerResponse, socket: Socket, bytesOut: number, by: ClosedBy): number {
  // headersSent turns true when the head is made, and the parser's answer is noted before its write: only bytes on the
  // connection show that either was written (a write to a connection already reset is dropped).
  if (bytesOut > 0) {
    const sent = response.headersSent ? response.statusCode : parserAnswers.get(socket);
    if (sent !== undefined) return sent;
  }
  return by === 'client' ? 499 : 444;
}

/** RFC 9112 6.1: a request carries a body when it declares a length above 0 or a transfer coding. */
const hasBody = (request: IncomingMessage): boolean =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

/**
 * A client that ends its side of the connection (a FIN) may have half-closed it after sending its request (`socket.end()`,
 * `shutdown(SHUT_WR)`) and still read, or closed it and gone: TCP tells the two apart only once the hub writes. Node's
 * HTTP server takes every FIN for the second and ends the connection at once, so an upload's answer (a 400 for a bad
 * gzip body, or its 200) was lost whenever the FIN came before it was ready. Now a connection whose request in progress
 * carries a body stays open for its answer, and is closed after it (`httpAllowHalfOpen`, a long-standing switch of
 * http.Server that Node does not document): the write runs to its end either way (a disconnect never cancels a write),
 * so answering costs nothing. Any other request (a read) is ended at the FIN as before, which cancels the read (its
 * `clientGone` signal): a client that drops a request (fetch's abort) sends the same FIN, and its reads must stop. A FIN in the
 * middle of a body is refused by Node's parser (400, connection closed), as before.
 */
export function answerHalfClosedUploads(server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const uploading = new WeakMap<Socket, IncomingMessage>();
  // Node's parser emits 'request' as the headers arrive, before it reads any later FIN of the connection.
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!hasBody(request)) return;
    uploading.set(request.socket, request);
    response.once('close', () => {
      if (uploading.get(request.socket) === request) uploading.delete(request.socket);
    });
  });
  // After Node's own listener, which keeps the answer in progress when half-open and ends an idle connection.
  server.on('connection', (socket: Socket) => {
    socket.on('end', () => {
      if (!uploading.has(socket)) socket.end();
    });
  });
}
