// Webhook subscriptions and their delivery leases in the embedded SQLite database (docs/subscriptions.md).
import type Database from 'better-sqlite3';
import type { DeliveryOutcome, SubscriptionChange, SubscriptionRecord, SubscriptionState, SubscriptionStore } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

interface SubscriptionRow {
  sid: number; id: string; spaceId: string; destination: string; type: string; filter: string | null; secret: string;
  state: string; delivered: number; attempts: number; retryAt: number; lastError: string | null; createdAt: number; tokenId: string | null;
}

const COLUMNS = `sid, id, space_id AS spaceId, destination, type, filter, secret, state, delivered, attempts, retry_at AS retryAt,
  last_error AS lastError, created_at AS createdAt, token_id AS tokenId`;

const recordOf = (row: SubscriptionRow): SubscriptionRecord => ({ ...row, state: row.state as SubscriptionState });

export class SqliteSubscriptionStore implements SubscriptionStore {
  private readonly insert;
  private readonly selectOne;
  private readonly selectOfSpace;
  private readonly change;
  private readonly remove;
  private readonly claimable;
  private readonly take;
  private readonly outcome;
  private readonly free;
  private readonly pin;

  constructor(db: Database.Database, private readonly writes: WriteTransactions) {
    this.insert = db.prepare(`INSERT OR IGNORE INTO subscriptions (sid, id, space_id, destination, type, filter, secret, state, delivered, created_at, token_id)
      VALUES (@sid, @id, @spaceId, @destination, @type, @filter, @secret, @state, @delivered, @createdAt, @tokenId)`);
    this.selectOne = db.prepare<[number, string], SubscriptionRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE sid = ? AND id = ?`);
    this.selectOfSpace = db.prepare<[number], SubscriptionRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE sid = ? ORDER BY id`);
    this.change = db.prepare(`UPDATE subscriptions SET destination = @destination, type = @type, filter = @filter, state = @state, token_id = @tokenId,
        attempts = CASE WHEN @resume THEN 0 ELSE attempts END, retry_at = CASE WHEN @resume THEN 0 ELSE retry_at END,
        last_error = CASE WHEN @resume THEN @note ELSE last_error END, delivered = max(delivered, @delivered)
      WHERE sid = @sid AND id = @id RETURNING ${COLUMNS}`);
    this.remove = db.prepare('DELETE FROM subscriptions WHERE sid = ? AND id = ?');
    this.claimable = db.prepare<{ node: string; now: number }, { found: number }>(`SELECT EXISTS (
        SELECT 1 FROM subscriptions WHERE state = 'ACTIVE' AND (lease_owner = @node OR lease_until < @now)) AS found`);
    this.take = db.prepare(`UPDATE subscriptions SET lease_owner = @node, lease_until = @until WHERE (sid, id) IN (
        SELECT sid, id FROM subscriptions WHERE state = 'ACTIVE' AND (lease_owner = @node OR lease_until < @now) ORDER BY lease_until LIMIT @limit)
      RETURNING ${COLUMNS}`);
    this.outcome = db.prepare(`UPDATE subscriptions SET delivered = max(delivered, @delivered), attempts = @attempts, retry_at = @retryAt,
        last_error = @lastError, state = CASE WHEN @suspend THEN 'SUSPENDED' ELSE state END
      WHERE sid = @sid AND id = @id AND lease_owner = @node AND state = 'ACTIVE'`);
    this.free = db.prepare('UPDATE subscriptions SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = ?');
    this.pin = db.prepare<[number, number], { pinned: number | null }>('SELECT min(delivered) + 1 AS pinned FROM subscriptions WHERE sid = ? AND delivered >= ?');
  }

  async create(record: SubscriptionRecord): Promise<boolean> {
    return this.writes.run(() => this.insert.run(record).changes === 1);
  }

  async get(sid: number, id: string): Promise<SubscriptionRecord | undefined> {
    const row = this.selectOne.get(sid, id);
    return row && recordOf(row);
  }

  async list(sid: number): Promise<SubscriptionRecord[]> {
    return this.selectOfSpace.all(sid).map(recordOf);
  }

  async update(sid: number, id: string, change: SubscriptionChange): Promise<SubscriptionRecord | undefined> {
    const row = await this.writes.run(() => this.change.get({
      sid, id, destination: change.destination, type: change.type, filter: change.filter, state: change.state, tokenId: change.tokenId,
      resume: change.resume ? 1 : 0, note: change.resume?.note ?? null, delivered: change.resume?.delivered ?? -1,
    }) as SubscriptionRow | undefined);
    return row && recordOf(row);
  }

  async delete(sid: number, id: string): Promise<boolean> {
    return this.writes.run(() => this.remove.run(sid, id).changes === 1);
  }

  /** Looked for first without the write lock: every process polls, and most polls of most hubs find nothing to take. */
  async claim(node: string, now: number, until: number, limit: number): Promise<SubscriptionRecord[]> {
    if (this.claimable.get({ node, now })?.found !== 1) return [];
    return (await this.writes.run(() => this.take.all({ node, now, until, limit }) as SubscriptionRow[])).map(recordOf);
  }

  async record(sid: number, id: string, node: string, outcome: DeliveryOutcome): Promise<boolean> {
    return this.writes.run(() => this.outcome.run({ sid, id, node, ...outcome, suspend: outcome.suspend ? 1 : 0 }).changes === 1);
  }

  async release(node: string): Promise<void> {
    await this.writes.run(() => this.free.run(node));
  }

  async pinnedFrom(sid: number, bound: number): Promise<number | undefined> {
    return this.pin.get(sid, bound)?.pinned ?? undefined;
  }
}
