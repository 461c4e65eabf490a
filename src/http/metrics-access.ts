// Who may read GET /metrics (HUB_METRICS): loopback callers by default, since the figures show what the node is doing.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { hubError } from '../core/errors.js';

export type MetricsAccess = { kind: 'loopback' | 'open' | 'off' } | { kind: 'token'; token: string };

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses (a dual-stack listener reports those). */
function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Throws the answer for a caller who may not read the metrics: 404 when they are off (as for any unknown path), 403
 * naming the setting otherwise. The loopback check is of the connection's peer: behind a reverse proxy on the same
 * machine every caller is loopback, so such a setup takes `token:` or `off` (docs/operations.md).
 */
export function checkMetricsAccess(request: FastifyRequest, access: MetricsAccess): void {
  switch (access.kind) {
    case 'open': return;
    case 'off': throw hubError('routeNotFound');
    case 'loopback':
      if (!isLoopback(request.socket.remoteAddress)) throw hubError('metricsForbidden', { problem: 'answers loopback callers only' });
      return;
    case 'token': {
      const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? '');
      if (!match || !sameSecret(match[1], access.token)) throw hubError('metricsForbidden', { problem: 'needs the metrics token as Authorization: Bearer' });
    }
  }
}
