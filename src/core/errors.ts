// The error catalogue: every error the hub answers with, its code, HTTP status and message template.

/** ErrorResponse `error` member values (API.md 1.6). */
export type ErrorKind =
  | 'Exception' | 'IllegalArgument' | 'Conflict' | 'Unauthorized' | 'Forbidden'
  | 'TooManyRequests' | 'NotImplemented' | 'BadGateway' | 'Timeout' | 'PayloadToLarge';

interface CatalogueEntry {
  status: number;
  /** Message with `{name}` placeholders filled from the params given to `hubError`. */
  template: string;
  /** Framework-level errors use the `{"type":"error"}` body shape (API.md 1.6); `text` answers the message as text/plain (API.md 9). */
  shape?: 'error' | 'text';
  /** Headers the answer carries with this error (e.g. what a 415 would have accepted). */
  headers?: Readonly<Record<string, string>>;
}

export const errorCatalogue = {
  invalidJsonFeatures: { status: 400, template: 'Invalid JSON input string: {detail}' },
  invalidJsonSpace: { status: 400, template: 'Invalid JSON string: {detail}' },
  invalidRootType: { status: 400, template: 'Cannot read input JSON string. Expected a Feature, FeatureCollection or FeatureModificationList but the root {found}.' },
  invalidFeatureType: { status: 400, template: 'Unable to create a Feature from the provided input: the feature at position {position} has type {found}, expected "Feature".' },
  invalidFeature: { status: 400, template: 'Unable to create a Feature from the provided input: the feature at position {position} {problem}.' },
  invalidGeometry: { status: 400, template: 'Invalid geometry of the feature at position {position} (id {id}): {problem}' },
  duplicateFeatureId: { status: 400, template: 'Objects with the same ID {id} is included in the request.' },
  emptyFeatureId: { status: 400, template: 'Minimum length of object id should be 1. The feature at position {position} has an empty id.' },
  nulInFeatureId: { status: 400, template: 'The feature at position {position} has an id containing the NUL character (U+0000), which feature ids cannot hold.' },
  invalidModification: { status: 400, template: 'Invalid feature modification list: {problem}' },
  invalidParameter: { status: 400, template: 'Invalid value for the parameter {name}: {problem}' },
  limitOutOfRange: { status: 400, template: 'The parameter limit must be between 1 and 100000.' },
  invalidHandle: { status: 400, template: 'The parameter handle must be the decimal string of a non-negative integer, as returned by a previous iterate call; got "{handle}".' },
  ogcLimitOutOfRange: { status: 400, template: 'The parameter limit must be an integer between 1 and {max}.' },
  ogcInvalidBbox: { status: 400, template: 'Invalid bbox: {problem}' },
  ogcUnsupportedCrs: { status: 400, template: 'The parameter {name} must name {crs}, the only CRS served.' },
  ogcInvalidDatetime: { status: 400, template: 'Invalid datetime: {problem}. Give an RFC 3339 instant (2024-01-31T10:00:00Z) or an interval (start/end, with .. for an open end), compared with the features\' updatedAt.' },
  ogcTileMatrixSetNotFound: { status: 404, template: 'There is no tile matrix set {id}: this hub serves WebMercatorQuad.' },
  ogcInvalidTile: { status: 400, template: 'Invalid {name}: expected a whole number in decimal digits, got "{value}".' },
  ogcTileNotFound: { status: 404, template: 'There is no tile {tileMatrix}/{tileRow}/{tileCol} in WebMercatorQuad: tile matrices go from 0 to {maxLevel}, rows and columns of tile matrix z from 0 to 2^z - 1.' },
  ogcInvalidFormat: { status: 400, template: 'The parameter f must be one of {formats}.' },
  ogcFilterSyntax: { status: 400, template: 'The filter does not parse at line {line}, column {column} (offset {offset}): {problem}' },
  ogcInvalidFilter: { status: 400, template: 'Invalid filter: {problem}.' },
  ogcUnknownQueryable: { status: 400, template: 'The filter names the property {name}, which is not a queryable of this collection: see its queryables.' },
  ogcUnsupportedFilterLang: { status: 400, template: 'The parameter filter-lang must be cql2-text (the default) or cql2-json.' },
  ogcInvalidSortby: { status: 400, template: 'Invalid sortby: {problem}.' },
  ogcUnknownSortable: { status: 400, template: 'The parameter sortby names {name}, which is not a sortable of this collection: see its sortables.' },
  ogcInvalidSortHandle: { status: 400, template: 'The parameter handle is not one of the next links of this sorted read (sortby {sortby}): follow the next link as it was given.' },
  ogcInvalidFilterName: { status: 400, template: 'Invalid property filter: {problem}' },
  versionTooOld: { status: 400, template: 'Version {version} is no longer kept: the oldest version that can be read is {oldest}.' },
  versionNotYet: { status: 400, template: 'Version {version} does not exist yet: HEAD is {head}; the oldest version that can be read is {oldest}.' },
  versionNotReadable: { status: 400, template: 'The space has no version to read yet: HEAD is -1 until the first write.' },
  unknownVersionTag: { status: 400, template: 'No tag "{tag}" names a version of this space: give a version number, HEAD or the id of one of its tags.' },
  noHistory: { status: 400, template: 'The space keeps no history (versionsToKeep is 1): it has no changesets or tags. Raise versionsToKeep to keep them from the next write on.' },
  invalidPageToken: { status: 400, template: 'The parameter pageToken must be a nextPageToken this request answered before; got "{token}".' },
  changesetsNotFound: { status: 404, template: 'The requested resource does not exist: no version of the space {what}.' },
  invalidTag: { status: 400, template: 'Invalid tag: {problem}' },
  tagExists: { status: 409, template: 'The tag {tag} exists already; change it with PATCH /tags/{tag}.' },
  tagNotFound: { status: 404, template: 'The space has no tag {tag}.' },
  versionOfLayers: { status: 400, template: 'A virtual space has no versions of its own: each space it reads numbers its own versions. Read those spaces at their versions.' },
  statesOfLayers: { status: 400, template: 'version=* lists the states one space keeps of a feature: ask the space that holds it, this composite space or one it extends.' },
  changedTilesTooMany: { status: 400, template: 'The changed tiles of versions {from}..{to} at levels {levels} would need more than {limit} tiles tested: ask for a coarser level or a shorter range of versions.' },
  historyOfLayers: { status: 400, template: 'A virtual or composite space has no changesets or tags of its own: ask the spaces it is made of.' },
  // Webhook subscriptions (docs/subscriptions.md).
  invalidSubscription: { status: 400, template: 'Invalid subscription: {problem}' },
  subscriptionNeedsHistory: { status: 400, template: 'The space keeps no history (versionsToKeep is 1), which subscriptions are delivered from: raise versionsToKeep to at least 2 first.' },
  subscriptionOfLayers: { status: 400, template: 'A virtual or composite space has no history of its own to deliver: subscribe to the spaces it is made of.' },
  subscriptionExists: { status: 409, template: 'The space has a subscription {id} already; change it with PUT /subscriptions/{id}.' },
  subscriptionNotFound: { status: 404, template: 'The space has no subscription {id}.' },
  tooManySubscriptions: { status: 409, template: 'The space has {count} subscriptions, the most a space may have; delete one first.' },
  // Jobs (docs/jobs.md).
  invalidJob: { status: 400, template: 'Invalid job: {problem}' },
  invalidJobAction: { status: 400, template: 'Invalid desiredAction: {problem}' },
  jobNotFound: { status: 404, template: 'There is no job {id}.' },
  jobStateConflict: { status: 409, template: 'The job {id} is {state}: {action} needs it to be {needed}.' },
  jobNoInput: { status: 409, template: 'The job {id} has no input yet: upload it with POST /hub/jobs/{id}/inputs before START.' },
  jobNotImport: { status: 409, template: 'The job {id} is an export: it takes no input.' },
  jobNoOutput: { status: 409, template: 'The job {id} {problem}.' },
  jobOutputNotFound: { status: 404, template: 'The job {id} has no output file {name}: GET /hub/jobs/{id}/outputs lists those of a partitioned export.' },
  jobInputTooLarge: { status: 413, template: 'The upload is larger than {limit} bytes, the most a job input may be (HUB_JOBS_MAX_INPUT).' },
  missingFeatureIds: { status: 400, template: 'At least one feature ID should be provided as a query parameter.' },
  missingDeleteSelector: { status: 400, template: 'At least one identifier should be provided as a query parameter.' },
  invalidPropertyFilter: { status: 400, template: 'Invalid property filter "{filter}": {problem}' },
  invalidTileType: { status: 400, template: 'Invalid argument type. The tile type must be quadkey, web, tms or here; got {type}.' },
  vectorTileLevel: { status: 400, template: 'Invalid argument tileId. Vector tiles are served up to level {limit}; ask for level {level} as GeoJSON.' },
  invalidTileId: { status: 400, template: 'Invalid argument tileId. {problem}' },
  invalidClustering: { status: 400, template: 'Invalid clustering. {name} value. {problem}' },
  clusteringOnHereTile: { status: 400, template: 'Invalid clustering. Clustering is not supported on here tiles; use a web, quadkey or tms tile or a bbox.' },
  spaceValidation: { status: 400, template: 'Validation failed. {problem}' },
  schemaValidationFailed: { status: 400, template: "The feature at position {position} (id {id}) does not match the space's schema, nothing was written: {problem}" },
  invalidJsonProject: { status: 400, template: 'Invalid JSON string: {detail}' },
  projectValidation: { status: 400, template: 'Invalid project: {problem}' },
  projectIdMismatch: { status: 400, template: 'The project id in the body does not match the project id in the path.' },
  spaceIdMismatch: { status: 400, template: 'The resource ID in the body does not match the resource ID in the path.' },
  activityLogWithoutUUID: { status: 400, template: "Validation failed. The listener '{listener}' needs the property 'enableUUID' set to true when the space is created: the log chains a feature's states by their uuids." },
  creationOnlyProperty: { status: 400, template: "Validation failed. The property '{name}' can only get set on space creation!" },
  jsonTooDeep: { status: 400, template: 'The {what} nests too deep (at {where}): features, space definitions and filter values may nest at most {limit} levels.' },
  malformedUnicode: { status: 400, template: 'The {what} holds text that is not well-formed Unicode (an unpaired UTF-16 surrogate such as \\ud800) at {where}.' },
  tooManyValues: { status: 400, template: 'The parameter {name} holds {count} values; at most {limit} are allowed in one request.' },
  propertyPathTooDeep: { status: 400, template: 'The property path {path} in {parameter} has {count} segments; at most {limit} are allowed.' },
  invalidCoordinate: { status: 400, template: "Invalid '{name}' query parameter, must be a WGS'84 {axis} in decimal degree (so a value between -{max} and +{max})." },
  notExactlyOneValue: { status: 400, template: "Invalid '{name}' query parameter, expected exactly one value." },
  spatialCoordinateMissing: { status: 400, template: "'{name}' Param is missing!" },
  spatialSourceInvalid: { status: 400, template: "Invalid arguments! Define 'lat' and 'lon' OR reference a 'refFeatureId' in a 'refSpaceId'!" },
  refSpaceNotFound: { status: 400, template: "The resource ID '{id}' does not exist!" },
  refFeatureWithoutGeometry: { status: 400, template: "The 'refFeatureId' : '{id}' has no geometry to search with." },
  notAGeometry: { status: 400, template: "The provided content is of type '{type}'. Expected is a GeoJson-Geometry [Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon]." },
  invalidQueryGeometry: { status: 400, template: "Geometry isn't valid! {problem}" },
  tooManyCoordinates: { status: 400, template: 'The geometry holds {count} coordinates; at most {limit} are allowed.' },
  clipAcrossAntimeridian: { status: 400, template: 'clip=true cannot cut to a search area that crosses the antimeridian or reaches a pole (radius {radius} m); ask without clip.' },
  bufferCrossesAntimeridian: { status: 400, template: 'The geometry buffered by {radius} m crosses the antimeridian; only points may be searched across it.' },
  malformedUrl: { status: 400, template: 'The request URL is malformed: {problem}.', shape: 'error' },
  malformedRequest: { status: 400, template: 'The request is malformed: {problem}.', shape: 'error' },
  missingCredentials: { status: 401, template: 'Missing auth credentials.', shape: 'error' },
  invalidCredentials: { status: 401, template: 'Invalid or expired auth credentials.', shape: 'error' },
  insufficientRights: { status: 403, template: 'Insufficient rights. Token access: {granted}. Request access: {requested}.' },
  noHubRights: { status: 403, template: 'Insufficient rights. The token holds no rights on spaces (urm "xyz-hub").' },
  spaceQuotaReached: { status: 403, template: 'The maximum number of {limit} spaces was reached.' },
  featureQuotaReached: { status: 403, template: 'The maximum number of {limit} features for the resource "{space}" was reached. The write would make it {count}.' },
  projectForbidden: { status: 403, template: 'Insufficient rights. {problem}' },
  spaceNotFound: { status: 404, template: 'The requested resource does not exist.' },
  spaceOfFeaturesNotFound: { status: 404, template: 'The resource with this ID does not exist.' },
  featureNotFound: { status: 404, template: 'The requested resource does not exist.' },
  projectNotFound: { status: 404, template: 'The requested resource does not exist.' },
  refFeatureNotFound: { status: 404, template: "The 'refFeatureId' : '{id}' does not exist." },
  routeNotFound: { status: 404, template: 'The requested resource does not exist.', shape: 'error' },
  methodNotAllowed: { status: 405, template: 'The method {method} is not allowed on {path}.', shape: 'error' },
  readOnlySpace: { status: 405, template: 'The method is not allowed, because the resource "{id}" is marked as read-only. Update the space to enable writes.' },
  spaceExists: { status: 409, template: 'The record {{id}} exists.' },
  projectExists: { status: 409, template: 'The record {{id}} exists.' },
  featureExists: { status: 409, template: 'The record {{id}} exists.' },
  featureMissing: { status: 409, template: 'The record does not exist.' },
  uuidMismatch: { status: 409, template: "The feature with id {id} cannot be replaced. The provided UUID doesn't match the UUID of the head state: {uuid}" },
  // Writes of a feature read at an earlier version (its ORIGIN) of a space keeping history (ADR 002, "Merges").
  versionConflict: { status: 409, template: "The feature with id {id} cannot be {operation}. The provided version doesn't match the version of the head state: {head} (the feature was read at version {origin} and changed since); read it again, or write it with e=patch or e=merge to merge the changes." },
  mergeConflict: { status: 409, template: 'The feature with id {id} cannot be merged: it was read at version {origin}, and version {head} changed the same members since: {members}. Read it again and reapply the edit, or choose a resolution with cr=retain or cr=replace.' },
  originNotKept: { status: 409, template: 'The feature with id {id} cannot be merged: it was read at version {origin}, which is no longer kept (the oldest version kept is {oldest}). Read it again and reapply the edit.' },
  invalidCompressedBody: { status: 400, template: 'The request body could not be decompressed as {encoding}: {detail}' },
  // RFC 9110 12.5.3: a 415 refusing a request's content coding names the codings the hub reads (body-stream.ts).
  unsupportedContentEncoding: { status: 415, template: 'The request body has a Content-Encoding this hub does not read: send it with gzip, deflate or none.', headers: { 'accept-encoding': 'gzip, deflate' } },
  requestTimeout: { status: 408, template: 'The request was not received in time.', shape: 'error' },
  bodyTimeout: { status: 408, template: 'The request body stopped arriving: no data for {seconds} seconds.' },
  payloadTooLarge: { status: 413, template: 'The request payload is bigger than the maximum allowed.' },
  projectTooLarge: { status: 413, template: 'The project would take {size} bytes as stored; at most {limit} are allowed.' },
  uriTooLong: { status: 414, template: 'The request URL is too long: {problem}.', shape: 'error' },
  headersTooLarge: { status: 431, template: 'The request line and headers together are larger than the server accepts.', shape: 'error' },
  tooManyRequests: { status: 429, template: 'Too many requests for the service node.' },
  tokenRateLimited: { status: 429, template: 'Too many requests for this token: it may make {limit} requests a minute.' },
  storageFailure: { status: 502, template: 'Connector error.' },
  storageTimeout: { status: 504, template: 'Connector timeout error.' },
  layerUnavailable: { status: 409, template: 'The space {space} reads from the space {id}, which {problem}.' },
  customVirtualSpace: { status: 501, template: 'The space {id} is a virtual space of the operation custom, which is stored but cannot be read or written yet.' },
  activityLogSpaceTaken: { status: 409, template: 'The activity log of the space {source} would be the space {id}, which exists already.' },
  activityLogManaged: { status: 409, template: 'The space {id} is the activity log of the space {source}: the hub manages it; change or delete the listener of {source} instead.' },
  activityLogMissing: { status: 409, template: 'The activity log space {id} of the space {source} is missing, so nothing was written; set the listener again (PATCH the space) to create it.' },
  writeAcrossDatabases: { status: 409, template: 'The write would change spaces stored in different databases; one write can change only one database.' },
  internal: { status: 500, template: 'Internal server error.' },
  // GET /metrics (docs/operations.md): who may read it is HUB_METRICS, not a token's rights.
  metricsForbidden: { status: 403, template: 'GET /metrics {problem} (HUB_METRICS).', shape: 'error' },
  // Accounts, sessions and the Token API (API.md 9, 9.1).
  invalidJsonBody: { status: 400, template: 'Invalid JSON body: {detail}' },
  invalidAccountInput: { status: 400, template: 'Invalid {field}: {problem}' },
  invalidTokenInput: { status: 400, template: 'Invalid {field}: {problem}' },
  jsonBodyRequired: { status: 415, template: 'This request takes a JSON body: send it with Content-Type: application/json.' },
  crossSiteRequest: { status: 403, template: 'The Origin {origin} is not this hub; requests authenticated by the session cookie must come from the hub itself.' },
  notLoggedIn: { status: 401, template: 'Unauthorized', shape: 'error' },
  loginFailed: { status: 401, template: 'Wrong username or password.', shape: 'error' },
  tooManyLoginAttempts: { status: 429, template: 'Too many failed logins for this username; try again in {seconds} seconds.' },
  adminRequired: { status: 403, template: 'Only an admin account may {action}.' },
  accountExists: { status: 409, template: 'An account with the username {username} exists.' },
  invalidTokenId: { status: 412, template: 'tokenId is not valid', shape: 'text' },
  tokenNotFound: { status: 404, template: 'Token not found', shape: 'text' },
} satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

export type ErrorParams = Record<string, string | number>;

export class HubError extends Error {
  readonly status: number;
  readonly shape: 'error' | 'text' | 'ErrorResponse';
  readonly headers: Readonly<Record<string, string>> | undefined;

  /** `retryAfter`: seconds until the request may be repeated (429). */
  constructor(readonly code: ErrorCode, message: string, readonly details?: object, readonly retryAfter?: number) {
    super(message);
    const entry: CatalogueEntry = errorCatalogue[code];
    this.status = entry.status;
    this.shape = entry.shape ?? 'ErrorResponse';
    this.headers = entry.headers;
  }

  /** The ErrorResponse `error` member for this status (API.md 1.6). */
  get kind(): ErrorKind {
    if (this.status === 400) return 'IllegalArgument';
    if (this.status === 401) return 'Unauthorized';
    if (this.status === 408) return 'Timeout';
    if (this.status === 429) return 'TooManyRequests';
    if (this.status === 413) return 'PayloadToLarge';
    if (this.status === 502) return 'BadGateway';
    if (this.status === 504) return 'Timeout';
    return 'Exception';
  }
}

export function formatMessage(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole);
}

export function hubError(code: ErrorCode, params: ErrorParams = {}, details?: object, retryAfter?: number): HubError {
  return new HubError(code, formatMessage(errorCatalogue[code].template, params), details, retryAfter);
}
