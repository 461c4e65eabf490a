// The public service-info and health answer (API.md 2), with the figures of this process's answer cache.
import type { HandlerContext } from '../request-context.js';

export async function hubInfo(context: HandlerContext): Promise<unknown> {
  const started = Date.now();
  const { name, version, upSince } = context.hub.info;
  const host = context.request.headers.host ?? 'localhost';
  return context.reply.type('application/json').header('cache-control', 'no-cache').send({
    schemaVersion: '0.9',
    reporter: { name, version, upSince, endpoint: `${context.request.protocol}://${host}/hub/` },
    status: { result: 'OK', timestamp: Date.now(), checkDuration: Date.now() - started },
    // This process's answer cache (docs/cache-and-changed-tiles.md): figures only, no space or caller is named.
    cache: context.hub.cache.figures(),
  });
}
