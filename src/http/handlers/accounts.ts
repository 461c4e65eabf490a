// Handlers of the Account API (API.md 9.1): login, logout, the logged-in account, account creation by admins.
import { hubError } from '../../core/errors.js';
import type { AccountRecord } from '../../storage/storage.js';
import { accountView } from '../../hub/access/account-service.js';
import { readSmallJsonObject } from '../body/json-body.js';
import type { HandlerContext } from '../request-context.js';
import { checkJsonContentType, clearSessionCookie, sessionIdOf, setSessionCookie } from '../session-cookie.js';

/** Account and token bodies are a few fields: anything larger is refused early, whatever HUB_MAX_BODY allows. */
const MAX_ACCOUNT_BODY = 64 * 1024;

export async function smallJsonBody(context: HandlerContext): Promise<Record<string, unknown>> {
  checkJsonContentType(context.request);
  return readSmallJsonObject(context.request.raw, context.maxBody, MAX_ACCOUNT_BODY, 'invalidJsonBody');
}

/** For handlers of session routes, where the route wrapper has resolved the session. */
export function accountOf(context: HandlerContext): AccountRecord {
  if (!context.account) throw new Error('handler of a route without session asked for the account');
  return context.account;
}

const json = (context: HandlerContext, status: number, body: unknown) =>
  context.reply.status(status).type('application/json').header('cache-control', 'no-store').send(body);

export async function login(context: HandlerContext): Promise<unknown> {
  const body = await smallJsonBody(context);
  try {
    const session = await context.hub.accounts.login(body.username, body.password, sessionIdOf(context.request));
    setSessionCookie(context.reply, session.sessionId, context.hub.accounts.sessionTtl, context.secureCookies);
    return json(context, 200, session.account);
  } catch (error) {
    const retryAfter = (error as { details?: { retryAfter?: number } }).details?.retryAfter;
    if (retryAfter !== undefined) context.reply.header('retry-after', String(retryAfter));
    throw error;
  }
}

export async function logout(context: HandlerContext): Promise<unknown> {
  const sessionId = sessionIdOf(context.request);
  if (sessionId !== undefined) await context.hub.accounts.logout(sessionId);
  clearSessionCookie(context.reply, context.secureCookies);
  return context.reply.status(204).header('cache-control', 'no-store').send();
}

export async function me(context: HandlerContext): Promise<unknown> {
  return json(context, 200, accountView(accountOf(context)));
}

export async function createAccount(context: HandlerContext): Promise<unknown> {
  if (!accountOf(context).admin) throw hubError('adminRequired', { action: 'create accounts' });
  const body = await smallJsonBody(context);
  return json(context, 200, await context.hub.accounts.create(body));
}
