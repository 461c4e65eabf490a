// Unfiltered vector tiles asked for at the same time, encoded by one statement per database and tile shape.
import DataLoader from 'dataloader';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import type { BBox } from '../../geo/bbox.js';
import type { Database, Prepared } from './database.js';
import { prepared } from './probed-area.js';
import { tileBatchRow, tileBatchSql } from './vector-tile-sql.js';

/** One tile of a batch: the features of space `sid` after `after` meeting `box`, at most `limit`, encoded as `request` says. */
export interface TileJob {
  sid: number;
  after: number;
  limit: number;
  box: BBox;
  request: VectorTileRequest;
}

/** The tile, or `dense` when its area holds more than the probe reads: it must then be read with its own statement. */
export type TileOutcome = { tile: Buffer } | { dense: true };

/** Tiles per statement at most: a batch is one statement's work, and each tile in it reads at most its probe. */
const MAX_TILES_PER_STATEMENT = 32;

const shapeOf = (request: VectorTileRequest) => `${request.projection}:${request.flatten ? 'flat' : 'plain'}`;

/**
 * Why batches. A tile's statement costs the database about what the plain `ST_AsMVT` query costs, but the hub spent
 * as much again on its round trip: the statement's parameters, the write that wakes the backend, the answer's parsing.
 * Tiles come many at a time (a map asks for a screenful), so the tiles asked for within one turn of the event loop go
 * to the database as one statement, as the lookups by id do (space-store.ts): each tile pays a share of a round trip.
 * A lone tile waits for nothing but the end of the turn (setImmediate).
 */
export class TileBatches {
  private readonly statements = new Map<string, Prepared>();
  private readonly loader = new DataLoader<TileJob, TileOutcome, TileJob>((jobs) => this.encode(jobs),
    { cache: false, batchScheduleFn: (send) => setImmediate(send), maxBatchSize: MAX_TILES_PER_STATEMENT });

  constructor(private readonly db: Database) {}

  load(job: TileJob): Promise<TileOutcome> {
    return this.loader.load(job);
  }

  /** One statement per tile shape in the batch (the projection and the attributes' form are in the statement's text). */
  private async encode(jobs: readonly TileJob[]): Promise<TileOutcome[]> {
    const byShape = new Map<string, number[]>();
    jobs.forEach((job, index) => {
      const shape = shapeOf(job.request);
      const indexes = byShape.get(shape);
      if (indexes) indexes.push(index);
      else byShape.set(shape, [index]);
    });
    const outcomes: TileOutcome[] = new Array<TileOutcome>(jobs.length);
    await Promise.all([...byShape.values()].map(async (indexes) => {
      const rows = indexes.map((index, i) => {
        const { sid, after, limit, box, request } = jobs[index];
        return tileBatchRow(i + 1, sid, after, limit, box, request);
      });
      const found = await this.db.queryArrays<[number, Buffer | null, boolean]>(this.statement(jobs[indexes[0]].request), [JSON.stringify(rows)]);
      for (const [n, tile, dense] of found) outcomes[indexes[n - 1]] = dense ? { dense: true } : { tile: tile ?? Buffer.alloc(0) };
    }));
    return outcomes;
  }

  private statement(request: VectorTileRequest): Prepared {
    const shape = shapeOf(request);
    let statement = this.statements.get(shape);
    if (!statement) {
      statement = prepared(tileBatchSql(request));
      this.statements.set(shape, statement);
    }
    return statement;
  }
}
