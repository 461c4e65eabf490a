// The request body as a stream of decompressed bytes, cut off with 413 past the size limit, 429 past the node's body budget, 408 when it stalls.
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import { hubError } from '../../core/errors.js';
import { type BodyReservation, bodyReservationOf } from '../load-shedding.js';
import { bodyIdleTimeoutOf } from '../timeouts.js';

/** Lowers the configured limit for one request (API.md 1.7). */
const LIMIT_HEADER = 'x-upload-content-length-limit';

class SizeLimit extends Transform {
  private seen = 0;

  constructor(private readonly limit: number, private readonly reservation: BodyReservation | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) return callback(hubError('payloadTooLarge'));
    try {
      this.reservation?.cover(this.seen);
    } catch (error) {
      return callback(error as Error);
    }
    callback(null, chunk);
  }
}

/**
 * Fails the body with 408 when the client sends nothing for `timeout` ms while the hub waits for it.
 * Bytes received but not yet read mean the hub is the slow side, so the wait starts over. When the
 * timer fires after the event loop was busy (a large write holds it for seconds), bytes that arrived
 * meanwhile are still in the socket: the decision waits for `setImmediate`, which runs after the loop
 * has read them, so a busy hub does not blame its client.
 */
function watchIdle(request: IncomingMessage, body: Readable, timeout: number): void {
  let lastData = performance.now();
  const decide = () => {
    const quiet = performance.now() - lastData;
    if (request.readableLength > 0 || quiet < timeout) timer = setTimeout(check, Math.max(1, timeout - quiet));
    else body.destroy(hubError('bodyTimeout', { seconds: timeout / 1000 }));
  };
  const check = () => { setImmediate(decide); };
  let timer = setTimeout(check, timeout);
  const onData = () => { lastData = performance.now(); };
  request.on('data', onData);
  body.once('close', () => {
    clearTimeout(timer);
    request.off('data', onData);
  });
}

/** The request Content-Encodings read (RFC 9110 8.4.1); the empty value and `identity` mean none. */
const DECODABLE = new Set(['', 'identity', 'gzip', 'x-gzip', 'deflate']);

function effectiveLimit(request: IncomingMessage, configured: number): number {
  const header = Number(request.headers[LIMIT_HEADER]);
  const limit = configured === 0 ? Infinity : configured;
  return Number.isFinite(header) && header > 0 ? Math.min(limit, header) : limit;
}

/**
 * The stream fails as soon as its body does (a bad gzip, a client gone), as an 'error' event: a reader takes it before
 * it awaits anything else, or that event finds no listener and stops the process (jobs open theirs in the pipeline).
 * `budgeted: false` for a body streamed to disk (a job's input), which holds no memory: it is not counted against the
 * node's body budget beyond what its headers reserved.
 */
export function bodyStream(request: IncomingMessage, configuredLimit: number, budgeted = true): Readable {
  // A client gone before its body was read (while the route looked up its token or job): a destroyed request passes
  // nothing on, so its reader waited for the body idle timeout, or for ever without one. Its error is the reset's.
  if (request.destroyed) throw request.errored ?? Object.assign(new Error('the client went away before its body was read'), { code: 'ECONNRESET' });
  const limit = effectiveLimit(request, configuredLimit);
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw hubError('payloadTooLarge');
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  // Any other coding (br, a list such as `gzip, gzip`) would be read as the plain body: refused rather than misread.
  if (encoding !== undefined && !DECODABLE.has(encoding)) throw hubError('unsupportedContentEncoding');
  let stream: Readable = request;
  if (encoding === 'gzip' || encoding === 'x-gzip') stream = request.pipe(createGunzip());
  else if (encoding === 'deflate') stream = request.pipe(createInflate());
  if (stream !== request) request.on('error', (error) => stream.destroy(error));
  // Always a stream of its own, so that a reader giving up early can destroy it without destroying the request.
  const limited = stream.pipe(new SizeLimit(limit, budgeted ? bodyReservationOf(request) : undefined));
  stream.on('error', (error) => limited.destroy(error));
  limited.once('close', () => discardRest(request));
  const idle = bodyIdleTimeoutOf(request);
  if (idle !== undefined && !request.readableEnded) watchIdle(request, limited, idle);
  return limited;
}

/**
 * A reader that stopped early (a parse error or 413 in mid-body) leaves the rest of the request
 * unread, and Node then neither reads it nor frees the connection: the client's next request on
 * it would hang. Discarding the rest, as Node does for bodies nobody reads, keeps it usable.
 */
function discardRest(request: IncomingMessage): void {
  if (request.readableEnded) return;
  request.unpipe();
  request.resume();
}

/** Collects a small body (space definitions) into one buffer. */
export async function readWholeBody(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
