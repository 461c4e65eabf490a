// Handlers of the Token API (API.md 9): the public token lookup, and listing, creating and deleting the logged-in account's tokens.
import type { HandlerContext } from '../request-context.js';
import { accountOf, smallJsonBody } from './accounts.js';

const json = (context: HandlerContext, body: unknown) =>
  context.reply.status(200).type('application/json').header('cache-control', 'no-store').send(body);

/** `{token}.json` and `{token}` are the same resource (API.md 1.9). */
export async function getToken(context: HandlerContext): Promise<unknown> {
  const token = context.params.token.replace(/\.json$/, '');
  return json(context, await context.hub.tokens.lookUp(token));
}

export async function listTokens(context: HandlerContext): Promise<unknown> {
  return json(context, await context.hub.tokens.list(accountOf(context)));
}

export async function createToken(context: HandlerContext): Promise<unknown> {
  const body = await smallJsonBody(context);
  return json(context, await context.hub.tokens.create(accountOf(context), body));
}

export async function deleteToken(context: HandlerContext): Promise<unknown> {
  await context.hub.tokens.delete(accountOf(context), context.params.token);
  return context.reply.status(204).send();
}
