// Time limits for receiving a request: slow headers and whole requests in Node's HTTP server, slow bodies per request.
import type { IncomingMessage, Server } from 'node:http';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';

export interface TimeoutSettings {
  /** Milliseconds for the request line and headers; 0 means no limit. */
  headersTimeout: number;
  /** Milliseconds for the whole request, body included; 0 means no limit. */
  requestTimeout: number;
  /** Milliseconds a body may pause between two pieces; 0 means no limit. */
  bodyIdleTimeout: number;
}

/**
 * Node checks the header and request deadlines of open connections on a timer (30 s by default), so a
 * deadline can be overrun by up to one interval; a tenth of the shortest deadline keeps that small.
 */
function checkingInterval(settings: TimeoutSettings): number {
  const deadlines = [settings.headersTimeout, settings.requestTimeout].filter((ms) => ms > 0);
  if (deadlines.length === 0) return 30_000;
  return Math.min(30_000, Math.max(50, Math.floor(Math.min(...deadlines) / 10)));
}

/**
 * Node answers an expired header or request deadline through Fastify's `clientErrorHandler` (408) and
 * closes the connection. `connectionTimeout` (socket inactivity) stays off: the socket is also silent
 * while the hub stores a large upload, which may take longer than any sensible idle limit.
 */
export function timeoutServerOptions(settings: TimeoutSettings): Pick<FastifyHttpOptions<Server>, 'requestTimeout' | 'http'> {
  return {
    requestTimeout: settings.requestTimeout,
    http: { headersTimeout: settings.headersTimeout, connectionsCheckingInterval: checkingInterval(settings) },
  };
}

const bodyIdleTimeouts = new WeakMap<IncomingMessage, number>();

/** The idle limit `bodyStream` applies to this request's body; undefined means none. */
export function bodyIdleTimeoutOf(request: IncomingMessage): number | undefined {
  return bodyIdleTimeouts.get(request);
}

export function registerTimeouts(app: FastifyInstance, settings: TimeoutSettings): void {
  if (settings.bodyIdleTimeout > 0) {
    app.addHook('onRequest', (request, _reply, done) => {
      bodyIdleTimeouts.set(request.raw, settings.bodyIdleTimeout);
      done();
    });
  }
  // The rest of a body that stopped arriving would never come: the connection is closed after the 408.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode === 408) reply.header('connection', 'close');
    done(null, payload);
  });
}
