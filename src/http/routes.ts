// The route table: every route the hub serves, its method, path, how it authenticates, the query parameters it reads, and its handler.
import { countFeatures, getFeature, getFeaturesById, iterateFeatures, searchFeatures, spaceStatistics } from './handlers/feature-reads.js';
import { deleteFeature, deleteFeatures, patchFeature, postFeatures, putFeature, putFeatures } from './handlers/feature-writes.js';
import { createAccount, login, logout, me } from './handlers/accounts.js';
import { spaceEvents } from './handlers/events.js';
import { createTag, deleteChangesets, deleteTag, getChangedTiles, getChangeset, getChangesets, getTag, listTags, patchTag } from './handlers/history.js';
import { hubInfo } from './handlers/hub-info.js';
import { healthStatus, metricsPage } from './handlers/operations.js';
import { createJob, deleteJob, downloadJobOutput, downloadJobOutputPart, getJob, getJobStatus, listJobs, patchJobStatus, uploadJobInput } from './handlers/jobs.js';
import { openApiYaml } from './handlers/openapi.js';
import { ogcCreateItem, ogcDeleteItem, ogcItem, ogcItems, ogcReplaceItem, ogcUpdateItem } from './handlers/ogc-items.js';
import { ogcApi, ogcCollection, ogcCollections, ogcConformance, ogcLanding, ogcQueryables, ogcSortables } from './handlers/ogc-pages.js';
import { ogcTile, ogcTileMatrixSet, ogcTileMatrixSets, ogcTileset, ogcTilesets } from './handlers/ogc-tiles.js';
import { createProject, deleteProject, getProject, listProjects, patchProject, replaceProject } from './handlers/projects.js';
import { bboxFeatures, spatialFeatures, spatialFeaturesByGeometry, tileFeatures } from './handlers/spatial-reads.js';
import { createSpace, deleteSpace, getSpace, listSpaces, patchSpace } from './handlers/spaces.js';
import { tileJson } from './handlers/tile-json.js';
import { createSubscription, deleteSubscription, getSubscription, listSubscriptions, replaceSubscription } from './handlers/subscriptions.js';
import { createToken, deleteToken, getToken, listTokens } from './handlers/tokens.js';
import { rootPage, VIEWER_PATH, viewerFile, viewerLibrary, viewerPage } from './handlers/viewer.js';
import type { QueryName } from './query-parameters.js';
import type { Handler } from './request-context.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Route {
  method: Method;
  path: string;
  /** One line for the API document (api-document.ts). */
  summary: string;
  /** The query parameters the handler reads (query-parameters.ts); RawQuery refuses to read any other. */
  query?: readonly QueryName[];
  /** Public routes need no token (API.md 1.3). */
  public?: boolean;
  /**
   * Authenticated by the login session cookie instead of a bearer token (API.md 9.1); a request from another
   * origin is refused (session-cookie.ts). `login` needs no session, but gets the same origin check.
   */
  session?: true | 'login';
  /** Reads that take `version`/`versionRef` (ADR 002): at any kept version. */
  versions?: 'any';
  handler: Handler;
}

const SPACE = '/hub/spaces/:spaceId';
const FEATURE = `${SPACE}/features/:featureId`;
const JOB = '/hub/jobs/:jobId';
const PROJECTS = '/project-api/projects';
const PROJECT = `${PROJECTS}/:projectId`;
const COLLECTION = '/ogc/collections/:spaceId';
const ITEM = `${COLLECTION}/items/:featureId`;

const OUTPUT: QueryName[] = ['selection', 'force2D'];
const FILTERS: QueryName[] = ['tags', 'p.*', 'author'];
const WRITE: QueryName[] = ['addTags', 'removeTags', 'prefixId', 'transactional'];
const AREA: QueryName[] = [...FILTERS, ...OUTPUT, 'limit', 'clip'];
const DISPLAY: QueryName[] = ['clustering', 'clustering.*', 'tweaks', 'tweaks.strength', 'tweaks.algorithm', 'tweaks.samplingthreshold', 'tweaks.defaultselection'];

export const routes: Route[] = [
  { method: 'GET', path: '/', summary: 'Service information; a browser is sent to the viewer', public: true, handler: rootPage },
  { method: 'GET', path: '/hub', summary: 'Service information and liveness (touches no storage)', public: true, handler: hubInfo },
  { method: 'GET', path: '/hub/health-status', summary: 'Readiness: service information, 503 when the storage does not answer', public: true, handler: healthStatus },
  // Operations (docs/operations.md): who may read the metrics is HUB_METRICS, not a token
  { method: 'GET', path: '/metrics', summary: 'Prometheus metrics of the node (HUB_METRICS: loopback callers by default)', public: true, handler: metricsPage },
  { method: 'GET', path: '/hub/static/openapi/stable.yaml', summary: 'This API document (OpenAPI 3.0, YAML)', public: true, handler: openApiYaml },

  { method: 'GET', path: '/hub/spaces', summary: 'The spaces the token may access', query: ['owner', 'contentUpdatedAt', 'includeRights', 'includeConnectors'], handler: listSpaces },
  { method: 'POST', path: '/hub/spaces', summary: 'Create a space', handler: createSpace },
  { method: 'GET', path: SPACE, summary: 'One space', handler: getSpace },
  { method: 'PATCH', path: SPACE, summary: 'Change members of a space', handler: patchSpace },
  { method: 'DELETE', path: SPACE, summary: 'Delete a space and its features', handler: deleteSpace },

  { method: 'GET', path: `${SPACE}/features`, summary: 'Features by id', query: ['id', 'author', ...OUTPUT], versions: 'any', handler: getFeaturesById },
  { method: 'PUT', path: `${SPACE}/features`, summary: 'Write features: create or replace', query: WRITE, handler: putFeatures },
  { method: 'POST', path: `${SPACE}/features`, summary: 'Write features or a modification list', query: [...WRITE, 'e', 'ne', 'cr'], handler: postFeatures },
  { method: 'DELETE', path: `${SPACE}/features`, summary: 'Delete features by id or by tags', query: ['id', 'tags'], handler: deleteFeatures },
  { method: 'GET', path: FEATURE, summary: 'One feature', query: OUTPUT, versions: 'any', handler: getFeature },
  { method: 'PUT', path: FEATURE, summary: 'Create or replace one feature', query: WRITE, handler: putFeature },
  { method: 'PATCH', path: FEATURE, summary: 'Change one feature', query: WRITE, handler: patchFeature },
  { method: 'DELETE', path: FEATURE, summary: 'Delete one feature', handler: deleteFeature },

  { method: 'GET', path: `${SPACE}/search`, summary: 'Features matching tags and property filters', query: [...FILTERS, ...OUTPUT, 'limit'], versions: 'any', handler: searchFeatures },
  { method: 'GET', path: `${SPACE}/iterate`, summary: 'All features, page by page', query: [...FILTERS, ...OUTPUT, 'limit', 'handle', 'nextPageToken'], versions: 'any', handler: iterateFeatures },
  { method: 'GET', path: `${SPACE}/count`, summary: 'How many features match', query: FILTERS, versions: 'any', handler: countFeatures },
  { method: 'GET', path: `${SPACE}/statistics`, summary: 'Statistics of the space', versions: 'any', handler: spaceStatistics },

  { method: 'GET', path: `${SPACE}/bbox`, summary: 'Features in a bounding box', query: [...AREA, 'west', 'south', 'east', 'north', ...DISPLAY], versions: 'any', handler: bboxFeatures },
  { method: 'GET', path: `${SPACE}/tile/:type/:tileId`, summary: 'Features in a tile, as GeoJSON or MVT', query: [...AREA, 'margin', 'mode', 'vizSampling', ...DISPLAY], versions: 'any', handler: tileFeatures },
  { method: 'GET', path: `${SPACE}/tilejson.json`, summary: 'TileJSON 3.0.0 of the space\'s vector tiles (docs/vector-tiles.md)', handler: tileJson },
  { method: 'GET', path: `${SPACE}/spatial`, summary: 'Features near a point, a feature or in an H3 cell', query: [...AREA, 'lat', 'lon', 'refSpaceId', 'refFeatureId', 'h3Index', 'radius'], versions: 'any', handler: spatialFeatures },
  { method: 'POST', path: `${SPACE}/spatial`, summary: 'Features near or in a geometry', query: [...AREA, 'radius'], versions: 'any', handler: spatialFeaturesByGeometry },

  // History (ADR 002, API.md 12): changesets and tags, in the reference hub's shapes
  { method: 'GET', path: `${SPACE}/changesets`, summary: 'The changesets of a range of versions, paged', query: ['startVersion', 'endVersion', 'versionRef', 'author', 'startTime', 'endTime', 'limit', 'pageToken'], handler: getChangesets },
  { method: 'DELETE', path: `${SPACE}/changesets`, summary: 'Remove the history before a version (version=lt=N)', query: ['version'], handler: deleteChangesets },
  { method: 'GET', path: `${SPACE}/changesets/tiles`, summary: 'The tiles whose content changed between two versions', query: ['startVersion', 'endVersion', 'type', 'level'], handler: getChangedTiles },
  { method: 'GET', path: `${SPACE}/changesets/:version`, summary: 'The changeset of one version, paged', query: ['limit', 'pageToken'], handler: getChangeset },
  { method: 'GET', path: `${SPACE}/tags`, summary: 'The tags of a space', handler: listTags },
  // Live data (docs/events.md): each committed version as a Server-Sent Event, narrowed by tags, properties and a bbox
  { method: 'GET', path: `${SPACE}/events`, summary: 'The committed versions of the space as Server-Sent Events', query: ['since', 'tags', 'p.*', 'west', 'south', 'east', 'north'], handler: spaceEvents },
  { method: 'POST', path: `${SPACE}/tags`, summary: 'Name a version (HEAD when none is given)', handler: createTag },
  { method: 'GET', path: `${SPACE}/tags/:tagId`, summary: 'One tag', handler: getTag },
  { method: 'PATCH', path: `${SPACE}/tags/:tagId`, summary: 'Move a tag or change its description', handler: patchTag },
  { method: 'DELETE', path: `${SPACE}/tags/:tagId`, summary: 'Delete a tag', handler: deleteTag },

  // Webhook subscriptions (docs/subscriptions.md), in the reference hub's shape: delivered from the space's history
  { method: 'GET', path: `${SPACE}/subscriptions`, summary: 'The webhook subscriptions of a space', handler: listSubscriptions },
  { method: 'POST', path: `${SPACE}/subscriptions`, summary: 'Subscribe a URL to the space\'s changes (answers its signing secret, once)', handler: createSubscription },
  { method: 'GET', path: `${SPACE}/subscriptions/:subscriptionId`, summary: 'One subscription with its delivery status', handler: getSubscription },
  { method: 'PUT', path: `${SPACE}/subscriptions/:subscriptionId`, summary: 'Change a subscription; status.state ACTIVE resumes it', handler: replaceSubscription },
  { method: 'DELETE', path: `${SPACE}/subscriptions/:subscriptionId`, summary: 'Delete a subscription', handler: deleteSubscription },

  // Jobs (docs/jobs.md), in the reference hub's shape: imports of an uploaded file into a space, exports of a space into a file
  { method: 'GET', path: '/hub/jobs', summary: 'The caller\'s jobs, newest first', handler: listJobs },
  { method: 'POST', path: '/hub/jobs', summary: 'Create an import (source Files, target Space) or an export (source Space, target Files)', handler: createJob },
  { method: 'GET', path: JOB, summary: 'One job with its status', handler: getJob },
  { method: 'DELETE', path: JOB, summary: 'Delete a job that is not running, with its files', handler: deleteJob },
  { method: 'GET', path: `${JOB}/status`, summary: 'The state, estimated progress and counts of a job', handler: getJobStatus },
  { method: 'PATCH', path: `${JOB}/status`, summary: 'desiredAction START, CANCEL or RESUME', handler: patchJobStatus },
  { method: 'POST', path: `${JOB}/inputs`, summary: 'Upload the input file of an import (streamed to disk)', handler: uploadJobInput },
  { method: 'GET', path: `${JOB}/outputs`, summary: 'Download the output file of an export, or list those of a partitioned one', handler: downloadJobOutput },
  { method: 'GET', path: `${JOB}/outputs/:name`, summary: 'Download one file of a partitioned export', handler: downloadJobOutputPart },

  // Project API (API.md 10)
  { method: 'GET', path: PROJECTS, summary: 'The caller\'s projects, or every published one', query: ['paginate', 'published', 'limit', 'handle'], handler: listProjects },
  { method: 'POST', path: PROJECTS, summary: 'Create a project', handler: createProject },
  { method: 'GET', path: PROJECT, summary: 'One project', handler: getProject },
  { method: 'PUT', path: PROJECT, summary: 'Replace or create a project', handler: replaceProject },
  { method: 'PATCH', path: PROJECT, summary: 'Change members of a project', handler: patchProject },
  { method: 'DELETE', path: PROJECT, summary: 'Delete a project', handler: deleteProject },

  // Account API (API.md 9.1)
  { method: 'POST', path: '/account-api/login', summary: 'Log in: a session cookie', public: true, session: 'login', handler: login },
  { method: 'POST', path: '/account-api/logout', summary: 'End the session', session: true, handler: logout },
  { method: 'GET', path: '/account-api/me', summary: 'The logged-in account', session: true, handler: me },
  { method: 'POST', path: '/account-api/accounts', summary: 'Create an account (admins)', session: true, handler: createAccount },

  // Token API (API.md 9)
  { method: 'GET', path: '/token-api/tokens/:token', summary: 'A token\'s record, by the token itself', public: true, handler: getToken },
  { method: 'GET', path: '/token-api/tokens', summary: 'The logged-in account\'s tokens', session: true, handler: listTokens },
  { method: 'POST', path: '/token-api/tokens', summary: 'Create a token', session: true, handler: createToken },
  { method: 'DELETE', path: '/token-api/tokens/:token', summary: 'Delete a token', session: true, handler: deleteToken },

  // Web viewer: its files are public; the data it shows comes from the API calls above, with the user's token.
  { method: 'GET', path: VIEWER_PATH, summary: 'The web viewer', public: true, handler: viewerPage },
  { method: 'GET', path: `${VIEWER_PATH}:file`, summary: 'A file of the web viewer', public: true, handler: viewerFile },
  { method: 'GET', path: `${VIEWER_PATH}lib/:file`, summary: 'A file of the map library', public: true, handler: viewerLibrary },

  // OGC API Features (Part 1, Part 4): landing page and conformance are public; the API definition lists the caller's collections (docs/decisions.md)
  { method: 'GET', path: '/ogc', summary: 'OGC API landing page', query: ['f'], public: true, handler: ogcLanding },
  { method: 'GET', path: '/ogc/conformance', summary: 'OGC conformance classes', query: ['f'], public: true, handler: ogcConformance },
  { method: 'GET', path: '/ogc/api', summary: 'This API document, with the caller\'s collections', query: ['f'], handler: ogcApi },
  { method: 'GET', path: '/ogc/collections', summary: 'One collection per readable space', query: ['f'], handler: ogcCollections },
  { method: 'GET', path: COLLECTION, summary: 'One collection', query: ['f'], handler: ogcCollection },
  { method: 'GET', path: `${COLLECTION}/queryables`, summary: 'The properties items can be filtered by', query: ['f'], handler: ogcQueryables },
  { method: 'GET', path: `${COLLECTION}/sortables`, summary: 'The properties items can be sorted by', query: ['f'], handler: ogcSortables },
  { method: 'GET', path: `${COLLECTION}/items`, summary: 'Items, paged by next links', query: ['f', 'limit', 'bbox', 'bbox-crs', 'crs', 'datetime', 'filter', 'filter-lang', 'filter-crs', 'sortby', 'handle', '*'], versions: 'any', handler: ogcItems },
  { method: 'POST', path: `${COLLECTION}/items`, summary: 'Create an item', query: ['f'], handler: ogcCreateItem },
  { method: 'GET', path: ITEM, summary: 'One item', query: ['f', 'crs'], versions: 'any', handler: ogcItem },
  { method: 'PUT', path: ITEM, summary: 'Replace or create an item', query: ['f'], handler: ogcReplaceItem },
  { method: 'PATCH', path: ITEM, summary: 'Change an item', query: ['f'], handler: ogcUpdateItem },
  { method: 'DELETE', path: ITEM, summary: 'Delete an item', query: ['f'], handler: ogcDeleteItem },

  // OGC API Tiles (docs/vector-tiles.md): the tile matrix set is public; a collection's tiles need readFeatures like the XYZ tile route
  { method: 'GET', path: '/ogc/tileMatrixSets', summary: 'The tile matrix sets served', query: ['f'], public: true, handler: ogcTileMatrixSets },
  { method: 'GET', path: '/ogc/tileMatrixSets/:tileMatrixSetId', summary: 'A tile matrix set\'s definition', query: ['f'], public: true, handler: ogcTileMatrixSet },
  { method: 'GET', path: `${COLLECTION}/tiles`, summary: 'The vector tilesets of a collection', query: ['f'], handler: ogcTilesets },
  { method: 'GET', path: `${COLLECTION}/tiles/:tileMatrixSetId`, summary: 'A vector tileset: its tile URL template and limits', query: ['f'], handler: ogcTileset },
  { method: 'GET', path: `${COLLECTION}/tiles/:tileMatrixSetId/:tileMatrix/:tileRow/:tileCol`, summary: 'A vector tile (MVT); 204 when empty', handler: ogcTile },
];
