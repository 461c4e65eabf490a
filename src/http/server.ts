// Builds the HTTP server: CORS, compression, stream ids, authentication, the route table and error bodies.
import { MAX_ID_LENGTH } from '../core/id-limits.js';
import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import type { Hub } from '../hub/hub.js';
import { hubError } from '../core/errors.js';
import { randomId } from '../hub/ids.js';
import { VIEWER_ROOT } from './handlers/viewer.js';
import { registerLoadShedding, type SheddingSettings } from './load-shedding.js';
import { noteAccount, registerAccessLog } from './access-log.js';
import { answerHalfClosedUploads } from './departed-clients.js';
import { HubMetrics } from './metrics.js';
import type { MetricsAccess } from './metrics-access.js';
import { endEventStreams } from './handlers/events.js';
import { RawQuery } from './query/raw-query.js';
import { VERSION_PARAMETERS } from './query/version-ref.js';
import { sendError, sendFrameworkError, uriOverLimit, writeClientError } from './reply/error-reply.js';
import type { HandlerContext } from './request-context.js';
import { checkSameOrigin, sessionIdOf } from './session-cookie.js';
import { type Method, type Route, routes } from './routes.js';
import { registerTimeouts, type TimeoutSettings, timeoutServerOptions } from './timeouts.js';
import { COMPRESSIBLE_TYPES, COMPRESSION_ENCODINGS, registerWholeCompression } from './reply/whole-compression.js';
import { MAX_URI_LENGTH } from './uri-limit.js';
import { unusedConnections } from './unused-connections.js';

export interface ServerOptions extends SheddingSettings, TimeoutSettings {
  maxBody: number;
  hereTileEncoding: 'base4' | 'decimal';
  logLevel: string;
  /** The URL clients reach the hub at (HUB_PUBLIC_URL): its origin is the one session requests must come from; https makes cookies Secure. */
  publicUrl?: string;
  /** Who may read GET /metrics (HUB_METRICS). */
  metrics: MetricsAccess;
  /**
   * A worker's GET /metrics answers the node's figures, summed by the primary (cluster/worker-pool.ts); without it the
   * process answers its own.
   */
  nodeMetrics?: () => Promise<string>;
}

const ALL_METHODS: Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Bearer header first, then `access_token` (API.md 1.3). */
function tokenOf(request: FastifyRequest, query: RawQuery): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    return match ? match[1] : header.trim();
  }
  return query.first('access_token');
}

function register(app: FastifyInstance, hub: Hub, route: Route, options: ServerOptions, metrics: HubMetrics): void {
  const publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : undefined;
  const secureCookies = publicOrigin?.startsWith('https:') === true;
  // Every route may take the token as `access_token` (API.md 1.3).
  const declared = new Set(['access_token', ...(route.query ?? []), ...(route.versions ? VERSION_PARAMETERS : [])].map((name) => name.toLowerCase()));
  app.route({
    method: route.method,
    url: route.path,
    // Bodies are read by the handlers themselves (streamed, decompressed and size-checked there).
    config: { decompress: false },
    handler: async (request, reply) => {
      const query = RawQuery.fromUrl(request.url, declared);
      if (route.session) checkSameOrigin(request, publicOrigin);
      const account = route.session === true ? await hub.accounts.authenticateSession(sessionIdOf(request)) : undefined;
      const claims = route.public || route.session ? undefined : await hub.access.authenticate(tokenOf(request, query));
      noteAccount(request.raw, claims?.aid ?? account?.id);
      const context: HandlerContext = {
        request, reply, query, claims, account, hub, maxBody: options.maxBody, hereTileEncoding: options.hereTileEncoding,
        params: request.params as Record<string, string>, secureCookies,
        metrics: { access: options.metrics, text: options.nodeMetrics ?? (() => metrics.text()) },
      };
      return route.handler(context);
    },
  });
}

/** Known paths answer other methods with 405 (API.md 1.1). */
function registerMethodNotAllowed(app: FastifyInstance): void {
  const methodsByPath = new Map<string, Set<Method>>();
  for (const route of routes) {
    const methods = methodsByPath.get(route.path) ?? new Set<Method>();
    methods.add(route.method);
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const others = ALL_METHODS.filter((method) => !methods.has(method));
    if (others.length === 0) continue;
    app.route({
      method: others,
      url: path,
      config: { decompress: false },
      handler: async (request) => {
        throw hubError('methodNotAllowed', { method: request.method, path: request.url.split('?')[0] });
      },
    });
  }
}

export async function buildServer(hub: Hub, options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: options.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_ID_LENGTH },
    // Errors found before a route runs answer in our error shapes too, never echoing the URL (API.md 1.6).
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: writeClientError,
    genReqId: (request) => {
      const given = request.headers['stream-id'];
      return typeof given === 'string' && given !== '' ? given : randomId(10);
    },
    logController: new LogController({ disableRequestLogging: true }),
    ...timeoutServerOptions(options),
  });
  answerHalfClosedUploads(app.server);
  const metrics = new HubMetrics(() => hub.operations.figures());
  registerAccessLog(app, metrics);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  await app.register(cors, {
    origin: true,
    credentials: true,
    methods: ['OPTIONS', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'User-Agent', 'If-Modified-Since', 'If-None-Match',
      'Cache-Control', 'Stream-Id', 'Accept-Encoding', 'Content-Encoding', 'X-Upload-Content-Length-Limit'],
    exposedHeaders: ['Stream-Id', 'Stream-Info', 'ETag'],
    optionsSuccessStatus: 204,
  });
  await app.register(compress, { global: true, encodings: COMPRESSION_ENCODINGS, customTypes: COMPRESSIBLE_TYPES });
  registerWholeCompression(app);
  await app.register(cookie);
  // Only `reply.sendFile` (ETag, Last-Modified, ranges, content types): the viewer's routes are in the route table.
  await app.register(fastifyStatic, { root: VIEWER_ROOT, serve: false });

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('stream-id', request.id);
    // A URI Node's parser took, longer than the hub serves: the same 414 as one the parser refused (uri-limit.ts).
    done(request.url.length > MAX_URI_LENGTH ? uriOverLimit() : undefined);
  });
  // After CORS and the stream id, so that a 429 carries both.
  registerLoadShedding(app, options);
  registerTimeouts(app, options);
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) => sendError(hubError('routeNotFound'), request, reply));

  // Streams stay open until their client leaves: a graceful stop ends them first, or it would wait for them.
  let closing = false;
  const unused = unusedConnections(app.server);
  app.addHook('preClose', async () => {
    closing = true;
    endEventStreams();
    unused.close();
  });
  // Answers sent while stopping close their connection: a kept-alive one would otherwise take the client's next
  // request, which a stopping server can only refuse (docs/operations.md, "Shutdown"). An answer whose headers went
  // out before the stop leaves its connection idle when it ends: closed then, or the stop would wait for the client.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (_request, _reply, done) => {
    if (closing) setImmediate(() => app.server.closeIdleConnections());
    done();
  });
  for (const route of routes) register(app, hub, route, options, metrics);
  registerMethodNotAllowed(app);
  return app;
}
