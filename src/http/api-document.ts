// The OpenAPI 3.0 document of the whole hub, generated from the route table and the query parameters each route declares.
import { errorCatalogue } from '../core/errors.js';
import { QUERY_PARAMETERS, type QueryName } from './query-parameters.js';
import type { Method, Route } from './routes.js';

/** Where OGC API Features lives: its paths are written relative to it, as OGC clients look them up (GDAL's OAPIF driver). */
export const OGC_ROOT = '/ogc';

/** The document's sections, by path prefix; the first that matches names a route's tag. */
const TAGS: Array<[prefix: string, tag: string]> = [
  ['/hub/spaces/:spaceId/features', 'Features'],
  ['/hub/spaces/:spaceId/bbox', 'Spatial reads'],
  ['/hub/spaces/:spaceId/tile', 'Spatial reads'],
  ['/hub/spaces/:spaceId/spatial', 'Spatial reads'],
  ['/hub/spaces/:spaceId/', 'Feature reads'],
  ['/hub/spaces', 'Spaces'],
  ['/project-api', 'Project API'],
  ['/token-api', 'Token API'],
  ['/account-api', 'Account API'],
  ['/ogc', 'OGC API Features'],
  ['/viewer', 'Web viewer'],
  ['/', 'Service'],
];

const BODY_METHODS = new Set<Method>(['POST', 'PUT', 'PATCH']);

export type PathItems = Record<string, Record<string, unknown>>;

const tagOf = (path: string): string => TAGS.find(([prefix]) => path === prefix || path.startsWith(prefix))?.[1] ?? 'Service';

/**
 * A route's path as the document writes it: `{name}` for `:name`; OGC routes below the OGC root relative to it
 * (their path items name that root as their server). The landing page stays absolute: `/` is the hub's own.
 */
function documentPath(path: string): { key: string; ogc: boolean } {
  const openApi = path.replace(/:([A-Za-z]+)/g, '{$1}');
  if (openApi.startsWith(`${OGC_ROOT}/`)) return { key: openApi.slice(OGC_ROOT.length), ogc: true };
  return { key: openApi, ogc: false };
}

/** A query parameter; a family (`p.*`, `*`) is a free-form object of name=value pairs. */
export function queryParameter(name: QueryName): Record<string, unknown> {
  const { schema, description } = QUERY_PARAMETERS[name];
  const family = name.endsWith('*');
  return { name, in: 'query', required: false, description, schema, ...(family ? { style: 'form', explode: true } : {}) };
}

function security(route: Route): Array<Record<string, string[]>> {
  if (route.session === true) return [{ session: [] }];
  if (route.public) return [];
  return [{ bearer: [] }, { accessToken: [] }];
}

function operation(route: Route): Record<string, unknown> {
  const pathParameters = [...route.path.matchAll(/:([A-Za-z]+)/g)]
    .map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const operationId = `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_all, next?: string) => (next ?? '').toUpperCase())}`;
  return {
    summary: route.summary,
    operationId,
    tags: [tagOf(route.path)],
    parameters: [...pathParameters, ...(route.query ?? []).map(queryParameter)],
    security: security(route),
    ...(BODY_METHODS.has(route.method) ? { requestBody: { required: false, content: { 'application/json': { schema: { type: 'object' } } } } } : {}),
    responses: {
      '2XX': { description: 'Success' },
      default: { description: 'An error (API.md 1.6)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    },
  };
}

/**
 * The document for a hub reached at `origin`. `extraOgcPaths` are added below the OGC root: the `/ogc/api` answer
 * adds one items path per collection the caller may read, with its queryables, which GDAL needs to filter on the server.
 */
export function apiDocument(routes: readonly Route[], origin: string, version: string, extraOgcPaths: PathItems = {}): Record<string, unknown> {
  const ogcServers = [{ url: `${origin}${OGC_ROOT}` }];
  const paths: PathItems = {};
  for (const route of routes) {
    const { key, ogc } = documentPath(route.path);
    const item = paths[key] ?? (paths[key] = ogc ? { servers: ogcServers } : {});
    item[route.method.toLowerCase()] = operation(route);
  }
  for (const [key, item] of Object.entries(extraOgcPaths)) paths[key] ??= { servers: ogcServers, ...item };
  return {
    openapi: '3.0.3',
    info: {
      title: 'Spatial Data Hub',
      version,
      description: 'The Hub API (/hub), the Token API, the Project API, the Account API and OGC API Features (/ogc). '
        + `${Object.keys(errorCatalogue).length} error codes, each with its status, are listed in the code member of Error.`,
    },
    servers: [{ url: origin }],
    tags: [...new Set(TAGS.map(([, tag]) => tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token (API.md 1.3, 8).' },
        accessToken: { type: 'apiKey', in: 'query', name: 'access_token' },
        session: { type: 'apiKey', in: 'cookie', name: 'hub_session', description: 'The session of POST /account-api/login.' },
      },
      schemas: {
        Error: {
          type: 'object',
          description: 'ErrorResponse ({type, streamId, error, errorMessage, code}), the framework shape ({type: "error", statusCode, message, code}) or, under /ogc, {code, description}.',
          properties: {
            type: { type: 'string' }, streamId: { type: 'string' }, error: { type: 'string' }, errorMessage: { type: 'string' },
            code: { type: 'string', enum: Object.keys(errorCatalogue) }, message: { type: 'string' }, description: { type: 'string' },
          },
        },
      },
    },
  };
}
