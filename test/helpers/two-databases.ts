// A PostgreSQL hub whose spaces spread over two databases of the run's cluster: placement balances new spaces between them.
import { type HubProcess, startHub } from './hub-process.js';
import { createTestDatabase } from './postgres-cluster.js';

export interface TwoDatabaseHub {
  hub: HubProcess;
  /** The first database, which holds the catalog (the spaces and their locations). */
  catalogUrl: string;
  /** Stops the hub and removes both databases. */
  stop(): Promise<void>;
}

export async function startHubOverTwoDatabases(): Promise<TwoDatabaseHub> {
  const [one, two] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  const hub = await startHub({ backend: 'postgres', storage: `${one.url},${two.url}` });
  return {
    hub,
    catalogUrl: one.url,
    stop: async () => {
      await hub.stop();
      await Promise.all([one.remove(), two.remove()]);
    },
  };
}
