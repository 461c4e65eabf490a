// One POST of a delivery: signed, with a deadline, no redirects followed and at most a little of the answer read.
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPrivateAddress } from './destination-guard.js';

/** Receivers answer a short acknowledgement; anything longer is not read (the status decides). */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface PostOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Aborts the POST when the hub stops. */
  signal: AbortSignal;
}

/** `sha256=<hex HMAC-SHA256 of the body>`, GitHub's webhook signature format. */
export const signatureOf = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * POSTs `body` and resolves with undefined after a 2xx, else with what went wrong, in words that name neither the
 * destination nor the secret: the status, or the kind of network error.
 */
export function postWebhook(destination: string, body: string, headers: Record<string, string>, options: PostOptions): Promise<string | undefined> {
  const url = new URL(destination);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address is connected to without a lookup, so it is checked here.
  if (!options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) return Promise.resolve('the destination is a private address');
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (problem: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      options.signal.removeEventListener('abort', abort);
      resolve(problem);
    };
    const request = send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'spatial-data-hub-webhooks', ...headers },
      lookup: guardedLookup(options.allowPrivate),
    }, (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      const done = () => finish(status >= 200 && status < 300 ? undefined
        : status >= 300 && status < 400 ? `the destination answered ${status}: redirects are not followed` : `the destination answered ${status}`);
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    const deadline = setTimeout(() => {
      finish(`no answer within ${options.timeoutMs / 1000} s`);
      request.destroy();
    }, options.timeoutMs);
    const abort = () => {
      finish('the hub stopped during the delivery');
      request.destroy();
    };
    options.signal.addEventListener('abort', abort);
    request.on('error', (error: NodeJS.ErrnoException) => finish(`the destination could not be reached (${error.code ?? 'network error'})`));
    request.end(body);
  });
}
