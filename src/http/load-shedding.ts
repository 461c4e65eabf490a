// Load shedding: past a number of requests in flight, or of request body bytes held, new requests get 429 with Retry-After.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hubError } from '../core/errors.js';

export interface SheddingSettings {
  /** Requests in flight at once; 0 means unlimited. */
  maxInFlight: number;
  /** Request body bytes held at once; 0 means unlimited. */
  maxInFlightBody: number;
  /** The body size limit: a larger declared body reserves only this much, as it is refused with 413 anyway. */
  maxBody: number;
}

/** Seconds a shed client is asked to wait: the node sheds because of requests that end within seconds. */
const RETRY_AFTER_SECONDS = 1;

/** Bodies of other methods are never read (API.md 1.9), so they cost nothing to hold. */
const BODY_METHODS = new Set(['PUT', 'POST', 'PATCH']);

/** The health answers (API.md 2) and the metrics: what an operator looks at when the node is busy. */
const HEALTH_ROUTES = new Set(['/', '/hub', '/hub/health-status', '/metrics']);

/**
 * Preflights and the health route are never shed. A refused preflight is a CORS failure to the browser,
 * which then drops the real request without telling the map library, so a 429 would not even be seen;
 * answering a preflight costs no more than refusing it. The health route must keep answering so that
 * a load balancer or supervisor sees a busy node as alive instead of restarting it, which would drop
 * every request it is working on. The metrics are what shows the operator why the node sheds.
 */
function exempt(request: FastifyRequest): boolean {
  if (request.method === 'OPTIONS') return true;
  return request.method === 'GET' && HEALTH_ROUTES.has(request.routeOptions.url ?? '');
}

/** The body bytes one request holds against the node's budget; grows as a body without declared length streams in. */
export class BodyReservation {
  private reserved = 0;

  constructor(private readonly budget: BodyBudget) {}

  /** Raises the reservation to `total` bytes; throws 429 when the budget cannot cover the rise. */
  cover(total: number): void {
    if (total <= this.reserved) return;
    this.budget.take(total - this.reserved);
    this.reserved = total;
  }

  release(): void {
    this.budget.give(this.reserved);
    this.reserved = 0;
  }
}

class BodyBudget {
  private held = 0;

  constructor(private readonly limit: number) {}

  take(bytes: number): void {
    if (this.held + bytes > this.limit) throw hubError('tooManyRequests');
    this.held += bytes;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

const reservations = new WeakMap<IncomingMessage, BodyReservation>();

/** The reservation `bodyStream` grows as this request's body arrives; undefined when bodies are not budgeted. */
export function bodyReservationOf(request: IncomingMessage): BodyReservation | undefined {
  return reservations.get(request);
}

function declaredLength(request: FastifyRequest, maxBody: number): number {
  const declared = Number(request.headers['content-length']);
  if (!Number.isFinite(declared) || declared <= 0) return 0;
  return maxBody > 0 ? Math.min(declared, maxBody) : declared;
}

const leaving = new WeakMap<IncomingMessage, () => void>();

/**
 * A request that stays open while it costs next to nothing (an event stream between events) stops counting as in
 * flight: the node's requests at once bound the work going on, and streams would otherwise take up that budget.
 */
export function leaveInFlight(request: IncomingMessage): void {
  leaving.get(request)?.();
}

/**
 * Counts requests from their headers until their answer is sent or the client goes away, and reserves
 * a body's declared length when its headers arrive: an upload's memory is held until it is stored.
 * Bodies without a declared length (chunked, or decompressing past it) are covered as they stream.
 */
export function registerLoadShedding(app: FastifyInstance, settings: SheddingSettings): void {
  const budget = settings.maxInFlightBody > 0 ? new BodyBudget(settings.maxInFlightBody) : undefined;
  let inFlight = 0;
  app.addHook('onRequest', (request, reply, done) => {
    if (exempt(request)) return done();
    if (settings.maxInFlight > 0 && inFlight >= settings.maxInFlight) return done(hubError('tooManyRequests'));
    let reservation: BodyReservation | undefined;
    if (budget && BODY_METHODS.has(request.method)) {
      reservation = new BodyReservation(budget);
      reservation.cover(declaredLength(request, settings.maxBody));
      reservations.set(request.raw, reservation);
    }
    inFlight++;
    let counted = true;
    const leave = () => {
      if (counted) inFlight--;
      counted = false;
    };
    leaving.set(request.raw, leave);
    reply.raw.once('close', () => {
      leave();
      reservation?.release();
    });
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    done(null, payload);
  });
}
