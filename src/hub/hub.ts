// The hub's domain, as the HTTP layer sees it: one object per area, each over the same storage.
import type { Storage } from '../storage/storage.js';
import { AccessService } from './access/access-service.js';
import type { NodePeers } from './access/node-peers.js';
import { AccountService } from './access/account-service.js';
import { TokenService } from './access/token-service.js';
import { FeatureService } from './features/feature-service.js';
import { AnswerCache } from './features/answer-cache.js';
import { SpatialService } from './features/spatial-service.js';
import { OgcService } from './ogc/ogc-service.js';
import { ProjectService } from './projects/project-service.js';
import { SpaceService } from './spaces/space-service.js';
import { StatisticsService } from './features/statistics-service.js';
import { SpaceResolver } from './resolve/space-resolver.js';
import { WriteService } from './writes/write-service.js';
import { HistoryService } from './versions/history-service.js';
import { Pruning } from './versions/pruning.js';
import { DEFAULT_DELIVERY, type DeliveryOptions, SubscriptionDelivery } from './subscriptions/subscription-delivery.js';
import { SubscriptionService } from './subscriptions/subscription-service.js';
import { TagService } from './versions/tag-service.js';
import { SpaceChanges } from './changes/space-changes.js';
import type { ChangePeers } from './changes/change-peers.js';
import { JobFiles } from './jobs/job-files.js';
import { DEFAULT_JOB_CHUNK, DEFAULT_JOB_RUNNER, JobRunner, type JobRunnerOptions } from './jobs/job-runner.js';
import { DEFAULT_JOB_MAX_INPUT, JobService } from './jobs/job-service.js';
import { MAX_LINE_BYTES } from './jobs/line-limit.js';
import { OperationsService } from './operations.js';
import { DEFAULT_CHECK_MS, DEFAULT_EVENT_BUFFER, DEFAULT_EVENT_STALL_MS, DEFAULT_HEARTBEAT_MS, EventService } from './events/event-service.js';

export interface HubInfo {
  name: string;
  version: string;
  upSince: number;
}

export interface HubOptions {
  /** HUB_STATISTICS_EXACT_LIMIT: larger spaces get sampled statistics. */
  statisticsExactLimit?: number;
  /** Spaces read per storage query when listing (HUB_SPACE_PAGE_SIZE). */
  spacePageSize?: number;
  /** How long a login session lasts, in ms (HUB_SESSION_TTL). */
  sessionTtl?: number;
  /** The node's other processes (HUB_WORKERS): rates, token deletions and committed versions; none by default. */
  peers?: NodePeers & ChangePeers;
  /** Webhook delivery (docs/subscriptions.md); defaults as the configuration's. */
  subscriptions?: Partial<Omit<DeliveryOptions, 'onError'>>;
  /** Bytes of whole read answers this process keeps (HUB_CACHE_SIZE, answer-cache.ts); 0 (the default here) keeps none. */
  cacheSize?: number;
  /** Event streams: the heartbeat (HUB_EVENT_HEARTBEAT), how often a stream looks at its space without a signal, its buffer (HUB_EVENT_BUFFER) and how long it waits for a stalled client (HUB_EVENT_STALL). */
  events?: { heartbeatMs?: number; checkMs?: number; bufferBytes?: number; stallMs?: number };
  /**
   * Jobs (docs/jobs.md): where their files go (HUB_JOBS_DIR), the largest upload (HUB_JOBS_MAX_INPUT, 0 for none), features
   * per chunk (HUB_JOBS_CHUNK), and the runner's poll and lease.
   */
  jobs?: { dir: string; maxInput?: number; chunk?: number; maxLine?: number } & Partial<Omit<JobRunnerOptions, 'onError'>>;
}

export class Hub {
  readonly spaces: SpaceService;
  readonly features: FeatureService;
  readonly writes: WriteService;
  readonly spatial: SpatialService;
  readonly statistics: StatisticsService;
  readonly access: AccessService;
  readonly projects: ProjectService;
  readonly accounts: AccountService;
  readonly tokens: TokenService;
  readonly ogc: OgcService;
  readonly history: HistoryService;
  readonly tags: TagService;
  readonly pruning: Pruning;
  readonly subscriptions: SubscriptionService;
  /** Started by the server (serve.ts) and stopped before the storage closes. */
  readonly delivery: SubscriptionDelivery;
  readonly cache: AnswerCache;
  /** The "space changed" signal, from every node: the event stream listens to it. */
  readonly changes: SpaceChanges;
  readonly events: EventService;
  readonly jobs: JobService;
  /** Started by the server (serve.ts) and stopped before the storage closes. */
  readonly jobRunner: JobRunner;
  readonly operations: OperationsService;

  constructor(readonly storage: Storage, readonly info: HubInfo, options: HubOptions = {}) {
    this.access = new AccessService(storage, options.peers);
    const resolver = new SpaceResolver(storage, this.access);
    const delivery = { ...DEFAULT_DELIVERY, ...options.subscriptions };
    this.pruning = new Pruning(storage, {
      maxPinned: delivery.maxLag,
      onError: (spaceId, error) => process.stderr.write(`Pruning the history of space ${spaceId} failed: ${error instanceof Error ? error.message : String(error)}\n`),
    });
    this.spaces = new SpaceService(storage, resolver, storage.engine, options.spacePageSize, this.pruning);
    this.features = new FeatureService(resolver);
    this.writes = new WriteService(storage, resolver, this.pruning);
    this.history = new HistoryService(storage, resolver, this.pruning);
    this.tags = new TagService(storage, resolver, this.pruning);
    this.cache = new AnswerCache(options.cacheSize ?? 0);
    this.spatial = new SpatialService(resolver, this.features, this.cache);
    this.statistics = new StatisticsService(resolver, this.features, options.statisticsExactLimit);
    this.operations = new OperationsService(storage, this.cache, this.access);
    this.projects = new ProjectService(storage);
    this.accounts = new AccountService(storage, options.sessionTtl);
    this.tokens = new TokenService(storage, this.access);
    this.ogc = new OgcService(this.spaces, this.features, this.statistics);
    this.subscriptions = new SubscriptionService(storage, resolver, delivery);
    this.delivery = new SubscriptionDelivery(storage, this.access, {
      ...delivery,
      onError: (error) => process.stderr.write(`A round of webhook deliveries failed: ${error instanceof Error ? error.message : String(error)}\n`),
    });
    this.changes = new SpaceChanges(storage, options.peers);
    const events = options.events ?? {};
    this.events = new EventService(storage, this.history, this.access, this.changes,
      { heartbeatMs: events.heartbeatMs ?? DEFAULT_HEARTBEAT_MS, checkMs: events.checkMs ?? DEFAULT_CHECK_MS },
      { bufferBytes: events.bufferBytes ?? DEFAULT_EVENT_BUFFER, stallMs: events.stallMs ?? DEFAULT_EVENT_STALL_MS });
    // Processes that serve no HTTP (the admin commands) run no jobs and never touch this directory.
    const jobs = options.jobs ?? { dir: 'data/jobs' };
    const files = new JobFiles(jobs.dir);
    this.jobs = new JobService(storage, resolver, files, jobs.maxInput ?? DEFAULT_JOB_MAX_INPUT);
    this.jobRunner = new JobRunner(storage, { access: this.access, writes: this.writes, features: this.features, files, chunk: jobs.chunk ?? DEFAULT_JOB_CHUNK, maxLine: jobs.maxLine || MAX_LINE_BYTES }, {
      pollMs: jobs.pollMs ?? DEFAULT_JOB_RUNNER.pollMs, leaseMs: jobs.leaseMs ?? DEFAULT_JOB_RUNNER.leaseMs, running: jobs.running ?? DEFAULT_JOB_RUNNER.running,
      retentionMs: jobs.retentionMs ?? DEFAULT_JOB_RUNNER.retentionMs,
      onError: (error) => process.stderr.write(`A job failed on an unexpected error: ${error instanceof Error ? error.message : String(error)}\n`),
    });
  }
}
