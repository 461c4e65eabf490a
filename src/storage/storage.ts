// The storage interface every engine implements: spaces, features, access records and projects.
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery } from '../core/feature-query.js';
import type { SpaceListFilter } from '../core/space-query.js';
import type { SpaceDefinition } from '../core/space-definition.js';
import type { VectorTileRequest } from '../geo/vector-tile-request.js';
import type { BBox } from '../geo/bbox.js';
import type { Geometry } from '../geo/geometry.js';

/**
 * Where a space's features live, as the engine resolved it: its internal number and the database holding it
 * (`''` for an engine with one database). Feature operations take it, so a request resolves its space once.
 */
export interface SpaceKey {
  sid: number;
  location: string;
}

export interface StoredSpace {
  id: string;
  key: SpaceKey;
  definition: SpaceDefinition;
  /** Time of the last feature write or delete; the creation time until then. */
  contentUpdatedAt: number;
  /** Grows with every feature write; identifies the state of the content (ETags). */
  revision: number;
}

/**
 * A space's definition and, looked up with it, the stored text of one of its features (undefined when it has
 * none by that id). No counters: a single feature's ETag comes from its own text.
 */
export interface SpaceWithFeature {
  definition: SpaceDefinition;
  feature: string | undefined;
}

/**
 * A space and, read in the same statement, the first features of an unfiltered area read of it at HEAD
 * (SpaceStore.getWithArea).
 */
export interface SpaceWithArea {
  space: StoredSpace;
  /**
   * The read's first texts in insertion order, as FeatureStore.queryText pages them, and whether they are all it
   * finds (`complete`); absent when this statement could not read them: the space's features are held in another
   * database, the read is filtered, or the area holds too many features for one probe.
   */
  first?: { page: FeatureTextPage; complete: boolean };
}

export interface SpaceStore {
  /**
   * Throws a StorageError `spaceExists` when the id is taken. With `near` the space goes into the database
   * holding that one (an activity log is written in the transaction of its source's writes).
   */
  create(id: string, definition: SpaceDefinition, createdAt: number, near?: SpaceKey): Promise<StoredSpace>;
  get(id: string): Promise<StoredSpace | undefined>;
  /**
   * GET of one feature, the most frequent request: the space and the feature in one statement of two index
   * lookups where the engine can. Undefined when the space is unknown.
   */
  getWithFeature(id: string, featureId: string): Promise<SpaceWithFeature | undefined>;
  /**
   * An area read (bbox, tile, spatial search) with its space's lookup, where the engine gains from one statement for
   * both (PostgreSQL: a round trip and a statement less per small box). The space is as `get` finds it; its first
   * texts are read as if it held its own features, and must be handed out only once the read was granted on the space
   * as found, and only if it is a plain space. Undefined when the space is unknown.
   */
  getWithArea?(id: string, query: FeatureQuery): Promise<SpaceWithArea | undefined>;
  /**
   * The spaces matching the filter in creation order, a page of at most `pageSize` at a time: each page is
   * one keyset query (by the internal space number), so memory stays bounded and no statement stays open
   * between pages.
   */
  list(filter: SpaceListFilter, pageSize: number): AsyncIterable<StoredSpace[]>;
  /** Read-modify-write of the definition inside one transaction; undefined when the space is unknown. */
  update(id: string, change: (current: StoredSpace) => SpaceDefinition): Promise<StoredSpace | undefined>;
  /** Removes the space and all its features; undefined when unknown. */
  delete(id: string): Promise<StoredSpace | undefined>;
}

/** A feature ready to be stored: its JSON text plus the columns that index it. */
export interface FeatureWrite {
  id: string;
  json: string;
  geometryType: string | null;
  bbox: BBox | null;
  tags: string[];
  /**
   * Parts of `json`, where the writer made them anyway: PostgreSQL stores its jsonb and geometry copies from them
   * instead of parsing `json` again. Without them it takes them from `json`.
   */
  parts?: FeatureWriteParts;
  /**
   * The namespace member at the end of `json` (core/namespace-cut.ts), where the writer put it there. SQLite stores its
   * length in bytes beside the text, so that reads can hand the text out without it (absent: NULL); PostgreSQL stores
   * none (a cut in SQL cost the database more than the hub's scan: docs/import-export.md, "Export, fourth round").
   */
  namespaceCut?: string;
}

export interface FeatureWriteParts {
  /** The `properties` member of `json` without the hub's namespace (`@ns:com:here:xyz`), as JSON text. */
  userProperties: string;
  /** The geometry of `json`, null without one. */
  geometry: Geometry | null;
}

export interface WritePlan {
  upserts: FeatureWrite[];
  deletes: string[];
  timestamp: number;
}

/**
 * Decides a write from the stored state of the affected features (id → stored JSON text).
 * It runs inside the storage transaction, so its decisions (exists/not, uuid checks) cannot
 * race with another writer; throwing aborts the whole write.
 */
export type WritePlanner<T> = (existing: ReadonlyMap<string, string>, versions: ReadonlyMap<number, number>, origins: ReadonlyMap<number, OriginStates>)
  => { plan: WritePlan; result: T; next?: WriteStep };

/**
 * The spaces of a write that keep history (`versionsToKeep` > 1, ADR 002): their next versions are taken, under
 * the lock of their counters, before anything is planned, and handed to the planners by `sid`, so that the texts
 * carry them. A space of the write that keeps no history takes its number as the transaction's last statement.
 * Either kind keeps its number only when its step changes a feature.
 */
export interface HistoryOfWrite {
  versioned: readonly SpaceKey[];
  /** Who the versions are recorded for (the caller's account). */
  author: string;
  /**
   * The ORIGINs of the write's features by the `sid` of the space each goes to, which must keep history: id → the
   * version the writer read the feature at. Their states then are read under the version locks, before the plans, and
   * handed to them (ADR 002, "Merges").
   */
  origins?: ReadonlyMap<number, ReadonlyMap<string, number>>;
}

/** What a space of a write held at its features' ORIGINs, read in the write's transaction under its version lock. */
export interface OriginStates {
  /** The space's versions before this write. */
  versions: SpaceVersions;
  /**
   * For each asked id whose current state was written after its ORIGIN: its state at ORIGIN (null: it had none then, or
   * none is kept). Ids unchanged since their ORIGIN, or not stored now, are absent.
   */
  states: ReadonlyMap<string, string | null>;
}

/** A space's version numbers (ADR 002): HEAD (−1 before the first write) and the oldest version its history can restore. */
export interface SpaceVersions {
  head: number;
  /** The last version written without history (or 0): older versions cannot be rebuilt, whatever versionsToKeep says. */
  historyFrom: number;
  /** The version before which `DELETE /changesets` removed the history (or 0); tagged versions stay readable. */
  deletedBefore: number;
}

/**
 * A further write in the same transaction, in another space of the same database (an activity log, the layer
 * of a composite or virtual space): planned, like the first, from the stored features it names, and it may
 * name one more. Each step sees what the steps before it wrote. A step in another database than the first
 * throws a StorageError `crossDatabase`, which aborts the whole write.
 */
export interface WriteStep {
  space: SpaceKey;
  ids: readonly string[];
  planner: (existing: ReadonlyMap<string, string>, versions: ReadonlyMap<number, number>) => { plan: WritePlan; next?: WriteStep };
}

export interface TagCount { key: string; count: number }
export interface PropertyStatistic { key: string; count: number; datatype?: string }

export interface SpaceStatistics {
  count: number;
  dataSize: number;
  bbox: BBox | null;
  geometryTypes: string[];
  tags: TagCount[];
  properties: PropertyStatistic[];
  /**
   * True when bbox, geometry types, tags and properties come from a sample of a large space (tag and
   * property counts scaled to the whole space); count and dataSize are the counters either way.
   */
  estimated: boolean;
}

export interface StatisticsOptions {
  /** Spaces with at most this many features get exact figures; larger ones are sampled. */
  exactUpTo: number;
}

/**
 * Every feature operation names the space by the key its lookup returned; a space deleted since then has no features.
 * Reads take the `signal` of the request they answer: when it aborts (the client went away) the engine
 * cancels the statement running for it and reads no further page. A read running past the configured
 * deadline fails with a StorageError `timeout`.
 */
export interface FeatureStore {
  /**
   * Throws a StorageError `spaceGone` when the space (or a step's space) was deleted in the meantime, and `leaseLost`
   * when the write has a `fence` that does not hold: then it changes nothing.
   */
  write<T>(space: SpaceKey, ids: readonly string[], planner: WritePlanner<T>, history?: HistoryOfWrite, fence?: JobFence): Promise<T>;
  /**
   * Deletes the features matching the filter (all of them for an empty filter); returns how many. Only for a space
   * keeping no history: each transaction deleting something takes the next version, and no history is written.
   */
  deleteMatching(space: SpaceKey, filter: FeatureFilter): Promise<number>;
  versions(space: SpaceKey): Promise<SpaceVersions>;
  /**
   * Every state of the features that existed at `oldest` or later, oldest first, an id's states together in the
   * order of `ids`: the superseded ones from the history, then the current one.
   */
  featureStates(space: SpaceKey, ids: readonly string[], oldest: number): Promise<FeatureRow[]>;
  /**
   * Streams matching features in insertion order (or in the order of `ids`), a page of rows at a time:
   * with `query.version`, as they were right after that version. One await per page instead of per row keeps large
   * reads cheap. Every read below takes `query.version` alike.
   */
  query(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]>;
  /**
   * The same features as `query`, each page joined into one text by the database: reads that transform nothing. With
   * `plain`, at HEAD, the texts may come without the namespace where their row knows where it is (core/namespace-cut.ts:
   * joined by line feeds, `cut` counting those); a read at a version, and an engine that does not cut (PostgreSQL),
   * give stored texts, without `cut`.
   */
  queryText(space: SpaceKey, query: FeatureQuery, signal?: AbortSignal, plain?: boolean): AsyncIterable<FeatureTextPage>;
  count(space: SpaceKey, filter: FeatureFilter, signal?: AbortSignal): Promise<number>;
  /** How many features `query` returns, its spatial filter included, counted up to `query.limit` at most. */
  countUpTo(space: SpaceKey, query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number>;
  /**
   * One page of `query` in its sort order (core/feature-query.ts `SortValue`), resuming after `query.after`: one
   * statement, which reads and sorts every match (no index serves an arbitrary key), bounded by the read deadline.
   */
  sortedPage(space: SpaceKey, query: SortedQuery, signal?: AbortSignal): Promise<SortedPage>;
  /**
   * The features of `query` (its spatial filter selects the enlarged tile) as one MVT layer of the tile,
   * geometries clipped to the tile and its buffer, 2D. An empty buffer when no feature is left in the tile.
   */
  vectorTile(space: SpaceKey, query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer>;
  statistics(space: SpaceKey, options: StatisticsOptions): Promise<SpaceStatistics>;
}

/** One version of a space keeping history: who wrote it and when (ADR 002). */
export interface VersionRecord {
  version: number;
  author: string;
  createdAt: number;
}

/** The versions a changeset read covers, both ends inclusive; `author` and the times (ms, inclusive) narrow it. */
export interface VersionRange {
  from: number;
  to: number;
  author?: string;
  startTime?: number;
  endTime?: number;
}

/** What a state of a changeset is to its version: written new, written over a state, or ended without a successor. */
export type ChangeKind = 'inserted' | 'updated' | 'deleted';

/** A kind of change, or `replaced`: the state an update at the version wrote over (the event stream's filters match it). */
export type StateKind = ChangeKind | 'replaced';

/** One state of a changeset: the version it belongs to, its insertion sequence and its stored text. */
export interface ChangeRow {
  version: number;
  seq: number;
  json: string;
}

/** A name for a version of a space (API `/tags`). */
export interface TagRecord {
  id: string;
  version: number;
  author: string;
  description?: string;
  createdAt: number;
}

/**
 * The history beside a space's features (ADR 002, "Changesets and tags", "Pruning"): version records, changes by
 * version, tags, and the removal of what no kept version needs. Every read is one keyset query of bounded size.
 */
export interface HistoryStore {
  /** At most `limit` recorded versions of the range, in version order. */
  versionsIn(space: SpaceKey, range: VersionRange, limit: number): Promise<VersionRecord[]>;
  /**
   * At most `limit` states of one kind written (inserted, updated) or ended (deleted, replaced) at versions
   * `after.version` … `to`, after the position `after`, in (version, seq) order.
   */
  changes(space: SpaceKey, kind: StateKind, after: { version: number; seq: number }, to: number, limit: number): Promise<ChangeRow[]>;
  /** The versions before `version` are no longer kept; it never moves back. */
  deleteBefore(space: SpaceKey, version: number): Promise<void>;
  /** Every tag of the space, by id. */
  tags(space: SpaceKey): Promise<TagRecord[]>;
  tag(space: SpaceKey, id: string): Promise<TagRecord | undefined>;
  /** False when the space has a tag of that id already. */
  createTag(space: SpaceKey, tag: TagRecord): Promise<boolean>;
  /** Stores the tag's version and description; false when it does not exist. */
  updateTag(space: SpaceKey, tag: TagRecord): Promise<boolean>;
  /** The deleted tag, undefined when there was none. */
  deleteTag(space: SpaceKey, id: string): Promise<TagRecord | undefined>;
  /**
   * Deletes at most `limit` history rows that no version from `oldest` on needs (ended before it) and no tag needs,
   * and at most `limit` version records before it, in one short transaction; returns how many rows it deleted. An engine
   * that indexes the history's places in the background (SQLite) first does that, at most `limit` states per call, and
   * counts them too: the pass calls again until a call counts fewer than `limit`.
   */
  prune(space: SpaceKey, oldest: number, limit: number): Promise<number>;
}

/** Whether a subscription's changes are being delivered (docs/subscriptions.md). */
export type SubscriptionState = 'ACTIVE' | 'SUSPENDED';

/** A webhook subscription of a space, with where its delivery stands (docs/subscriptions.md). */
export interface SubscriptionRecord {
  /** The space's number (SpaceKey.sid): a space deleted and made again under its id does not inherit its subscriptions. */
  sid: number;
  spaceId: string;
  id: string;
  destination: string;
  /** PER_FEATURE, PER_TRANSACTION or CONTENT_CHANGE. */
  type: string;
  /** The filter as JSON text, null for none. */
  filter: string | null;
  /** The HMAC key of the signatures; kept as it is because signing needs it. */
  secret: string;
  state: SubscriptionState;
  /** The last version delivered (every version up to it was accepted by the destination). */
  delivered: number;
  /** Failed attempts since the last success. */
  attempts: number;
  /** ms since the epoch before which the next attempt waits (back-off). */
  retryAt: number;
  lastError: string | null;
  createdAt: number;
  /**
   * The token that created the subscription or last changed it: delivery sends the space's features on only while
   * that token exists and may still read them (docs/subscriptions.md, "Rights"). Null for one stored before the hub
   * recorded it.
   */
  tokenId: string | null;
}

/** What PUT changes of a subscription; `resume` also starts its attempts over, from a version at least `delivered`. */
export interface SubscriptionChange {
  destination: string;
  type: string;
  filter: string | null;
  state: SubscriptionState;
  /** The token of the PUT, whose rights delivery goes on with. */
  tokenId: string;
  resume?: { delivered: number; note: string | null };
}

/** How an attempt at delivering ended, recorded only while the node still holds the subscription's lease. */
export interface DeliveryOutcome {
  delivered: number;
  attempts: number;
  retryAt: number;
  lastError: string | null;
  suspend: boolean;
}

/**
 * Subscriptions and their leases: delivery runs on the node holding a subscription's lease (owner + expiry), which
 * it renews while it runs; a lease not renewed (a node that stopped or crashed) is taken by another node.
 */
export interface SubscriptionStore {
  /** False when the space has a subscription of that id already. */
  create(record: SubscriptionRecord): Promise<boolean>;
  get(sid: number, id: string): Promise<SubscriptionRecord | undefined>;
  /** The space's subscriptions, by id. */
  list(sid: number): Promise<SubscriptionRecord[]>;
  /** The subscription as changed; undefined when it does not exist. `delivered` never moves back. */
  update(sid: number, id: string, change: SubscriptionChange): Promise<SubscriptionRecord | undefined>;
  delete(sid: number, id: string): Promise<boolean>;
  /**
   * Takes or renews, for `node` until `until`, the leases of at most `limit` ACTIVE subscriptions that are free
   * (expired at `now`) or its own already; returns them.
   */
  claim(node: string, now: number, until: number, limit: number): Promise<SubscriptionRecord[]>;
  /** Records an attempt's outcome while `node` holds the lease of the ACTIVE subscription; false when it does not (any more), or it was suspended. */
  record(sid: number, id: string, node: string, outcome: DeliveryOutcome): Promise<boolean>;
  /** Gives up the node's leases (it stops). */
  release(node: string): Promise<void>;
  /** The oldest version a subscription of the space still needs (its delivered + 1), among those delivered at least `bound`. */
  pinnedFrom(sid: number, bound: number): Promise<number | undefined>;
}

/** Where a job stands (docs/jobs.md): an import waits for its input, then is SUBMITTED until a node runs it. */
export type JobState = 'WAITING_FOR_INPUT' | 'SUBMITTED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

export type JobKind = 'import' | 'export';

/** How far a job got: for an import, every input item before `next` is committed to the space. */
export interface JobProgress {
  next: number;
  written: number;
  failed: number;
  /** Input bytes read (import) when `next` was recorded; features to write in all (export), for the estimate. */
  bytes: number;
  total: number;
}

/** A job of the jobs API (docs/jobs.md) with its progress and its lease. */
export interface JobRecord extends JobProgress {
  id: string;
  /** The account that created it: only it sees the job. */
  owner: string;
  /** The token the job acts with (its rights are checked again at every chunk); START and RESUME set the caller's. */
  tokenId: string;
  kind: JobKind;
  /** The space the job writes (import) or reads (export): one import writes a space at a time. */
  spaceId: string;
  /** The job's source and target as the API shows them, JSON text. */
  spec: string;
  state: JobState;
  /** Bytes of the uploaded input, null before an upload. */
  inputBytes: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
}

/**
 * The condition of a job's write (a chunk of an import), checked in the write's transaction as its last step before the
 * commit (docs/jobs.md, "The lease fences each chunk"): `node` holds the lease of the job, which is RUNNING. The same step records
 * `progress` (the job's progress once the chunk is written), so the job's counts never differ from what its space holds.
 * Where the space lives in another database than the jobs (PostgreSQL, several databases), the job's row stays locked in
 * its own transaction from that step until the write committed.
 */
export interface JobFence {
  job: string;
  node: string;
  progress: JobProgress;
  now: number;
}

/** How a run of a job ended. */
export interface JobEnd {
  state: 'SUCCEEDED' | 'FAILED';
  lastError: string | null;
}

/** What START, CANCEL, RESUME and an upload change, each only from the states named. */
export interface JobChange {
  from: readonly JobState[];
  state: JobState;
  tokenId?: string;
  inputBytes?: number;
  lastError?: string | null;
  /** The progress starts over (an export, which writes its file again). */
  restart?: boolean;
  now: number;
}

/**
 * Jobs and their leases: a job runs on the node holding its lease, which it renews while it runs; a lease not renewed (a
 * node that stopped or crashed) is taken by another node, which resumes the job from its recorded progress.
 */
export interface JobStore {
  create(job: JobRecord): Promise<void>;
  get(id: string): Promise<JobRecord | undefined>;
  /** The owner's jobs, newest first, at most `limit`. */
  list(owner: string, limit: number): Promise<JobRecord[]>;
  /** The job as changed; undefined when it does not exist or is in none of `change.from`. */
  update(id: string, change: JobChange): Promise<JobRecord | undefined>;
  /** Deletes the job when it is in one of the states; whether it did. */
  delete(id: string, states: readonly JobState[]): Promise<boolean>;
  /** Deletes at most `limit` jobs in one of the states whose last change was before `before` (ms); their ids. */
  removeOlder(states: readonly JobState[], before: number, limit: number): Promise<string[]>;
  /**
   * Takes or renews, for `node` until `until`, at most `limit` jobs that are SUBMITTED, or RUNNING with an expired lease or
   * under the node's own, and makes them RUNNING. An import is taken only when no other import of its space is RUNNING
   * and none of it was submitted before it (at most one job writes a space at a time, in order of creation).
   */
  claim(node: string, now: number, until: number, limit: number): Promise<JobRecord[]>;
  /**
   * Records progress while `node` holds the lease of the RUNNING job, and with `state` ends it; false when the node does
   * not hold it (any more), or the job was cancelled.
   */
  record(id: string, node: string, progress: JobProgress, now: number, end?: JobEnd): Promise<boolean>;
  /** Gives up the node's leases (it stops). */
  release(node: string): Promise<void>;
}

export interface AccountRecord {
  id: string;
  username: string;
  passwordHash: string;
  admin: boolean;
  createdAt: number;
  /** Rights an admin granted the account beyond its own spaces (a rights matrix, API.md 8.1); absent when none. */
  rights?: Record<string, unknown>;
}

export interface TokenRecord {
  tid: string;
  aid: string;
  /** sha256 of the bearer string; the string itself is never stored. */
  secretHash: string;
  /** The token claims (cid, urm, limits, iat, exp, description, metadata). */
  claims: Record<string, unknown>;
  /** Made by the hub at start-up for the admin (HUB_ADMIN_TOKEN or generated); a newly configured one replaces it. */
  bootstrap?: boolean;
}

export interface AccessStore {
  /** Throws a StorageError `accountExists` when the username (or id) is taken. */
  createAccount(account: AccountRecord): Promise<void>;
  findAccountByUsername(username: string): Promise<AccountRecord | undefined>;
  findAccountById(id: string): Promise<AccountRecord | undefined>;
  /** Every account, by username. */
  listAccounts(): Promise<AccountRecord[]>;
  /** False when the account is unknown. */
  updatePassword(id: string, passwordHash: string): Promise<boolean>;
  createToken(token: TokenRecord): Promise<void>;
  findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined>;
  findTokenByTid(tid: string): Promise<TokenRecord | undefined>;
  /** The account's tokens, oldest first. */
  listTokens(aid: string): Promise<TokenRecord[]>;
  /** Deletes the token; returns what was deleted, undefined when it was not there (any more). */
  deleteToken(tid: string): Promise<TokenRecord | undefined>;
  /**
   * Reports every token deletion committed on any node, with the token's secret hash; without a hash it means
   * "some may have been missed: forget every token". Nodes cache tokens only while the watch is live.
   */
  watchRevocations(onRevoked: (secretHash?: string) => void): RevocationWatch;
  /** Deletes every bootstrap token except the one with this secret hash; returns how many. */
  revokeBootstrapTokens(except: string): Promise<number>;
}

/** What a node hears of token deletions made on any node (postgres/revocation-listener.ts). */
export interface RevocationWatch {
  /** Whether deletions are being heard right now: only then may the node cache tokens. */
  live(): boolean;
  close(): Promise<void>;
}

/** What the hub stores of a project (API.md 10): the JSON text clients get, and what access and lists are decided by. */
export interface ProjectRecord {
  id: string;
  owner: string;
  published: boolean;
  /** The whole project as JSON text, sent to clients as it is. */
  json: string;
}

export interface StoredProject extends ProjectRecord {
  /** The insertion sequence, never reused: the list order and the pagination handle. A replaced project keeps its number. */
  seq: number;
}

/** The projects of one owner, or the published projects of every owner. */
export type ProjectListFilter = { owner: string } | { published: true };

export interface ProjectStore {
  get(id: string): Promise<StoredProject | undefined>;
  /**
   * Read-modify-write of one project in one transaction: `change` gets the stored project (undefined when there
   * is none) and returns what to store, or undefined to leave the stored one as it is; it may throw to abort.
   * A new project gets the next sequence number. Returns the project as stored afterwards.
   */
  write(id: string, change: (current: StoredProject | undefined) => ProjectRecord | undefined): Promise<StoredProject>;
  /** Deletes the project when `owner` owns it; whether it did. */
  delete(id: string, owner: string): Promise<boolean>;
  /** At most `limit` projects of the filter with a sequence number above `afterSeq`, in sequence order: one keyset query on an index. */
  list(filter: ProjectListFilter, afterSeq: number, limit: number): Promise<StoredProject[]>;
}

/** A login session; the cookie value itself is never stored, only its sha256. */
export interface SessionRecord {
  idHash: string;
  accountId: string;
  /** ms since the epoch. */
  expiresAt: number;
}

/** Failed logins of one username: how many in a row, and when the last one was. */
export interface LoginFailures {
  count: number;
  lastAt: number;
}

/** Sessions and failed logins, in the storage so that every node sees them. */
export interface SessionStore {
  /** Also deletes the sessions that expired before `session` began (they are never read again). */
  create(session: SessionRecord, now: number): Promise<void>;
  /** The session when it exists and has not expired at `now`. */
  find(idHash: string, now: number): Promise<SessionRecord | undefined>;
  delete(idHash: string): Promise<void>;
  /** Ends every session of the account (e.g. when its password changes). */
  deleteForAccount(accountId: string): Promise<void>;
  /**
   * Counts one more failed login for the username in one statement and returns the count; when the last one is
   * older than `windowMs` the count starts over. Also drops other usernames' records older than the window.
   */
  recordLoginFailure(username: string, now: number, windowMs: number): Promise<LoginFailures>;
  clearLoginFailures(username: string): Promise<void>;
}

/**
 * Hears the versions committed to any space (hub/changes/space-changes.ts): each committed write's new HEAD, at the latest
 * when the write's transaction has committed. Best effort: a version may be missed (a lost connection, another process
 * on the same SQLite file), so listeners also look at the versions themselves from time to time.
 */
export type ChangeListener = (space: SpaceKey, version: number) => void;

export interface ChangeWatch {
  close(): Promise<void>;
}

/** How busy the engine's connections of this process are, read when GET /metrics is scraped. */
export interface PoolFigures {
  /** Connections open (PostgreSQL: in all pools; SQLite: the one connection). */
  connections: number;
  /** Of those, the ones running a statement or a transaction now. */
  busy: number;
  /** Work waiting for a connection (PostgreSQL) or for the database's write lock (SQLite). */
  waiting: number;
}

export interface Storage {
  readonly engine: string;
  watchChanges(listener: ChangeListener): ChangeWatch;
  /** Whether `watchChanges` hears only the writes of this process (SQLite), not those of the node's other processes. */
  readonly changesStayInProcess: boolean;
  /**
   * A stamp that stays the same only while no write commits, on any node or process: equal stamps taken before two
   * reads of a space row mean the same row (hub/resolve/space-memo.ts). Absent from an engine that cannot tell
   * more cheaply than by reading the row: then every lookup reads it.
   */
  spacesStamp?(): string;
  readonly spaces: SpaceStore;
  readonly features: FeatureStore;
  readonly history: HistoryStore;
  readonly access: AccessStore;
  readonly projects: ProjectStore;
  readonly sessions: SessionStore;
  readonly subscriptions: SubscriptionStore;
  readonly jobs: JobStore;
  /** The durability settings in effect for the hub's own connections, read back from the engine (printed at start-up, checked by tests). */
  durability(): Promise<Record<string, string>>;
  /** Resolves once every database answered a trivial statement; throws a StorageError `unavailable` otherwise (readiness). */
  ping(): Promise<void>;
  poolFigures(): PoolFigures;
  close(): Promise<void>;
}
