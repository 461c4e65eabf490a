// Webhook subscriptions and their delivery leases in the PostgreSQL catalog database (docs/subscriptions.md).
import type { DeliveryOutcome, SubscriptionChange, SubscriptionRecord, SubscriptionState, SubscriptionStore } from '../storage.js';
import type { Database } from './database.js';

interface SubscriptionRow {
  sid: string; id: string; spaceId: string; destination: string; type: string; filter: string | null; secret: string;
  state: string; delivered: string; attempts: number; retryAt: string; lastError: string | null; createdAt: string; tokenId: string | null;
}

const COLUMNS = `sid, id, space_id AS "spaceId", destination, type, filter, secret, state, delivered, attempts, retry_at AS "retryAt",
  last_error AS "lastError", created_at AS "createdAt", token_id AS "tokenId"`;

const recordOf = (row: SubscriptionRow): SubscriptionRecord => ({
  ...row, sid: Number(row.sid), state: row.state as SubscriptionState, delivered: Number(row.delivered), retryAt: Number(row.retryAt),
  createdAt: Number(row.createdAt),
});

/** Text cannot hold U+0000: ids, destinations and filters with it are refused before they get here. */
export class PostgresSubscriptionStore implements SubscriptionStore {
  constructor(private readonly db: Database) {}

  async create(record: SubscriptionRecord): Promise<boolean> {
    const rows = await this.db.query(`INSERT INTO subscriptions (sid, id, space_id, destination, type, filter, secret, state, delivered, created_at, token_id)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING RETURNING id`,
    [record.sid, record.id, record.spaceId, record.destination, record.type, record.filter, record.secret, record.state, record.delivered,
      record.createdAt, record.tokenId]);
    return rows.length === 1;
  }

  async get(sid: number, id: string): Promise<SubscriptionRecord | undefined> {
    const [row] = await this.db.query<SubscriptionRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE sid = $1 AND id = $2`, [sid, id]);
    return row && recordOf(row);
  }

  async list(sid: number): Promise<SubscriptionRecord[]> {
    return (await this.db.query<SubscriptionRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE sid = $1 ORDER BY id`, [sid])).map(recordOf);
  }

  async update(sid: number, id: string, change: SubscriptionChange): Promise<SubscriptionRecord | undefined> {
    const [row] = await this.db.query<SubscriptionRow>(`UPDATE subscriptions SET destination = $3, type = $4, filter = $5, state = $6, token_id = $10,
        attempts = CASE WHEN $7 THEN 0 ELSE attempts END, retry_at = CASE WHEN $7 THEN 0 ELSE retry_at END,
        last_error = CASE WHEN $7 THEN $8 ELSE last_error END, delivered = greatest(delivered, $9)
      WHERE sid = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [sid, id, change.destination, change.type, change.filter, change.state, change.resume !== undefined, change.resume?.note ?? null, change.resume?.delivered ?? -1,
      change.tokenId]);
    return row && recordOf(row);
  }

  async delete(sid: number, id: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM subscriptions WHERE sid = $1 AND id = $2 RETURNING id', [sid, id])).length === 1;
  }

  /** Nodes claiming at once skip each other's locked rows instead of waiting for them. */
  async claim(node: string, now: number, until: number, limit: number): Promise<SubscriptionRecord[]> {
    const rows = await this.db.query<SubscriptionRow>(`UPDATE subscriptions SET lease_owner = $1, lease_until = $3 WHERE (sid, id) IN (
        SELECT sid, id FROM subscriptions WHERE state = 'ACTIVE' AND (lease_owner = $1 OR lease_until < $2) ORDER BY lease_until LIMIT $4
        FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`, [node, now, until, limit]);
    return rows.map(recordOf);
  }

  async record(sid: number, id: string, node: string, outcome: DeliveryOutcome): Promise<boolean> {
    const rows = await this.db.query(`UPDATE subscriptions SET delivered = greatest(delivered, $4), attempts = $5, retry_at = $6, last_error = $7,
        state = CASE WHEN $8 THEN 'SUSPENDED' ELSE state END
      WHERE sid = $1 AND id = $2 AND lease_owner = $3 AND state = 'ACTIVE' RETURNING id`,
    [sid, id, node, outcome.delivered, outcome.attempts, outcome.retryAt, outcome.lastError, outcome.suspend]);
    return rows.length === 1;
  }

  async release(node: string): Promise<void> {
    await this.db.query('UPDATE subscriptions SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = $1', [node]);
  }

  async pinnedFrom(sid: number, bound: number): Promise<number | undefined> {
    const [row] = await this.db.query<{ pinned: string | null }>('SELECT min(delivered) + 1 AS pinned FROM subscriptions WHERE sid = $1 AND delivered >= $2', [sid, bound]);
    return row?.pinned === null || row === undefined ? undefined : Number(row.pinned);
  }
}
