// Handlers of a space's webhook subscriptions (docs/subscriptions.md): list, create, read, replace, delete.
import { readSmallJsonObject } from '../body/json-body.js';
import { callerOf, type HandlerContext } from '../request-context.js';

/** A subscription body is a few members and perhaps a filter geometry: larger ones are cut off with 413. */
const MAX_SUBSCRIPTION_BODY = 256 * 1024;

const subscriptionBody = (context: HandlerContext) =>
  readSmallJsonObject(context.request.raw, context.maxBody, MAX_SUBSCRIPTION_BODY, 'invalidJsonBody');

export async function listSubscriptions(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache').send(await context.hub.subscriptions.list(callerOf(context), context.params.spaceId));
}

export async function createSubscription(context: HandlerContext): Promise<unknown> {
  const body = await subscriptionBody(context);
  // The answer holds the secret, once: no cache may keep it.
  return context.reply.header('cache-control', 'no-store').send(await context.hub.subscriptions.create(callerOf(context), context.params.spaceId, body));
}

export async function getSubscription(context: HandlerContext): Promise<unknown> {
  return context.reply.header('cache-control', 'no-cache')
    .send(await context.hub.subscriptions.get(callerOf(context), context.params.spaceId, context.params.subscriptionId));
}

export async function replaceSubscription(context: HandlerContext): Promise<unknown> {
  const body = await subscriptionBody(context);
  return context.reply.send(await context.hub.subscriptions.replace(callerOf(context), context.params.spaceId, context.params.subscriptionId, body));
}

export async function deleteSubscription(context: HandlerContext): Promise<unknown> {
  return context.reply.send(await context.hub.subscriptions.delete(callerOf(context), context.params.spaceId, context.params.subscriptionId));
}
