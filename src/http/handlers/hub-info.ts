// The public service-info and health answer (API.md 2).
import type { HandlerContext } from '../request-context.js';

export async function hubInfo(context: HandlerContext): Promise<unknown> {
  const started = Date.now();
  const { name, version, upSince } = context.hub.info;
  const host = context.request.headers.host ?? 'localhost';
  return context.reply.type('application/json').header('cache-control', 'no-cache').send({
    schemaVersion: '0.9',
    reporter: { name, version, upSince, endpoint: `${context.request.protocol}://${host}/hub/` },
    status: { result: 'OK', timestamp: Date.now(), checkDuration: Date.now() - started },
  });
}
