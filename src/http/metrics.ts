// The Prometheus metrics of one process (prom-client); with workers, each worker's registry is summed by the primary (docs/operations.md).
import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HubError } from '../core/errors.js';
import type { ProcessFigures } from '../hub/operations.js';
import { StorageError } from '../storage/storage-error.js';
import type { ClosedBy } from './departed-clients.js';

/** One request as its answer ended: what the access log writes and the request metrics count. */
export interface RequestRecord {
  method: string;
  /** The route's pattern (`/hub/spaces/:spaceId/features`), never the path: ids and tokens stay out, and the label set stays small. */
  route: string;
  status: number;
  seconds: number;
  bytesIn: number;
  bytesOut: number;
  /** Who closed the connection of an answer that did not end whole (departed-clients.ts); undefined when it ended. */
  closedBy: ClosedBy | undefined;
}

/** Up to 30 s: past that the request deadline (HUB_REQUEST_TIMEOUT) or the query deadline is the story, counted on its own. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export class HubMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly incomplete: Counter<'method' | 'route' | 'status' | 'closed_by'>;
  private readonly duration: Histogram<'method' | 'route'>;
  private readonly bytesIn: Counter<'method' | 'route'>;
  private readonly bytesOut: Counter<'method' | 'route'>;
  private readonly inFlight: Gauge;
  private readonly shed: Counter;
  private readonly deadlines: Counter;

  /** `figures` is read at each scrape: the pool and cache figures are kept where they happen, not copied on every request. */
  constructor(figures: () => ProcessFigures) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: 'hub_http_requests_total', help: 'Requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers });
    this.incomplete = new Counter({
      name: 'hub_http_requests_incomplete_total', help: 'Requests whose answer did not end whole, by who closed the connection (client, hub); also counted in hub_http_requests_total',
      labelNames: ['method', 'route', 'status', 'closed_by'], registers,
    });
    this.duration = new Histogram({ name: 'hub_http_request_duration_seconds', help: 'Time from the request headers to the end of the answer', labelNames: ['method', 'route'], buckets: DURATION_BUCKETS, registers });
    this.bytesIn = new Counter({ name: 'hub_http_request_body_bytes_total', help: 'Request body bytes (the declared Content-Length, else as read)', labelNames: ['method', 'route'], registers });
    this.bytesOut = new Counter({ name: 'hub_http_response_bytes_total', help: 'Answer bytes written to the connection, headers included, after compression', labelNames: ['method', 'route'], registers });
    this.inFlight = new Gauge({ name: 'hub_http_requests_in_flight', help: 'Requests received whose answer has not ended', registers });
    this.shed = new Counter({ name: 'hub_http_requests_shed_total', help: 'Requests refused with 429 because the node was busy (HUB_MAX_IN_FLIGHT, HUB_MAX_IN_FLIGHT_BODY)', registers });
    this.deadlines = new Counter({ name: 'hub_db_deadline_hits_total', help: 'Requests answered 504 because a database statement or lock wait passed HUB_QUERY_TIMEOUT', registers });
    // Gauges and the counter below are registered by their construction and read `figures` when scraped.
    const gauge = (name: string, help: string, read: (figures: ProcessFigures) => number) => new Gauge({
      name, help, registers, collect() { this.set(read(figures())); },
    });
    gauge('hub_db_connections', 'Database connections open (SQLite: the one connection of the process)', (f) => f.pool.connections);
    gauge('hub_db_connections_busy', 'Database connections running a statement or transaction', (f) => f.pool.busy);
    gauge('hub_db_waiting', 'Work waiting for a database connection (PostgreSQL) or for the write lock (SQLite)', (f) => f.pool.waiting);
    gauge('hub_answer_cache_bytes', 'Bytes held by the answer cache', (f) => f.answerCache.size);
    // Counters kept by the caches themselves, copied at each scrape: prom-client counters only add, so they start from 0 each time.
    new Counter({
      name: 'hub_cache_lookups_total', help: 'Cache lookups by cache (answer: read answers; token: resolved tokens) and result', labelNames: ['cache', 'result'], registers,
      collect() {
        const { answerCache, tokenCache } = figures();
        this.reset();
        this.inc({ cache: 'answer', result: 'hit' }, answerCache.hits);
        this.inc({ cache: 'answer', result: 'miss' }, answerCache.misses);
        this.inc({ cache: 'token', result: 'hit' }, tokenCache.hits);
        this.inc({ cache: 'token', result: 'miss' }, tokenCache.misses);
      },
    });
    if (cluster.isWorker) {
      // The primary asks every worker for its registry over IPC: the constructor installs the worker's answering listener.
      new AggregatorRegistry();
      AggregatorRegistry.setRegistries(this.registry);
    }
  }

  requestStarted(): void {
    this.inFlight.inc();
  }

  requestEnded(record: RequestRecord): void {
    this.inFlight.dec();
    const labels = { method: record.method, route: record.route };
    const status = String(record.status);
    this.requests.inc({ ...labels, status });
    if (record.closedBy !== undefined) this.incomplete.inc({ ...labels, status, closed_by: record.closedBy });
    this.duration.observe(labels, record.seconds);
    this.bytesIn.inc(labels, record.bytesIn);
    this.bytesOut.inc(labels, record.bytesOut);
  }

  /** Errors answered by the error handler: load shedding and deadlines are counted by their kind, not by status alone. */
  countError(error: unknown): void {
    const code = error instanceof HubError ? error.code : undefined;
    if (code === 'tooManyRequests') this.shed.inc();
    if (code === 'storageTimeout' || (error instanceof StorageError && error.failure === 'timeout')) this.deadlines.inc();
  }

  /** This process's metrics as Prometheus text. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
