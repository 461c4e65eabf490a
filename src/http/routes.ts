// The route table: every route the hub serves, its method, path, whether it needs a token, and its handler.
import { countFeatures, getFeature, getFeaturesById, iterateFeatures, searchFeatures, spaceStatistics } from './handlers/feature-reads.js';
import { deleteFeature, deleteFeatures, patchFeature, postFeatures, putFeature, putFeatures } from './handlers/feature-writes.js';
import { createAccount, login, logout, me } from './handlers/accounts.js';
import { hubInfo } from './handlers/hub-info.js';
import { ogcCreateItem, ogcDeleteItem, ogcItem, ogcItems, ogcReplaceItem, ogcUpdateItem } from './handlers/ogc-items.js';
import { ogcApi, ogcCollection, ogcCollections, ogcConformance, ogcLanding, ogcQueryables } from './handlers/ogc-pages.js';
import { createProject, deleteProject, getProject, listProjects, patchProject, replaceProject } from './handlers/projects.js';
import { bboxFeatures, spatialFeatures, spatialFeaturesByGeometry, tileFeatures } from './handlers/spatial-reads.js';
import { createSpace, deleteSpace, getSpace, listSpaces, patchSpace } from './handlers/spaces.js';
import { createToken, deleteToken, getToken, listTokens } from './handlers/tokens.js';
import { rootPage, VIEWER_PATH, viewerFile, viewerLibrary, viewerPage } from './handlers/viewer.js';
import type { Handler } from './request-context.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Route {
  method: Method;
  path: string;
  /** Public routes need no token (API.md 1.3). */
  public?: boolean;
  /**
   * Authenticated by the login session cookie instead of a bearer token (API.md 9.1); a request from another
   * origin is refused (session-cookie.ts). `login` needs no session, but gets the same origin check.
   */
  session?: true | 'login';
  handler: Handler;
}

const SPACE = '/hub/spaces/:spaceId';
const FEATURE = `${SPACE}/features/:featureId`;
const PROJECTS = '/project-api/projects';
const PROJECT = `${PROJECTS}/:projectId`;
const COLLECTION = '/ogc/collections/:spaceId';
const ITEM = `${COLLECTION}/items/:featureId`;

export const routes: Route[] = [
  { method: 'GET', path: '/', public: true, handler: rootPage },
  { method: 'GET', path: '/hub', public: true, handler: hubInfo },
  { method: 'GET', path: '/hub/health-status', public: true, handler: hubInfo },

  { method: 'GET', path: '/hub/spaces', handler: listSpaces },
  { method: 'POST', path: '/hub/spaces', handler: createSpace },
  { method: 'GET', path: SPACE, handler: getSpace },
  { method: 'PATCH', path: SPACE, handler: patchSpace },
  { method: 'DELETE', path: SPACE, handler: deleteSpace },

  { method: 'GET', path: `${SPACE}/features`, handler: getFeaturesById },
  { method: 'PUT', path: `${SPACE}/features`, handler: putFeatures },
  { method: 'POST', path: `${SPACE}/features`, handler: postFeatures },
  { method: 'DELETE', path: `${SPACE}/features`, handler: deleteFeatures },
  { method: 'GET', path: FEATURE, handler: getFeature },
  { method: 'PUT', path: FEATURE, handler: putFeature },
  { method: 'PATCH', path: FEATURE, handler: patchFeature },
  { method: 'DELETE', path: FEATURE, handler: deleteFeature },

  { method: 'GET', path: `${SPACE}/search`, handler: searchFeatures },
  { method: 'GET', path: `${SPACE}/iterate`, handler: iterateFeatures },
  { method: 'GET', path: `${SPACE}/count`, handler: countFeatures },
  { method: 'GET', path: `${SPACE}/statistics`, handler: spaceStatistics },

  { method: 'GET', path: `${SPACE}/bbox`, handler: bboxFeatures },
  { method: 'GET', path: `${SPACE}/tile/:type/:tileId`, handler: tileFeatures },
  { method: 'GET', path: `${SPACE}/spatial`, handler: spatialFeatures },
  { method: 'POST', path: `${SPACE}/spatial`, handler: spatialFeaturesByGeometry },

  // Project API (API.md 10)
  { method: 'GET', path: PROJECTS, handler: listProjects },
  { method: 'POST', path: PROJECTS, handler: createProject },
  { method: 'GET', path: PROJECT, handler: getProject },
  { method: 'PUT', path: PROJECT, handler: replaceProject },
  { method: 'PATCH', path: PROJECT, handler: patchProject },
  { method: 'DELETE', path: PROJECT, handler: deleteProject },
  // Account API (API.md 9.1)
  { method: 'POST', path: '/account-api/login', public: true, session: 'login', handler: login },
  { method: 'POST', path: '/account-api/logout', session: true, handler: logout },
  { method: 'GET', path: '/account-api/me', session: true, handler: me },
  { method: 'POST', path: '/account-api/accounts', session: true, handler: createAccount },

  // Token API (API.md 9)
  { method: 'GET', path: '/token-api/tokens/:token', public: true, handler: getToken },
  { method: 'GET', path: '/token-api/tokens', session: true, handler: listTokens },
  { method: 'POST', path: '/token-api/tokens', session: true, handler: createToken },
  { method: 'DELETE', path: '/token-api/tokens/:token', session: true, handler: deleteToken },

  // Web viewer: its files are public; the data it shows comes from the API calls above, with the user's token.
  { method: 'GET', path: VIEWER_PATH, public: true, handler: viewerPage },
  { method: 'GET', path: `${VIEWER_PATH}:file`, public: true, handler: viewerFile },
  { method: 'GET', path: `${VIEWER_PATH}lib/:file`, public: true, handler: viewerLibrary },

  // OGC API Features (Part 1, Part 4): landing page and conformance are public; the API definition lists the caller's collections (docs/decisions.md)
  { method: 'GET', path: '/ogc', public: true, handler: ogcLanding },
  { method: 'GET', path: '/ogc/conformance', public: true, handler: ogcConformance },
  { method: 'GET', path: '/ogc/api', handler: ogcApi },
  { method: 'GET', path: '/ogc/collections', handler: ogcCollections },
  { method: 'GET', path: COLLECTION, handler: ogcCollection },
  { method: 'GET', path: `${COLLECTION}/queryables`, handler: ogcQueryables },
  { method: 'GET', path: `${COLLECTION}/items`, handler: ogcItems },
  { method: 'POST', path: `${COLLECTION}/items`, handler: ogcCreateItem },
  { method: 'GET', path: ITEM, handler: ogcItem },
  { method: 'PUT', path: ITEM, handler: ogcReplaceItem },
  { method: 'PATCH', path: ITEM, handler: ogcUpdateItem },
  { method: 'DELETE', path: ITEM, handler: ogcDeleteItem },
];
