// What every handler receives: the request and reply, the raw query, path parameters, the caller and the hub.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Claims } from '../hub/access/claims.js';
import type { Hub } from '../hub/hub.js';
import type { AccountRecord } from '../storage/storage.js';
import type { RawQuery } from './query/raw-query.js';
import type { MetricsAccess } from './metrics-access.js';

/** GET /metrics: who may read it, and the text (the process's own, or its node's summed by the primary). */
export interface MetricsEndpoint {
  access: MetricsAccess;
  text(): Promise<string>;
}

export interface HandlerContext {
  request: FastifyRequest;
  reply: FastifyReply;
  query: RawQuery;
  params: Record<string, string>;
  /** Absent only on public routes and session routes. */
  claims: Claims | undefined;
  /** The logged-in account, on session routes only. */
  account?: AccountRecord;
  /** Whether cookies get the Secure attribute: the hub is served over https (HUB_PUBLIC_URL). */
  secureCookies: boolean;
  hub: Hub;
  /** Request body limit in bytes (0 = unlimited). */
  maxBody: number;
  /** How `here` tile ids without underscores are read (HUB_HERE_TILE_ENCODING). */
  hereTileEncoding: 'base4' | 'decimal';
  metrics: MetricsEndpoint;
}

export type Handler = (context: HandlerContext) => Promise<unknown>;

/** For handlers on authenticated routes, where the route wrapper has resolved the token. */
export function callerOf(context: HandlerContext): Claims {
  if (!context.claims) throw new Error('handler of a public route asked for the caller');
  return context.claims;
}
