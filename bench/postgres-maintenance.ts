// The hub's features table between the transfer bench's imports: settled the same way before each, and how often autovacuum visited it during one.
import { withClient } from '../test/helpers/pg-client.js';

export interface Maintenance {
  autovacuums: number;
  autoanalyzes: number;
}

/**
 * Vacuums and analyzes the hub's features table and checkpoints, outside the clock: each measured import then starts
 * on a table that owes no maintenance to the one before it. Without it, the autovacuum of the last import's rows (its
 * GIN indexes read whole) falls into whichever import comes next.
 */
export function settleFeatures(url: string): Promise<void> {
  return withClient(url, async (client) => {
    await client.query('VACUUM (ANALYZE) features');
    await client.query('CHECKPOINT');
  });
}

/** The autovacuum and autoanalyze runs of the features table so far (the statistics collector's counts). */
export function featuresMaintenance(url: string): Promise<Maintenance> {
  return withClient(url, async (client) => {
    const { rows: [row] } = await client.query<{ autovacuums: string; autoanalyzes: string }>(
      "SELECT autovacuum_count AS autovacuums, autoanalyze_count AS autoanalyzes FROM pg_stat_user_tables WHERE relname = 'features'");
    return { autovacuums: Number(row?.autovacuums ?? 0), autoanalyzes: Number(row?.autoanalyzes ?? 0) };
  });
}
