// Tells this node about tokens deleted on any node: a dedicated connection LISTENs to the channel deletions NOTIFY.
import pg from 'pg';
import type { RevocationWatch } from '../storage.js';

/** The channel a token deletion notifies in its own transaction, so listeners hear of it when it commits. */
export const REVOCATION_CHANNEL = 'hub_token_revoked';
/** Wait before connecting again after the listening connection was lost; doubles up to the maximum. */
const RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

/**
 * While the connection listens, every committed deletion reaches `onRevoked` with the token's secret hash.
 * A lost connection may have missed some: `onRevoked()` without a hash then says "forget every token", and
 * `live()` is false until listening again, so the caller caches nothing meanwhile.
 */
export function listenForRevocations(url: string, onRevoked: (secretHash?: string) => void): RevocationWatch {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retry = RETRY_MS;
  let timer: NodeJS.Timeout | undefined;

  const lost = () => {
    if (listening) onRevoked();
    listening = false;
    client?.removeAllListeners();
    client?.end().catch(() => undefined);
    client = undefined;
    if (closed) return;
    timer = setTimeout(connect, retry);
    timer.unref();
    retry = Math.min(retry * 2, MAX_RETRY_MS);
  };

  async function connect(): Promise<void> {
    const connection = new pg.Client({ connectionString: url, application_name: `spatial-hub revocations ${process.pid}` });
    client = connection;
    connection.on('error', lost);
    connection.on('end', () => { if (client === connection) lost(); });
    connection.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload) onRevoked(message.payload);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${REVOCATION_CHANNEL}`);
      if (client !== connection || closed) return;
      // Anything cached before this moment may have missed a deletion while nobody listened.
      onRevoked();
      listening = true;
      retry = RETRY_MS;
    } catch {
      if (client === connection) lost();
    }
  }

  void connect();
  return {
    live: () => listening,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      listening = false;
      const connection = client;
      client = undefined;
      connection?.removeAllListeners();
      await connection?.end().catch(() => undefined);
    },
  };
}
