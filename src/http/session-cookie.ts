// The login session cookie (API.md 9.1) and the cross-site request checks of the routes it authenticates.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hubError } from '../core/errors.js';

const SESSION_COOKIE = 'hub_session';

export function sessionIdOf(request: FastifyRequest): string | undefined {
  return request.cookies[SESSION_COOKIE];
}

/** HttpOnly and SameSite=Lax always; Secure when the hub is served over https (HUB_PUBLIC_URL). */
export function setSessionCookie(reply: FastifyReply, sessionId: string, maxAgeMs: number, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, sessionId, { httpOnly: true, sameSite: 'lax', path: '/', secure, maxAge: Math.floor(maxAgeMs / 1000) });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure });
}

/**
 * A browser names the page that sent a request in `Origin`: a session-authenticated request from a page that is
 * not the hub's own is refused (403), whatever its method. Requests without `Origin` (same-origin GETs, non-browser
 * clients) pass; a cross-site page cannot send one without it, and SameSite=Lax keeps the cookie off its other requests.
 */
export function checkSameOrigin(request: FastifyRequest, publicOrigin: string | undefined): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const own = publicOrigin ?? `${request.protocol}://${request.headers.host ?? ''}`;
  if (origin !== own) throw hubError('crossSiteRequest', { origin: JSON.stringify(origin.slice(0, 200)) });
}

/** Account and Token API bodies are JSON only: a form post from another site (which needs no CORS preflight) is refused. */
export function checkJsonContentType(request: FastifyRequest): void {
  const type = request.headers['content-type']?.split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw hubError('jsonBodyRequired');
}
