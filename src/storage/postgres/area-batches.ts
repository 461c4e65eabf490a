// Small area reads asked for at the same time, each with its space's lookup, answered by one statement per read shape.
import DataLoader from 'dataloader';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { Database } from './database.js';
import { compileQuery } from './feature-store.js';
import { SqlParams } from './filter-sql.js';
import { DENSE, PROBE, PROBED, prepared } from './probed-area.js';
import { FIRST_AREA_PAGE, firstPageReadable, type SpaceAreaRow } from './space-with-area.js';

/** One read of a batch: the space `id`, the first page of at most `size` features of the area `where` selects, its values in `values`. */
export interface AreaJob {
  id: string;
  size: number;
  where: string;
  values: number[];
}

/**
 * Reads per statement at most: each reads at most its probe (2 × FIRST_AREA_PAGE + 1 index matches). A batch is one
 * backend's work and each of its reads waits for all of it: with 32 the small box's p99 at 16 connections was 44-88 ms,
 * with 8 36-54 ms at the same throughput (docs/decisions.md, "Small boxes on PostgreSQL at 16 connections").
 */
const MAX_READS_PER_STATEMENT = 8;

/** The values of a batched read go into its row of `$1`, as `r.v1`, `r.v2`…: every read of one shape has the same statement text. */
class RowParams extends SqlParams {
  override add(value: unknown): string {
    this.values.push(value);
    return `r.v${this.values.length}`;
  }
}

/**
 * The read as a batch job; undefined when its first page is not readable with the lookup (`firstPageReadable`), or
 * when a value is not a number (a flat box's line, a geometry): those keep their statement of their own.
 */
export function areaJob(id: string, query: FeatureQuery): AreaJob | undefined {
  if (!firstPageReadable(query)) return undefined;
  const params = new RowParams();
  const where = compileQuery(query, params);
  const values = params.values.filter((value): value is number => typeof value === 'number');
  if (values.length !== params.values.length) return undefined;
  return { id, size: Math.min(query.limit, FIRST_AREA_PAGE), where, values };
}

/**
 * The statement of `space-with-area.ts` for many reads: `$1` is a JSON array of rows (`n`, space id, page size,
 * values), `$2` the catalog's id. Each row's space is looked up and its area probed under `LATERAL`, so that the
 * space number is a parameter of the GiST scan. A row whose space does not exist answers nothing.
 */
function batchSql(where: string, columns: number): string {
  const values = Array.from({ length: columns }, (_, i) => `, v${i + 1} float8`).join('');
  return `SELECT r.n, s.sid, s.id, s.definition, s.location, s.content_updated_at, s.revision, p.text, p.count, p.last, p.dense
            FROM json_to_recordset($1::json) AS r(n int, id text, lim bigint${values})
            CROSS JOIN LATERAL (
              SELECT s.sid, s.id, s.definition, s.location, c.content_updated_at, c.revision
                FROM spaces s LEFT JOIN space_counters c ON c.sid = s.sid WHERE s.id = r.id LIMIT 1) s
            CROSS JOIN LATERAL (
              WITH probe AS MATERIALIZED (
                SELECT f.seq, f.feature FROM features f WHERE f.sid = s.sid AND s.location = $2 AND ${where} LIMIT ${PROBE('r.lim')})
              SELECT string_agg(p.feature, ','), count(*)::int, max(p.seq), ${DENSE('r.lim')} FROM (${PROBED('r.lim')}) p
            ) AS p(text, count, last, dense)`;
}

/**
 * Why batches. At 16 connections a small box cost the hub more CPU than its database, and a good part of it was the
 * statement's round trip: its parameters, the write that wakes a backend, the answer's parsing (docs/decisions.md,
 * "Small boxes on PostgreSQL at 16 connections"). The reads asked for within one turn of the event loop go to the
 * database as one statement per shape, as vector tiles do (tile-batches.ts): each read pays a share of a round trip
 * and of a statement. A lone read waits for nothing but the end of the turn. Strict as the lookup it replaces: a
 * statement starts after every read it answers was asked for, and each row is read in the statement's one snapshot.
 */
export class AreaBatches {
  private readonly loader = new DataLoader<AreaJob, SpaceAreaRow | undefined, AreaJob>((jobs) => this.read(jobs),
    { cache: false, batchScheduleFn: (send) => setImmediate(send), maxBatchSize: MAX_READS_PER_STATEMENT });

  constructor(private readonly catalog: Database) {}

  /** The space's row with the area's first page, as the single statement answers it; undefined when the space does not exist. */
  load(job: AreaJob): Promise<SpaceAreaRow | undefined> {
    return this.loader.load(job);
  }

  private async read(jobs: readonly AreaJob[]): Promise<(SpaceAreaRow | undefined)[]> {
    const byShape = new Map<string, number[]>();
    jobs.forEach((job, index) => {
      const indexes = byShape.get(job.where);
      if (indexes) indexes.push(index);
      else byShape.set(job.where, [index]);
    });
    const found = new Array<SpaceAreaRow | undefined>(jobs.length).fill(undefined);
    await Promise.all([...byShape].map(async ([where, indexes]) => {
      const rows = indexes.map((index, i) => {
        const { id, size, values } = jobs[index];
        return Object.fromEntries([['n', i + 1], ['id', id], ['lim', size], ...values.map((value, v) => [`v${v + 1}`, value])]) as Record<string, unknown>;
      });
      const statement = prepared(batchSql(where, jobs[indexes[0]].values.length));
      const answered = await this.catalog.queryArrays<[number, ...SpaceAreaRow]>(statement, [JSON.stringify(rows), this.catalog.id]);
      for (const [n, ...row] of answered) found[indexes[n - 1]] = row;
    }));
    return found;
  }
}
