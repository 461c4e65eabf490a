// What orchestrators and Prometheus call: readiness (GET /hub/health-status) and GET /metrics (docs/operations.md).
import { checkMetricsAccess } from '../metrics-access.js';
import { METRICS_CONTENT_TYPE } from '../metrics.js';
import type { HandlerContext } from '../request-context.js';

/**
 * Readiness: the service answer of GET /hub plus whether the storage answers; 503 with status.result UNAVAILABLE when it
 * does not, so that a load balancer sends requests elsewhere until it does. Which database failed, and why, is not
 * told: the route is public. GET /hub is the liveness answer and touches no storage.
 */
export async function healthStatus(context: HandlerContext): Promise<unknown> {
  const started = Date.now();
  const reachable = await context.hub.operations.storageReachable();
  const { name, version, upSince } = context.hub.info;
  const host = context.request.headers.host ?? 'localhost';
  return context.reply.status(reachable ? 200 : 503).type('application/json').header('cache-control', 'no-cache').send({
    schemaVersion: '0.9',
    reporter: { name, version, upSince, endpoint: `${context.request.protocol}://${host}/hub/` },
    status: {
      result: reachable ? 'OK' : 'UNAVAILABLE', timestamp: Date.now(), checkDuration: Date.now() - started,
      ...(reachable ? {} : { message: 'The storage does not answer.' }),
    },
    storage: { reachable },
  });
}

export async function metricsPage(context: HandlerContext): Promise<unknown> {
  checkMetricsAccess(context.request, context.metrics.access);
  const text = await context.metrics.text();
  return context.reply.type(METRICS_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
}
