// Spaces in PostgreSQL: the catalog row (id, definition, location) joined with the counters kept next to the space's features.
import DataLoader from 'dataloader';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { SpaceListFilter, TimeCondition } from '../../core/space-query.js';
import { StorageError } from '../storage-error.js';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { SpaceKey, SpaceStore, SpaceWithArea, SpaceWithFeature, StoredSpace } from '../storage.js';
import { type Client, type Database, type Prepared, sqlState } from './database.js';
import type { Locations } from './locations.js';
import { cannotExist, standIn } from './nul-stand-in.js';
import { AreaBatches, areaJob } from './area-batches.js';
import { firstPageOf, type SpaceAreaRow, spaceWithAreaStatement } from './space-with-area.js';

interface CatalogRow {
  sid: number;
  id: string;
  definition: string;
  location: string;
}

interface ContentsRow {
  sid: number;
  content_updated_at: number;
  revision: number;
}

/** The catalog row with the counters of the catalog database itself (NULL for spaces held elsewhere). */
type JoinedRow = CatalogRow & { [K in keyof Omit<ContentsRow, 'sid'>]: ContentsRow[K] | null };

const JOINED = `SELECT s.sid, s.id, s.definition, s.location, c.content_updated_at, c.revision
                  FROM spaces s LEFT JOIN space_counters c ON c.sid = s.sid`;
const CONTENTS = 'SELECT sid, content_updated_at, revision FROM space_counters';
/**
 * Batched lookups (see `lookups`) take their ids as a JSON array. Over a `text[]` parameter PostgreSQL's generic plan
 * assumes ten elements while the custom plan sees the one or two a batch usually holds, so the generic plan looked
 * dearer and the statement was planned anew on every call: 0.2-0.4 ms of planning against 0.05-0.08 ms of
 * execution. `json_array_elements_text` is estimated at 100 rows in both plans, so the generic plan is kept after
 * the first few calls on a connection. Each lateral lookup stays an index probe (LIMIT 1), whatever the estimate.
 */
const IDS = (param: string) => `json_array_elements_text(${param}::json)`;
const GET: Prepared = {
  name: 'get_spaces',
  text: `SELECT s.sid, s.id, s.definition, s.location, c.content_updated_at, c.revision
           FROM ${IDS('$1')} AS w(id)
          CROSS JOIN LATERAL (SELECT sid, id, definition, location FROM spaces WHERE id = w.id LIMIT 1) s
           LEFT JOIN space_counters c ON c.sid = s.sid`,
};
/**
 * Many lookups of (space id, feature id) in one statement: $1 the space ids, $2 the feature ids (null finds
 * none), $3 the catalog database's identity; the feature comes along when the space's features are held there
 * too.
 */
const GET_WITH_FEATURES: Prepared = {
  name: 'get_spaces_with_features',
  text: `SELECT w.n, s.sid, s.definition, s.location,
                (SELECT f.feature FROM features f WHERE s.location = $3 AND f.sid = s.sid AND f.id = w.feature_id) AS feature
           FROM ROWS FROM (${IDS('$1')}, ${IDS('$2')}) WITH ORDINALITY AS w(space_id, feature_id, n)
          CROSS JOIN LATERAL (SELECT sid, definition, location FROM spaces WHERE id = w.space_id LIMIT 1) s`,
};
/** Bounds one statement's arrays; far above what two rounds of the event loop bring. */
const MAX_LOOKUPS_PER_STATEMENT = 256;

/**
 * Sends a batch at the end of the round of the event loop after the one its first lookup arrived in: the requests
 * read in that next round join it. Measured on a cached tile under autocannon (8 connections, loopback): one round
 * gave 3.2 lookups per statement (a quarter of them alone), two rounds 6.2 (most batches all eight), and the
 * statement's share is most of what a cached tile costs beyond `GET /hub` (docs/cache-and-changed-tiles.md, fifth
 * look). The second round's poll does not block while an immediate is pending, so a lone lookup waits only for the
 * rounds' own work. Still strict: the statement starts after every lookup it answers was asked for.
 */
const afterNextRound = (send: () => void): void => {
  setImmediate(() => setImmediate(send));
};

interface Lookup {
  spaceId: string;
  featureId: string | null;
}

interface LookupRow {
  sid: number;
  definition: string;
  location: string;
  feature: string | null;
  /** The catalog database's identity when the lookup ran. */
  catalogId: string;
}

/** The space compared through an initplan, as in feature-store.ts's LOCK_STORED: a space the statistics do not know must not get the primary key's scan. */
export const FEATURE_BY_ID: Prepared = { name: 'feature_by_id', text: 'SELECT feature FROM features WHERE sid = (SELECT $1::bigint) AND id = $2' };
/**
 * A keyset page: $1 the last space number of the page before, $2 the page size. `c.sid > $1` repeats what the
 * join implies: PostgreSQL does not infer it, and a merge join then read the counters from the first space on
 * for every page (29 ms instead of 1.4 ms for the last page of 40,000 spaces).
 */
const PAGE = `SELECT s.sid, s.id, s.definition, s.location, c.content_updated_at, c.revision
                FROM spaces s LEFT JOIN space_counters c ON c.sid = s.sid AND c.sid > $1
               WHERE s.sid > $1`;
const PAGE_PARAMS = 2;

/** `content_updated_at` against an OR of values; numeric, as a value may be larger than a bigint holds. */
const contentCondition = (column: string, { op }: TimeCondition, param: number): string =>
  `${column} ${op === '!=' ? '<>' : op} ANY($${param}::numeric[])`;

/** The catalog part of a list filter, on the generated columns owner and shared (see migrations.ts). */
function catalogConditions(filter: SpaceListFilter, params: unknown[]): string[] {
  const conditions: string[] = [];
  const param = (value: unknown) => `$${params.push(value) + PAGE_PARAMS}`;
  if (filter.owner && 'is' in filter.owner) conditions.push(`s.owner = ${param(standIn(filter.owner.is))}`);
  if (filter.owner && 'isNot' in filter.owner) conditions.push(`s.owner IS DISTINCT FROM ${param(standIn(filter.owner.isNot))}`);
  if (filter.sharedOrOwnedBy) conditions.push(`(s.shared OR s.owner = ANY(${param(standIn(filter.sharedOrOwnedBy))}::text[]))`);
  // Counters in the catalog database are joined and filtered here; those held elsewhere are filtered there, per page.
  if (filter.contentUpdatedAt) {
    params.push(filter.contentUpdatedAt.values);
    conditions.push(`(c.sid IS NULL OR ${contentCondition('c.content_updated_at', filter.contentUpdatedAt, params.length + PAGE_PARAMS)})`);
  }
  return conditions;
}

function toSpace(row: CatalogRow, contents: Omit<ContentsRow, 'sid'>): StoredSpace {
  return {
    id: row.id,
    key: { sid: row.sid, location: row.location },
    definition: JSON.parse(row.definition) as SpaceDefinition,
    contentUpdatedAt: contents.content_updated_at,
    revision: contents.revision,
  };
}

/** Removes a space's features and counters from the database holding them; returns the counters. */
async function deleteContents(client: Client, sid: number): Promise<ContentsRow | undefined> {
  const { rows } = await client.query<ContentsRow>(`${CONTENTS} WHERE sid = $1`, [sid]);
  await client.query('DELETE FROM space_contents WHERE sid = $1', [sid]);
  await client.query('DELETE FROM space_changes WHERE sid = $1', [sid]);
  await client.query('DELETE FROM features WHERE sid = $1', [sid]);
  await client.query('DELETE FROM feature_history WHERE sid = $1', [sid]);
  await client.query('DELETE FROM space_versions WHERE sid = $1', [sid]);
  await client.query('DELETE FROM space_tags WHERE sid = $1', [sid]);
  return rows[0];
}

export class PostgresSpaceStore implements SpaceStore {
  /** Area reads of one turn share a statement (area-batches.ts). */
  private readonly areaBatches: AreaBatches;

  constructor(private readonly locations: Locations) {
    this.areaBatches = new AreaBatches(locations.catalog);
  }

  /**
   * Completes catalog rows with their counters, one query per other database. A space whose counters are
   * missing is half-created or half-deleted across two databases and is left out, as is one held elsewhere
   * whose counters do not meet `condition`.
   */
  private async complete(rows: JoinedRow[], condition?: TimeCondition): Promise<StoredSpace[]> {
    const elsewhere = new Map<Database, number[]>();
    for (const row of rows) {
      const db = this.locations.byId(row.location);
      if (db === this.locations.catalog) continue;
      const sids = elsewhere.get(db) ?? [];
      sids.push(row.sid);
      elsewhere.set(db, sids);
    }
    const contents = new Map<number, ContentsRow>();
    await Promise.all([...elsewhere].map(async ([db, sids]) => {
      const [where, params] = condition
        ? [` AND ${contentCondition('content_updated_at', condition, 2)}`, [sids, condition.values]]
        : ['', [sids]];
      for (const row of await db.query<ContentsRow>(`${CONTENTS} WHERE sid = ANY($1::bigint[])${where}`, params)) contents.set(row.sid, row);
    }));
    const spaces: StoredSpace[] = [];
    for (const row of rows) {
      const counters = row.content_updated_at === null ? contents.get(row.sid) : row as Omit<ContentsRow, 'sid'>;
      if (counters) spaces.push(toSpace(row, counters));
    }
    return spaces;
  }

  async create(id: string, definition: SpaceDefinition, createdAt: number, near?: SpaceKey): Promise<StoredSpace> {
    return this.locations.catalog.transaction(async (client) => {
      const db = near ? this.locations.byId(near.location) : await this.locations.placeNew(client);
      let sid: number;
      try {
        ({ rows: [{ sid }] } = await client.query<{ sid: number }>(
          'INSERT INTO spaces (id, definition, location) VALUES ($1, $2, $3) RETURNING sid', [id, JSON.stringify(definition), db.id]));
      } catch (error) {
        if (sqlState(error) === '23505') throw new StorageError('spaceExists', id);
        throw error;
      }
      // On another database the counters commit first: a failure before the catalog commits leaves an unreachable row, never a space without counters.
      await this.locations.within(db, client, (target) =>
        target.query('INSERT INTO space_contents (sid, content_updated_at) VALUES ($1, $2)', [sid, createdAt]));
      return { id, key: { sid, location: db.id }, definition, contentUpdatedAt: createdAt, revision: 0 };
    });
  }

  async get(id: string): Promise<StoredSpace | undefined> {
    if (cannotExist(id)) return undefined;
    return this.spaceLookups.load(id);
  }

  /** Space lookups of two event-loop rounds share one statement, as GETs by id do (see `lookups`, `afterNextRound`). */
  private readonly spaceLookups = new DataLoader<string, StoredSpace | undefined>(async (ids) => {
    const rows = await this.locations.catalog.query<JoinedRow>(GET, [JSON.stringify(ids)]);
    const spaces = new Map((await this.complete(rows)).map((space) => [space.id, space]));
    return ids.map((id) => spaces.get(id));
  }, { cache: false, batchScheduleFn: afterNextRound, maxBatchSize: MAX_LOOKUPS_PER_STATEMENT });

  async getWithFeature(id: string, featureId: string): Promise<SpaceWithFeature | undefined> {
    if (cannotExist(id)) return undefined;
    // A feature id with U+0000 cannot be stored, and the database would reject it as a parameter.
    const wanted = cannotExist(featureId) ? null : featureId;
    const row = await this.lookups.load({ spaceId: id, featureId: wanted });
    if (!row) return undefined;
    const definition = JSON.parse(row.definition) as SpaceDefinition;
    if (row.location === row.catalogId || wanted === null) return { definition, feature: row.feature ?? undefined };
    const [held] = await this.locations.byId(row.location).query<{ feature: string }>(FEATURE_BY_ID, [row.sid, wanted]);
    return { definition, feature: held?.feature };
  }

  /**
   * One statement instead of a lookup and then the read: on this VM each statement costs the hub about half a
   * millisecond of CPU to send (the write that wakes a backend) besides its round trip (docs/decisions.md, "Small
   * boxes on PostgreSQL at 1,000,000 points"). A box is read in a batch with the other area reads of its turn
   * (area-batches.ts), another area with a statement of its own. A space held in another database comes without its
   * features, as do reads a probe does not answer.
   */
  async getWithArea(id: string, query: FeatureQuery): Promise<SpaceWithArea | undefined> {
    if (cannotExist(id)) return undefined;
    const catalog = this.locations.catalog;
    const catalogId = catalog.id;
    const job = areaJob(id, query);
    const alone = job ? undefined : spaceWithAreaStatement(id, catalogId, query);
    const size = job?.size ?? alone?.size;
    if (size === undefined) {
      const space = await this.get(id);
      return space && { space };
    }
    const row = job ? await this.areaBatches.load(job) : alone && (await catalog.queryArrays<SpaceAreaRow>(alone.statement, alone.values))[0];
    if (!row) return undefined;
    const [sid, , definition, location, contentUpdatedAt, revision] = row;
    const [space] = await this.complete([{ sid, id, definition, location, content_updated_at: contentUpdatedAt, revision }]);
    if (!space) return undefined;
    const first = firstPageOf(row, catalogId, size, query.limit);
    return first ? { space, first } : { space };
  }

  /**
   * The lookups that arrive while the event loop handles two rounds of sockets go to the database as one
   * statement: under load a GET by id then costs a share of a round trip and of a statement, not a whole one.
   * A lookup waits for nothing but the end of the next round (`afterNextRound`), so a lone GET is not delayed. It is
   * strict: DataLoader only adds a lookup to a batch not sent yet, so its statement starts after it was asked for
   * (test/storage/strict-lookups.test.ts). Keeping one batch in flight at a time, so that more lookups share one, was
   * measured and dropped: no fewer statements on loopback (docs/cache-and-changed-tiles.md, fourth look).
   */
  private readonly lookups = new DataLoader<Lookup, LookupRow | undefined, string>(async (wanted) => {
    const catalog = this.locations.catalog;
    // Before start-up completes the identity is still empty: then each feature is looked up on its own.
    const catalogId = catalog.id;
    const rows = await catalog.query<Omit<LookupRow, 'catalogId'> & { n: number }>(GET_WITH_FEATURES,
      [JSON.stringify(wanted.map((lookup) => lookup.spaceId)), JSON.stringify(wanted.map((lookup) => lookup.featureId)), catalogId]);
    const found: (LookupRow | undefined)[] = new Array(wanted.length).fill(undefined);
    for (const { n, ...row } of rows) found[n - 1] = { ...row, catalogId };
    return found;
  }, { cache: false, batchScheduleFn: afterNextRound, maxBatchSize: MAX_LOOKUPS_PER_STATEMENT });

  async *list(filter: SpaceListFilter, pageSize: number): AsyncIterable<StoredSpace[]> {
    const params: unknown[] = [];
    const where = catalogConditions(filter, params).map((condition) => ` AND ${condition}`).join('');
    const text = `${PAGE}${where} ORDER BY s.sid LIMIT $2`;
    const page = (afterSid: number) => this.locations.catalog.query<JoinedRow>(text, [afterSid, pageSize, ...params]);
    let rows = await page(0);
    for (;;) {
      // The next catalog page is read while this one is completed and sent: one page ahead, so memory stays bounded.
      const next = rows.length < pageSize ? undefined : page(rows[rows.length - 1].sid);
      // Awaited below; a consumer that stops early must not leave its failure unhandled.
      next?.catch(() => {});
      const spaces = await this.complete(rows, filter.contentUpdatedAt);
      if (spaces.length > 0) yield spaces;
      if (!next) return;
      rows = await next;
    }
  }

  async update(id: string, change: (current: StoredSpace) => SpaceDefinition): Promise<StoredSpace | undefined> {
    if (cannotExist(id)) return undefined;
    return this.locations.catalog.transaction(async (client) => {
      const { rows } = await client.query<JoinedRow>(`${JOINED} WHERE s.id = $1 FOR UPDATE OF s`, [id]);
      const [current] = await this.complete(rows);
      if (!current) return undefined;
      const definition = change(current);
      await client.query('UPDATE spaces SET definition = $1 WHERE sid = $2', [JSON.stringify(definition), rows[0].sid]);
      return { ...current, definition };
    });
  }

  /**
   * The catalog row goes first: on another database the features are removed after the catalog commits,
   * so a failure in between leaves unreachable rows (the sid is never reused), never a space without features.
   */
  async delete(id: string): Promise<StoredSpace | undefined> {
    if (cannotExist(id)) return undefined;
    const removed = await this.locations.catalog.transaction(async (client) => {
      const { rows: [row] } = await client.query<CatalogRow>(
        'DELETE FROM spaces WHERE id = $1 RETURNING sid, id, definition, location', [id]);
      if (!row) return undefined;
      const db = this.locations.byId(row.location);
      return { row, db, contents: db === this.locations.catalog ? await deleteContents(client, row.sid) : undefined };
    });
    if (!removed) return undefined;
    const contents = removed.contents ?? await removed.db.transaction((client) => deleteContents(client, removed.row.sid));
    return contents && toSpace(removed.row, contents);
  }
}
