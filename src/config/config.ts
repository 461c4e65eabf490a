// Configuration from HUB_* environment variables and matching command-line flags, with defaults that need none.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { DEFAULT_SESSION_TTL_MS } from '../hub/access/account-service.js';
import { defaultCacheSize } from '../hub/features/answer-cache.js';
import { DEFAULT_STATISTICS_EXACT_LIMIT } from '../hub/features/statistics-service.js';
import { DEFAULT_SPACE_PAGE_SIZE } from '../hub/spaces/space-service.js';
import { DEFAULT_DELIVERY } from '../hub/subscriptions/subscription-delivery.js';
import { DEFAULT_JOB_CHUNK, DEFAULT_JOB_RUNNER } from '../hub/jobs/job-runner.js';
import { DEFAULT_JOB_MAX_INPUT } from '../hub/jobs/job-service.js';
import { DEFAULT_EVENT_BUFFER, DEFAULT_EVENT_STALL_MS, DEFAULT_HEARTBEAT_MS } from '../hub/events/event-service.js';
import { maskUrl } from '../storage/postgres/mask-url.js';
import type { MetricsAccess } from '../http/metrics-access.js';

export interface Config {
  host: string;
  port: number;
  /** Processes serving HTTP on the port (the cluster's workers); 1 serves from this process alone. */
  workers: number;
  dataDir: string;
  /** Storage location: `sqlite:<file>` (default: hub.db in the data dir) or comma-separated `postgres://` URLs. */
  storage: string;
  /** Connections each node keeps at most to each PostgreSQL database; stays below the server's max_connections. */
  pgPoolSize: number;
  /** The deadline of a query in ms, after which it is cancelled and answers 504; 0 means none. */
  queryTimeout: number;
  /** Spaces read per storage query when listing spaces: bounds the memory of one list request. */
  spacePageSize: number;
  /** Largest accepted request body in bytes after decompression; 0 means unlimited. */
  maxBody: number;
  /** Requests the node works on at once before it answers 429; 0 means unlimited. */
  maxInFlight: number;
  /** Request body bytes the node holds at once before it answers 429 (default 4 × maxBody); 0 means unlimited. */
  maxInFlightBody: number;
  /** Milliseconds a client may take to send the request line and headers; 0 means no limit. */
  headersTimeout: number;
  /** Milliseconds a client may take to send the whole request, body included; 0 means no limit. */
  requestTimeout: number;
  /** Milliseconds a request body may pause between two pieces before the answer is 408; 0 means no limit. */
  bodyIdleTimeout: number;
  logLevel: string;
  /** How a `here` tile id without underscores is read: as the base-4 quadkey (default) or as a decimal number (API.md 6.2). */
  hereTileEncoding: 'base4' | 'decimal';
  /** Bytes of whole read answers each process keeps (docs/cache-and-changed-tiles.md); 0 turns the cache off. */
  cacheSize: number;
  /** Spaces with more features than this get /statistics estimated from a sample. */
  statisticsExactLimit: number;
  /** The URL clients reach the hub at; an https one makes the session cookie Secure. Its origin is the one session requests must come from. */
  publicUrl?: string;
  /** How long a login session lasts, in ms. */
  sessionTtl: number;
  /** Destinations of subscriptions may be loopback, private or link-local addresses (API.md 12: refused by default). */
  allowPrivateWebhooks: boolean;
  /** How often each process looks for versions to deliver, in ms. */
  subscriptionPoll: number;
  /** How long a process's hold on a subscription lasts unless renewed, in ms: a crashed process's subscriptions move on after it. */
  subscriptionLease: number;
  /** Failed deliveries in a row after which a subscription is SUSPENDED. */
  subscriptionRetries: number;
  /** The wait after a subscription's first failed delivery, in ms, doubled after each further one (at most 5 minutes). */
  subscriptionBackoff: number;
  /** How long one webhook POST may take, in ms. */
  webhookTimeout: number;
  /** Where jobs keep their uploaded inputs and written outputs (docs/jobs.md); default: jobs in the data dir. */
  jobsDir: string;
  /** The largest upload a job takes, in bytes; 0 means unlimited. */
  jobsMaxInput: number;
  /** Features per write transaction of an import job, and per page of an export job. */
  jobsChunk: number;
  /** How often each process looks for jobs to run and renews its leases, in ms. */
  jobsPoll: number;
  /** How long a process's hold on a job lasts unless renewed, in ms: a crashed process's jobs are resumed by another after it. */
  jobsLease: number;
  /** How long a finished job (SUCCEEDED, FAILED, CANCELLED) and its files are kept after its last change, in ms; 0 keeps them. */
  jobsRetention: number;
  /** How many versions behind HEAD a subscription may fall while its undelivered history is kept for it. */
  subscriptionMaxLag: number;
  /** The heartbeat comment of event streams, in ms. */
  eventHeartbeat: number;
  /** Bytes of an event stream that may wait unsent for a slow client; past them the stream waits for it. */
  eventBuffer: number;
  /** Milliseconds a stream waits for a client that takes nothing before it disconnects it (with the version to resume from). */
  eventStall: number;
  /** Who may read GET /metrics (docs/operations.md): loopback callers (the default), anyone, nobody, or the bearer of a token. */
  metrics: MetricsAccess;
  /** How long a stopping process lets the requests in progress finish before it closes their connections, in ms. */
  shutdownTimeout: number;
  adminUser?: string;
  adminPassword?: string;
  adminToken?: string;
}

interface Option {
  key: keyof Config;
  env: string;
  flag: string;
  secret?: boolean;
  parse?: (value: string) => unknown;
}

function parseSize(value: string): number {
  const match = /^(\d+)\s*(b|kb?|mb?|gb?)?$/i.exec(value.trim());
  if (!match) throw new Error(`Invalid size "${value}": use bytes or a number with k, m or g (e.g. 200m)`);
  const unit = (match[2] ?? 'b').toLowerCase()[0];
  const factor = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit as 'b' | 'k' | 'm' | 'g'];
  return Number(match[1]) * factor;
}

/** A duration in ms, or with a unit as PostgreSQL's settings take it: `500ms`, `30s`, `2min`; `0` turns the limit off. */
function parseDuration(value: string): number {
  const match = /^(\d+)\s*(ms|s|min|h|d)?$/i.exec(value.trim());
  if (!match) throw new Error(`Invalid duration "${value}": use milliseconds or a number with ms, s, min, h or d (e.g. 30s)`);
  const factor = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 'ms').toLowerCase() as 'ms' | 's' | 'min' | 'h' | 'd'];
  return Number(match[1]) * factor;
}

function parsePositiveDuration(value: string): number {
  const ms = parseDuration(value);
  if (ms === 0) throw new Error(`Invalid duration "${value}": it must be more than 0`);
  return ms;
}

function parsePositiveSize(value: string): number {
  const bytes = parseSize(value);
  if (bytes === 0) throw new Error(`Invalid size "${value}": it must be more than 0`);
  return bytes;
}

function parsePoolSize(value: string): number {
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1) throw new Error(`Invalid pool size "${value}": use a whole number of connections, at least 1`);
  return size;
}

function parseFeatureCount(value: string): number {
  const count = Number(value);
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`Invalid feature count "${value}": use a whole number, at least 0`);
  return count;
}

function parsePageSize(value: string): number {
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1) throw new Error(`Invalid page size "${value}": use a whole number, at least 1`);
  return size;
}

function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`Invalid public URL "${value}": use the URL clients reach the hub at, e.g. https://hub.example.org`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`Invalid public URL "${value}": use http or https`);
  return value;
}

/** A duration as parseDuration takes it, or in hours (`12h`): sessions last hours. */
function parseSessionTtl(value: string): number {
  const hours = /^(\d+)\s*h$/i.exec(value.trim());
  const ttl = hours ? Number(hours[1]) * 3_600_000 : parseDuration(value);
  if (ttl < 60_000) throw new Error(`Invalid session lifetime "${value}": use at least 1min (e.g. 12h)`);
  return ttl;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid port "${value}"`);
  return port;
}

function parseWorkers(value: string): number {
  const workers = Number(value);
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`Invalid number of workers "${value}": use a whole number, at least 1 (1 serves from one process)`);
  return workers;
}

function parseCount(value: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 0) throw new Error(`Invalid count "${value}": use a whole number, 0 for unlimited`);
  return count;
}

function parseBoolean(value: string): boolean {
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`Invalid switch "${value}": use true or false`);
}

/** A duration as parseDuration takes it, but never 0: these are intervals, not limits that can be turned off. */
function parseInterval(value: string): number {
  const duration = parseDuration(value);
  if (duration < 1) throw new Error(`Invalid interval "${value}": use at least 1ms`);
  return duration;
}

function parsePositive(value: string): number {
  const count = Number(value);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`Invalid count "${value}": use a whole number, at least 1`);
  return count;
}

function parseJobChunk(value: string): number {
  const chunk = Number(value);
  if (!Number.isInteger(chunk) || chunk < 1 || chunk > 100_000) throw new Error(`Invalid job chunk "${value}": use a whole number of features from 1 to 100000`);
  return chunk;
}

/** `loopback`, `open`, `off` or `token:<secret>` (at least 16 characters: it guards what the node is doing). */
function parseMetricsAccess(value: string): MetricsAccess {
  if (value === 'loopback' || value === 'open' || value === 'off') return { kind: value };
  if (value.startsWith('token:') && value.length >= 'token:'.length + 16) return { kind: 'token', token: value.slice('token:'.length) };
  throw new Error('Invalid metrics access: use loopback, open, off or token:<a secret of at least 16 characters>');
}

function parseHereTileEncoding(value: string): 'base4' | 'decimal' {
  if (value === 'base4' || value === 'decimal') return value;
  throw new Error(`Invalid here tile encoding "${value}": use base4 or decimal`);
}

const OPTIONS: Option[] = [
  { key: 'host', env: 'HUB_HOST', flag: '--host' },
  { key: 'port', env: 'HUB_PORT', flag: '--port', parse: parsePort },
  { key: 'workers', env: 'HUB_WORKERS', flag: '--workers', parse: parseWorkers },
  { key: 'dataDir', env: 'HUB_DATA_DIR', flag: '--data-dir', parse: (value) => resolve(value) },
  { key: 'storage', env: 'HUB_STORAGE', flag: '--storage' },
  { key: 'pgPoolSize', env: 'HUB_PG_POOL_SIZE', flag: '--pg-pool-size', parse: parsePoolSize },
  { key: 'queryTimeout', env: 'HUB_QUERY_TIMEOUT', flag: '--query-timeout', parse: parseDuration },
  { key: 'spacePageSize', env: 'HUB_SPACE_PAGE_SIZE', flag: '--space-page-size', parse: parsePageSize },
  { key: 'maxBody', env: 'HUB_MAX_BODY', flag: '--max-body', parse: parseSize },
  { key: 'maxInFlight', env: 'HUB_MAX_IN_FLIGHT', flag: '--max-in-flight', parse: parseCount },
  { key: 'maxInFlightBody', env: 'HUB_MAX_IN_FLIGHT_BODY', flag: '--max-in-flight-body', parse: parseSize },
  { key: 'headersTimeout', env: 'HUB_HEADERS_TIMEOUT', flag: '--headers-timeout', parse: parseDuration },
  { key: 'requestTimeout', env: 'HUB_REQUEST_TIMEOUT', flag: '--request-timeout', parse: parseDuration },
  { key: 'bodyIdleTimeout', env: 'HUB_BODY_IDLE_TIMEOUT', flag: '--body-idle-timeout', parse: parseDuration },
  { key: 'logLevel', env: 'HUB_LOG_LEVEL', flag: '--log-level' },
  { key: 'hereTileEncoding', env: 'HUB_HERE_TILE_ENCODING', flag: '--here-tile-encoding', parse: parseHereTileEncoding },
  { key: 'cacheSize', env: 'HUB_CACHE_SIZE', flag: '--cache-size', parse: parseSize },
  { key: 'statisticsExactLimit', env: 'HUB_STATISTICS_EXACT_LIMIT', flag: '--statistics-exact-limit', parse: parseFeatureCount },
  { key: 'publicUrl', env: 'HUB_PUBLIC_URL', flag: '--public-url', parse: parsePublicUrl },
  { key: 'sessionTtl', env: 'HUB_SESSION_TTL', flag: '--session-ttl', parse: parseSessionTtl },
  { key: 'allowPrivateWebhooks', env: 'HUB_ALLOW_PRIVATE_WEBHOOKS', flag: '--allow-private-webhooks', parse: parseBoolean },
  { key: 'subscriptionPoll', env: 'HUB_SUBSCRIPTION_POLL', flag: '--subscription-poll', parse: parseInterval },
  { key: 'subscriptionLease', env: 'HUB_SUBSCRIPTION_LEASE', flag: '--subscription-lease', parse: parseInterval },
  { key: 'subscriptionRetries', env: 'HUB_SUBSCRIPTION_RETRIES', flag: '--subscription-retries', parse: parsePositive },
  { key: 'subscriptionBackoff', env: 'HUB_SUBSCRIPTION_BACKOFF', flag: '--subscription-backoff', parse: parseInterval },
  { key: 'webhookTimeout', env: 'HUB_WEBHOOK_TIMEOUT', flag: '--webhook-timeout', parse: parseInterval },
  { key: 'subscriptionMaxLag', env: 'HUB_SUBSCRIPTION_MAX_LAG', flag: '--subscription-max-lag', parse: parsePositive },
  { key: 'eventHeartbeat', env: 'HUB_EVENT_HEARTBEAT', flag: '--event-heartbeat', parse: parsePositiveDuration },
  { key: 'eventBuffer', env: 'HUB_EVENT_BUFFER', flag: '--event-buffer', parse: parsePositiveSize },
  { key: 'eventStall', env: 'HUB_EVENT_STALL', flag: '--event-stall', parse: parsePositiveDuration },
  { key: 'jobsDir', env: 'HUB_JOBS_DIR', flag: '--jobs-dir', parse: (value) => resolve(value) },
  { key: 'jobsMaxInput', env: 'HUB_JOBS_MAX_INPUT', flag: '--jobs-max-input', parse: parseSize },
  { key: 'jobsChunk', env: 'HUB_JOBS_CHUNK', flag: '--jobs-chunk', parse: parseJobChunk },
  { key: 'jobsPoll', env: 'HUB_JOBS_POLL', flag: '--jobs-poll', parse: parseInterval },
  { key: 'jobsLease', env: 'HUB_JOBS_LEASE', flag: '--jobs-lease', parse: parseInterval },
  { key: 'metrics', env: 'HUB_METRICS', flag: '--metrics', parse: parseMetricsAccess },
  { key: 'shutdownTimeout', env: 'HUB_SHUTDOWN_TIMEOUT', flag: '--shutdown-timeout', parse: parsePositiveDuration },
  { key: 'jobsRetention', env: 'HUB_JOBS_RETENTION', flag: '--jobs-retention', parse: parseDuration },
  { key: 'adminUser', env: 'HUB_ADMIN_USER', flag: '--admin-user' },
  { key: 'adminPassword', env: 'HUB_ADMIN_PASSWORD', flag: '--admin-password', secret: true },
  { key: 'adminToken', env: 'HUB_ADMIN_TOKEN', flag: '--admin-token', secret: true },
];

export const USAGE = `Usage: spatial-hub [serve] [options]\n\nOptions (each also an environment variable):\n` +
  OPTIONS.map((option) => `  ${option.flag.padEnd(21)} ${option.env}`).join('\n');

/** Flags win over environment variables; both accept `--flag value` and `--flag=value`. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): Config {
  const raw: Partial<Record<keyof Config, string>> = {};
  for (const option of OPTIONS) {
    const value = env[option.env];
    if (value !== undefined && value !== '') raw[option.key] = value;
  }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === 'serve') continue;
    const option = OPTIONS.find((candidate) => candidate.flag === flag);
    if (!option) throw new Error(`Unknown argument "${argv[i]}"\n${USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`Missing value for ${flag}`);
    raw[option.key] = value;
  }
  // Resource defaults and why: docs/decisions.md, "Resource budgets of one node".
  const config: Config = {
    host: '127.0.0.1', port: 8080, workers: availableParallelism(), dataDir: resolve('data'), storage: '', pgPoolSize: 10, queryTimeout: 60_000, maxBody: parseSize('64m'),
    maxInFlight: 256, maxInFlightBody: -1, headersTimeout: 30_000, requestTimeout: 600_000, bodyIdleTimeout: 30_000, logLevel: 'info',
    statisticsExactLimit: DEFAULT_STATISTICS_EXACT_LIMIT, spacePageSize: DEFAULT_SPACE_PAGE_SIZE, hereTileEncoding: 'base4',
    sessionTtl: DEFAULT_SESSION_TTL_MS, allowPrivateWebhooks: DEFAULT_DELIVERY.allowPrivate,
    subscriptionPoll: DEFAULT_DELIVERY.pollMs, subscriptionLease: DEFAULT_DELIVERY.leaseMs, subscriptionRetries: DEFAULT_DELIVERY.retries,
    subscriptionBackoff: DEFAULT_DELIVERY.backoffMs, webhookTimeout: DEFAULT_DELIVERY.timeoutMs, subscriptionMaxLag: DEFAULT_DELIVERY.maxLag, cacheSize: -1,
    eventHeartbeat: DEFAULT_HEARTBEAT_MS, eventBuffer: DEFAULT_EVENT_BUFFER, eventStall: DEFAULT_EVENT_STALL_MS,
    jobsDir: '', jobsMaxInput: DEFAULT_JOB_MAX_INPUT, jobsChunk: DEFAULT_JOB_CHUNK, jobsPoll: DEFAULT_JOB_RUNNER.pollMs, jobsLease: DEFAULT_JOB_RUNNER.leaseMs, jobsRetention: DEFAULT_JOB_RUNNER.retentionMs,
    metrics: { kind: 'loopback' }, shutdownTimeout: 30_000,
  };
  const target = config as unknown as Record<string, unknown>;
  for (const option of OPTIONS) {
    const value = raw[option.key];
    if (value !== undefined) target[option.key] = option.parse ? option.parse(value) : value;
  }
  if (!config.storage) config.storage = `sqlite:${resolve(config.dataDir, 'hub.db')}`;
  if (!config.jobsDir) config.jobsDir = resolve(config.dataDir, 'jobs');
  if (config.cacheSize < 0) config.cacheSize = defaultCacheSize(config.workers);
  if (config.maxInFlightBody < 0) config.maxInFlightBody = UPLOADS_AT_ONCE * config.maxBody;
  checkBudgets(config);
  return config;
}

/** The body budget defaults to this many maximum uploads at once. */
const UPLOADS_AT_ONCE = 4;

/** Settings that contradict each other stop the start instead of failing requests later. */
function checkBudgets(config: Config): void {
  const unlimited = (value: number) => (value === 0 ? Infinity : value);
  if (unlimited(config.maxInFlightBody) < unlimited(config.maxBody)) {
    throw new Error('HUB_MAX_IN_FLIGHT_BODY must be at least HUB_MAX_BODY (0 meaning unlimited for both): otherwise a body of the maximum size would always be refused with 429');
  }
  if (config.requestTimeout > 0 && config.headersTimeout > config.requestTimeout) {
    throw new Error('HUB_HEADERS_TIMEOUT must not be longer than HUB_REQUEST_TIMEOUT, which also covers the headers');
  }
}

/** The effective configuration for the start-up log, secrets hidden. */
export function describeConfig(config: Config): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const option of OPTIONS) {
    const value = config[option.key];
    if (value === undefined) continue;
    if (option.key === 'metrics') shown[option.env] = config.metrics.kind === 'token' ? 'token:***' : config.metrics.kind;
    else shown[option.env] = option.secret ? '***' : option.key === 'storage' ? maskUrl(String(value)) : value;
  }
  return shown;
}
