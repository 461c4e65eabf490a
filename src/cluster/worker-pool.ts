// The primary of a hub serving from several processes: starts the workers, restarts one that dies, stops them all, and keeps what they share.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { CLAIMS_TTL_MS } from '../hub/access/claims-cache.js';
import { RequestRates } from '../hub/access/request-rate.js';
import { type PrimaryMessage, type SpaceChanged, WORKER_START, type WorkerMessage, type WorkerStart } from './messages.js';

/** A new worker that cannot start this many times in a row stops the hub: it would fail again. */
const MAX_FAILED_STARTS = 5;
/** The wait before starting a worker again after a failed start; doubles with each one (1 + 2 + 4 + 8 s before giving up). */
const FIRST_RETRY_MS = 1000;

/** A token deletion told to the other workers; answered when each forgot it, or went away. */
interface Revocation {
  answer: () => void;
  waitingFor: Set<Worker>;
  timer: NodeJS.Timeout;
}

export interface PoolSettings {
  workers: number;
  /** The configured port; `0` lets the first workers pick one, which the later ones then take. */
  port: number;
  upSince: number;
  /** A line about the workers for the operator (never a secret: pids, exit codes, signals). */
  log(line: string): void;
}

export class WorkerPool {
  private readonly rates = new RequestRates();
  private readonly alive = new Set<Worker>();
  private readonly listening = new Set<Worker>();
  private readonly revocations = new Map<number, Revocation>();
  private nextRevocation = 1;
  /** Asks every worker for its metrics and sums them: counters and histograms add up, gauges (in flight, pool) too. */
  private readonly metrics = new AggregatorRegistry();
  /** The port the node serves on, once the first worker listens. */
  private port: number | undefined;
  /** The port new workers ask for: Node's cluster shares one listening socket among the workers that asked for the same one. */
  private requested: number;
  private started = false;
  private failedStarts = 0;
  private stopping = false;
  private exitCode = 0;
  private finished: (code: number) => void = () => undefined;
  private onListening: (port: number) => void = () => undefined;

  constructor(private readonly settings: PoolSettings) {
    this.requested = settings.port;
    cluster.on('exit', (worker, code, signal) => this.exited(worker, signal ?? `exit code ${code}`));
  }

  /**
   * Starts the workers and calls `onListening` once all of them listen. Resolves with the exit code of the hub:
   * 0 after `stop`, 1 when the workers could not start (they are stopped first).
   */
  run(onListening: (port: number) => void): Promise<number> {
    const done = new Promise<number>((resolve) => { this.finished = resolve; });
    this.onListening = onListening;
    for (let i = 0; i < this.settings.workers; i++) this.fork();
    return done;
  }

  /** Asks every worker to stop (each finishes the requests it is working on); `run` resolves once all ended. */
  stop(exitCode = 0): void {
    if (this.stopping) return;
    this.stopping = true;
    this.exitCode = exitCode;
    for (const worker of this.alive) worker.process.kill('SIGTERM');
    this.finishIfStopped();
  }

  private fork(): void {
    // Once no worker holds the shared socket (the last one died), the node's own port is asked for, not `0` again.
    if (this.listening.size === 0 && this.port !== undefined) this.requested = this.port;
    const start: WorkerStart = { port: this.requested, upSince: this.settings.upSince };
    const worker = cluster.fork({ [WORKER_START]: JSON.stringify(start) });
    this.alive.add(worker);
    // Both ends of the channel are this program; Node's own cluster messages do not reach 'message' listeners.
    worker.on('message', (message) => this.receive(worker, message as WorkerMessage));
  }

  private receive(worker: Worker, message: WorkerMessage): void {
    switch (message.type) {
      case 'listening': return this.listens(worker, message.port);
      case 'rate': return tell(worker, { type: 'rate', id: message.id, wait: this.rates.take(message.tid, message.perMinute, Date.now()) ?? null });
      case 'revoked': return this.revoke(worker, message.id, message.secretHash);
      case 'forgot': return this.forgot(worker, message.id);
      case 'changed': return this.relay(worker, message);
      case 'metrics': return this.reportMetrics(worker, message.id);
    }
  }

  private listens(worker: Worker, port: number): void {
    if (this.port !== undefined && port !== this.port) {
      // Asked for `0` just as the last worker holding the node's port went: it got another one, which nobody is told of.
      this.settings.log(`Worker ${worker.process.pid} listened on port ${port} instead of ${this.port}; starting another.`);
      worker.process.kill('SIGTERM');
      return;
    }
    this.port = port;
    this.listening.add(worker);
    this.failedStarts = 0;
    if (!this.started && this.listening.size === this.settings.workers) {
      this.started = true;
      this.onListening(port);
    }
  }

  /**
   * Tells the other workers to forget a deleted token and answers the deleting one when all did. A worker that does not
   * answer within the time a token stays cached (it is busy with a long synchronous write) no longer accepts it anyway.
   */
  private revoke(from: Worker, id: number, secretHash: string): void {
    const others = [...this.alive].filter((worker) => worker !== from && worker.isConnected());
    if (others.length === 0) return tell(from, { type: 'revoked', id });
    const key = this.nextRevocation++;
    const done = () => {
      clearTimeout(revocation.timer);
      this.revocations.delete(key);
      tell(from, { type: 'revoked', id });
    };
    const revocation: Revocation = { answer: done, waitingFor: new Set(others), timer: setTimeout(done, CLAIMS_TTL_MS) };
    this.revocations.set(key, revocation);
    for (const worker of others) tell(worker, { type: 'forget', id: key, secretHash });
  }

  /** A version one worker committed, to the others: their event streams hear of it at once (SQLite tells no other process). */
  private relay(from: Worker, changed: SpaceChanged): void {
    for (const worker of this.alive) if (worker !== from) tell(worker, changed);
  }

  /** A worker that does not answer within prom-client's 5 s (one starting, or stuck) makes the scrape fail, not lie. */
  private reportMetrics(worker: Worker, id: number): void {
    this.metrics.clusterMetrics().then(
      (text) => tell(worker, { type: 'metrics', id, text }),
      () => tell(worker, { type: 'metrics', id, text: null }),
    );
  }

  private forgot(worker: Worker, key: number): void {
    const revocation = this.revocations.get(key);
    if (!revocation) return;
    revocation.waitingFor.delete(worker);
    if (revocation.waitingFor.size === 0) revocation.answer();
  }

  private exited(worker: Worker, how: string): void {
    this.alive.delete(worker);
    const served = this.listening.delete(worker);
    for (const revocation of [...this.revocations.values()]) {
      if (revocation.waitingFor.delete(worker) && revocation.waitingFor.size === 0) revocation.answer();
    }
    if (this.stopping) return this.finishIfStopped();
    const pid = worker.process.pid;
    if (!this.started) {
      this.settings.log(`Worker ${pid} ended before it listened (${how}); stopping.`);
      return this.stop(1);
    }
    if (served) {
      this.settings.log(`Worker ${pid} ended (${how}); starting another.`);
      return this.fork();
    }
    this.failedStarts++;
    if (this.failedStarts >= MAX_FAILED_STARTS) {
      this.settings.log(`A new worker could not start ${MAX_FAILED_STARTS} times in a row (last: worker ${pid}, ${how}); stopping.`);
      return this.stop(1);
    }
    const delay = FIRST_RETRY_MS * 2 ** (this.failedStarts - 1);
    this.settings.log(`Worker ${pid} ended before it listened (${how}); starting another in ${delay / 1000} s.`);
    setTimeout(() => { if (!this.stopping) this.fork(); }, delay);
  }

  private finishIfStopped(): void {
    if (this.alive.size === 0) this.finished(this.exitCode);
  }
}

/** A worker that went away cannot be told anything: its exit is handled on its own. */
function tell(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message, () => undefined);
}
