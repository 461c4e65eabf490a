// One PostgreSQL database the hub uses: its connection pool, transactions, and the mapping of driver errors to hub errors.
import pg from 'pg';
import { throwIfCancelled } from '../shared/read-bounds.js';
import { StorageError } from '../storage-error.js';
import { readLargeAsciiTextsAsLatin1 } from './large-ascii-texts.js';
import { maskUrl } from './mask-url.js';

export type Client = pg.PoolClient;
/** A connection of its own, outside the pool, for start-up work. */
export type Session = pg.ClientBase;

/**
 * A constant statement that each connection prepares once and then only executes, saving the parse and
 * plan of every call: for the small lookups every request makes. Statements whose best plan depends on
 * the values (keyset pages) stay unnamed, so they are planned for each call.
 */
export interface Prepared {
  name: string;
  text: string;
}

export interface PoolOptions {
  /** Connections this node keeps at most to the database. */
  size: number;
  /** A statement running longer than this (ms) is cancelled by the server (504); 0 for no deadline. */
  statementTimeout: number;
}

/** The client gives up this much later than the server's deadline, for a server that no longer answers at all. */
const QUERY_TIMEOUT_GRACE_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * Idle connections are never closed (pg-pool closes them after 10 s by default; 0 turns that off). A new backend
 * costs the database 20-45 ms to connect and 50-100 ms more for its first area read and first vector tile (PostGIS
 * and PROJ load, catalog caches fill). And a backend maps each page of the shared buffers into its own address space
 * the first time it touches it: one page fault per 4 KiB, about 80 µs each on a VM where faults trap to the host, so a
 * new backend spent about 2.5 s more in its first few hundred small boxes over 128 MB of shared buffers (250 faults
 * per box, then none; docs/decisions.md, "Ten million features in one space"). A pause of a few minutes used to
 * hand all of that to the next requests; the pool's size already bounds what is kept.
 */
const IDLE_TIMEOUT_MS = 0;
/**
 * The pool's sessions run with 16 MB of `work_mem` and without JIT compilation (the connection's startup options).
 * - `work_mem`: a page of 10,000 features is sorted by insertion order, about 5.5 MB for points. With the server's
 *   default of 4 MB that sort went to disk, and a 10,000-feature box's statement took 45-63 ms instead of 40-42
 *   (docs/decisions.md, "Large boxes on PostgreSQL: the sort in memory, the text outside V8's heap"). Each sort of a
 *   statement holds at most this much before it spills, so it bounds what a connection of the pool adds to the
 *   server's memory.
 * - JIT: with the server's default (`jit = on`, `jit_above_cost` 100,000) PostgreSQL compiled the hub's large reads,
 *   whose plans cost more than that, and the compiled code saved nothing measurable: at 1,000,000 points about 100 ms
 *   of a vector tile at zoom 2-5 and 390 ms of one at zoom 0; with 2,000,000 rows in the table also 12 ms of each
 *   10,000-feature box (docs/decisions.md, "Small boxes on PostgreSQL: the server's memory and JIT").
 * An operator who wants other settings puts `options` in the connection URL (`?options=-c%20jit%3Don`): pg takes the
 * URL's options in place of these.
 */
export const SESSION_OPTIONS = '-c jit=off -c work_mem=16MB';
// Before any connection reads: pg's reader then makes large ASCII values outside V8's heap.
readLargeAsciiTextsAsLatin1();

/** The hub's connections name themselves so that operators (and tests) find them in pg_stat_activity. */
const APPLICATION_NAME = 'spatial-data-hub';

/**
 * Sends `first` and `second` together (pg's pipeline mode, on for just these two) instead of waiting for the first's
 * answer: each round trip is an event-loop turn and a wake-up in both the hub and the backend. Pipeline mode ends once
 * both are answered ('drain'), so what follows runs as before (COPY and cursors are refused in pipeline mode). Each
 * statement has its own Sync: one failing leaves the other to run (in an aborted transaction, where COMMIT answers
 * ROLLBACK). Throws the first's error before the second's.
 */
async function pipelined<A, B>(client: Client, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  // @types/pg has `pipeline` read-only: pg reads it on every query, so it can be set between queries.
  const mode = client as unknown as { pipeline: boolean };
  const off = () => { mode.pipeline = false; };
  mode.pipeline = true;
  client.once('drain', off);
  const [a, b] = await Promise.allSettled([first(), second()]);
  // Nothing of the two is on the wire once both settled: pipeline mode is over, also where `second` sent nothing.
  client.removeListener('drain', off);
  off();
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

/**
 * BEGIN and the first statement of `work` go out together, instead of BEGIN's round trip first (docs/decisions.md,
 * "Cheaper single writes"). No transaction starts with COPY or a cursor. BEGIN on a healthy connection cannot fail; on a
 * broken one the statement behind it fails too.
 */
async function pipelinedBegin<T>(client: Client, work: (client: Client) => Promise<T>): Promise<T> {
  const [, done] = await pipelined(client, () => client.query('BEGIN'), () => work(client));
  return done;
}

/** Connections whose transaction's COMMIT already went out with its last statement (`queryAndCommit`). */
const committed = new WeakSet<Client>();

/**
 * The last statement of a transaction (of `Database.transaction`'s work) with COMMIT right behind it, in one round trip
 * (docs/decisions.md, "Cheaper single writes, second round"): nothing of the work may follow it. A failed statement
 * leaves the transaction aborted, so its COMMIT only rolls back, and the statement's error is thrown as before; a failed
 * COMMIT throws its own. Either way the transaction has ended, and `transaction` neither commits nor rolls back again.
 */
export async function queryAndCommit<R extends pg.QueryResultRow>(client: Client, statement: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  committed.add(client);
  const [result] = await pipelined(client, () => client.query<R>(statement), () => client.query('COMMIT'));
  return result;
}

/**
 * Whether a connection whose statement was cancelled can serve again. Once `pg_cancel_backend` has returned, the
 * signal is on its way to the backend: arriving while the backend waits for a statement it is ignored, arriving
 * while one runs it cancels that one. So one `SELECT 1` after it takes the cancel if nothing else did, and either
 * way the connection is clean afterwards.
 */
async function settle(client: Client, cancel: Promise<void>): Promise<boolean> {
  await cancel;
  try {
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    return sqlState(error) === '57014';
  }
}

/** One statement with its values, its rows as objects or (`rowMode: 'array'`) as arrays. */
type Statement = pg.QueryConfig | pg.QueryArrayConfig;

const INT8_OID = 20;

/** bigint columns (seq, counters, millisecond timestamps) stay far below 2^53, so they are read as numbers. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** SQLSTATE classes and codes meaning the database is unreachable or went away (502). */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '3D000', '28000', '28P01']);
/** SQLSTATE codes meaning a statement or lock wait took too long (504). */
const TIMEOUT_STATES = new Set(['57014', '55P03']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'ENOENT']);

/** SQLSTATEs after which the whole transaction is worth one more try: a concurrent insert of the same id, a deadlock. */
const RETRY_STATES = new Set(['23505', '40P01', '40001']);

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * The one place where driver and server errors become storage errors: unreachable → `unavailable`, too
 * slow → `timeout`. Errors of the caller's own (a write planner's) and anything else pass through.
 */
function storageError(error: unknown): unknown {
  if (error instanceof StorageError || !(error instanceof Error)) return error;
  const state = sqlState(error);
  if (state !== undefined) {
    if (TIMEOUT_STATES.has(state)) return new StorageError('timeout', error.message);
    if (UNAVAILABLE_STATES.has(state) || state.startsWith('08')) return new StorageError('unavailable', error.message);
    return error;
  }
  const code = (error as { code?: unknown }).code;
  if (code === 'ETIMEDOUT' || /timeout/i.test(error.message)) return new StorageError('timeout', error.message);
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return new StorageError('unavailable', error.message);
  if (/Connection terminated|connection error|Client has encountered a connection error|not queryable/i.test(error.message)) {
    return new StorageError('unavailable', error.message);
  }
  return error;
}

/**
 * Errors after which a connection must not go back to the pool: the server or the network went away, or the client
 * gave up waiting (its state is then unknown). A statement the server cancelled (a deadline, a lock wait, a client
 * that went away) ends with the server ready for the next one, so that connection stays.
 */
function breaksConnection(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined && TIMEOUT_STATES.has(state)) return false;
  const mapped = storageError(error);
  return mapped instanceof StorageError && (mapped.failure === 'unavailable' || mapped.failure === 'timeout');
}

export class Database {
  readonly pool: pg.Pool;
  /** The identity recorded in the database itself (set by the storage at start-up), used as a space's location. */
  id = '';
  private ready: Promise<void> = Promise.resolve();

  constructor(readonly url: string, options: PoolOptions) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.size,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: IDLE_TIMEOUT_MS,
      statement_timeout: options.statementTimeout,
      query_timeout: options.statementTimeout > 0 ? options.statementTimeout + QUERY_TIMEOUT_GRACE_MS : 0,
      keepAlive: true,
      application_name: APPLICATION_NAME,
      options: SESSION_OPTIONS,
      types,
    });
    // An idle connection that dies (server restart, network) is dropped by the pool; the next request reconnects.
    // Without a listener the error event would crash the process.
    this.pool.on('error', () => {});
  }

  /** Queries wait for `startup` (migrations, identity) and fail with its error. */
  waitFor(startup: Promise<void>): void {
    this.ready = startup;
    // Callers see a failure through their query; this only keeps it from counting as unhandled.
    startup.catch(() => {});
  }

  get name(): string {
    return maskUrl(this.url);
  }

  /** `signal` cancels the statement in the server when it aborts (see `cancellable`). */
  async query<R>(sql: string | Prepared, params: unknown[] = [], signal?: AbortSignal): Promise<R[]> {
    const config = typeof sql === 'string' ? { text: sql, values: params } : { ...sql, values: params };
    return await this.run(config, signal) as R[];
  }

  /** Rows as arrays, for the hot read path. */
  async queryArrays<R extends unknown[]>(sql: string | Prepared, params: unknown[] = [], signal?: AbortSignal): Promise<R[]> {
    const config = typeof sql === 'string' ? { text: sql } : sql;
    return await this.run({ ...config, values: params, rowMode: 'array' }, signal) as R[];
  }

  /** The rows of one statement (objects, or arrays for an array config). */
  private async run(config: Statement, signal: AbortSignal | undefined): Promise<unknown[]> {
    await this.ready;
    if (signal) return this.cancellable(config, signal);
    try {
      return (await this.pool.query(config)).rows;
    } catch (error) {
      throw storageError(error);
    }
  }

  /**
   * Runs one statement on a connection held for it, so that an abort of `signal` (the client went away) can
   * cancel it in the server instead of leaving the database working for nobody. A connection whose statement
   * was cancelled goes back to the pool once the cancel can no longer reach the next statement (`settle`): a new
   * backend would cost far more than the check (see IDLE_TIMEOUT_MS), and maps cancel tiles all the time.
   */
  private async cancellable(config: Statement, signal: AbortSignal): Promise<unknown[]> {
    throwIfCancelled(signal);
    const client = await this.connect();
    let broken = false;
    let cancel: Promise<void> | undefined;
    const onError = () => { broken = true; };
    const onAbort = () => { cancel = this.cancelBackend(client); };
    client.on('error', onError);
    try {
      throwIfCancelled(signal);
      signal.addEventListener('abort', onAbort, { once: true });
      return (await client.query(config)).rows;
    } catch (error) {
      broken ||= breaksConnection(error);
      throw storageError(error);
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (cancel && !broken) broken = !(await settle(client, cancel));
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /**
   * Cancels what a pooled connection is running, from a short-lived connection of its own: asking through
   * the pool could wait behind the very statements it should cancel. The pid is the backend's key the
   * server sent at connect (pg keeps it as `processID`). A cancel that fails leaves the statement to its deadline.
   * Resolves once the cancel was sent or given up.
   */
  private cancelBackend(client: Client): Promise<void> {
    const pid = (client as unknown as { processID: number | null }).processID;
    if (!pid) return Promise.resolve();
    const canceller = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: `${APPLICATION_NAME} cancel` });
    canceller.on('error', () => {});
    return canceller.connect()
      .then(() => canceller.query('SELECT pg_cancel_backend($1)', [pid]))
      .then(() => {}, () => {})
      .finally(() => canceller.end().catch(() => {}));
  }

  /**
   * Runs `work` in one transaction on one connection. A unique violation (a concurrent insert of the same
   * id) or a deadlock retries the whole transaction once; `work` must therefore decide only from what it reads.
   */
  async transaction<T>(work: (client: Client) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      let broken = false;
      // The pool only listens for errors of idle connections; one dying while checked out must not crash the process.
      // The next statement on it then fails and is mapped like any other.
      const onError = () => { broken = true; };
      client.on('error', onError);
      try {
        const result = await pipelinedBegin(client, work);
        if (!committed.has(client)) await client.query('COMMIT');
        return result;
      } catch (error) {
        broken ||= breaksConnection(error);
        if (!broken && !committed.has(client)) await client.query('ROLLBACK').catch(() => { broken = true; });
        if (attempt === 1 && !broken && RETRY_STATES.has(sqlState(error) ?? '')) continue;
        throw storageError(error);
      } finally {
        committed.delete(client);
        client.removeListener('error', onError);
        client.release(broken);
      }
    }
  }

  /**
   * Runs start-up work (limits, migrations, identity) on a connection outside the pool, without the query
   * deadline: an index build, or waiting for another node's migration, may take longer than any request should.
   */
  async session<T>(work: (client: Session) => Promise<T>): Promise<T> {
    const client = this.client();
    client.on('error', () => {});
    await client.connect().catch((error: unknown) => {
      throw new Error(`Cannot connect to ${this.name}: ${(error as Error).message}`);
    });
    try {
      return await work(client);
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * A client of its own for start-up work. pg refuses a URL it cannot parse with a bare "Invalid URL" (it leaves the
   * URL out, as it may hold a password): the message names it masked and says how to write such a password.
   */
  private client(): pg.Client {
    try {
      return new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: APPLICATION_NAME, types });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_INVALID_URL') throw error;
      throw new Error(`Cannot read ${this.name} as a connection URL: a password holding / ? # or , must be written ` +
        'percent-encoded (%2F %3F %23 %2C)');
    }
  }

  private async connect(): Promise<Client> {
    await this.ready;
    try {
      return await this.pool.connect();
    } catch (error) {
      throw storageError(error);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
