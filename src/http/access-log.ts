// One record per request as its answer ends: the access log's JSON line (at info) and the request metrics (docs/operations.md).
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { clientWentAway, closedBy, cutStatus } from './departed-clients.js';
import type { HubMetrics, RequestRecord } from './metrics.js';

/** Requests whose caller is known once the route resolved the token or session: the account id, never the token. */
const accounts = new WeakMap<IncomingMessage, string>();

export function noteAccount(request: IncomingMessage, accountId: string | undefined): void {
  if (accountId !== undefined) accounts.set(request, accountId);
}

/** The log levels at which the access lines are written. */
const WRITES_INFO = new Set(['info', 'debug', 'trace']);

/** Requests no route matched share one label (and one log value): their paths are whatever a client sent. */
const UNMATCHED = 'unmatched';

function declaredLength(request: IncomingMessage): number | undefined {
  const declared = Number(request.headers['content-length']);
  return Number.isFinite(declared) && declared >= 0 ? declared : undefined;
}

/**
 * Registered before every other hook, so that requests refused by them (429, 414) are counted and logged too. The
 * line holds the route pattern, not the URL: a query string may carry `access_token`. Headers are not logged at all.
 * Byte counts are read from the connection, so compressed and streamed answers count as sent. An answer that did not end
 * whole (its connection closed first) is logged with the status that went out, 499 or 444 when none did
 * (departed-clients.ts, `cutStatus`).
 */
export function registerAccessLog(app: FastifyInstance, metrics: HubMetrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    const started = performance.now();
    const socket = request.raw.socket;
    const readBefore = socket.bytesRead;
    const writtenBefore = socket.bytesWritten;
    metrics.requestStarted();
    reply.raw.once('close', () => {
      const response = reply.raw;
      const bytesOut = Math.max(0, socket.bytesWritten - writtenBefore);
      const by = response.writableFinished ? undefined : closedBy(socket);
      const record: RequestRecord = {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED,
        status: by === undefined ? response.statusCode : cutStatus(response, socket, bytesOut, by),
        seconds: (performance.now() - started) / 1000,
        bytesIn: declaredLength(request.raw) ?? Math.max(0, socket.bytesRead - readBefore),
        bytesOut,
        closedBy: by,
      };
      metrics.requestEnded(record);
      // The line's object is built only when it is written: not at `warn` and above, as the bench and tests run.
      if (!WRITES_INFO.has(app.log.level)) return;
      app.log.info({
        method: record.method, route: record.route, status: record.status, ms: Math.round(record.seconds * 10_000) / 10,
        bytesIn: record.bytesIn, bytesOut: record.bytesOut, streamId: request.id, account: accounts.get(request.raw),
        // An answer that did not end whole says so, and who closed its connection: a 200 alone reads as served.
        ...(by === undefined ? {} : { completed: false, closedBy: by }),
      }, 'request');
    });
    done();
  });
  // A read cancelled because its client left is no deadline hit of the database.
  app.addHook('onError', async (request, reply, error) => {
    if (!clientWentAway(error, request.raw, reply.raw)) metrics.countError(error);
  });
}
