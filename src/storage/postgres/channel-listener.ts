// A dedicated connection that LISTENs to one channel of a database and reconnects when it is lost: token deletions and space changes use one each.
import pg from 'pg';

/** Wait before connecting again after the listening connection was lost; doubles up to the maximum. */
const RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

export interface ChannelHandlers {
  /** A notification committed on the channel, with its payload. */
  message(payload: string): void;
  /** Notifications may have been missed: the connection was lost, or listening (re)started just now. */
  gap(): void;
}

export interface ChannelListener {
  /** Whether notifications are being heard right now. */
  live(): boolean;
  close(): Promise<void>;
}

/** `name` goes into the connection's application_name, so an operator can tell the hub's connections apart. */
export function listenToChannel(url: string, channel: string, name: string, handlers: ChannelHandlers): ChannelListener {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retry = RETRY_MS;
  let timer: NodeJS.Timeout | undefined;

  const lost = () => {
    if (listening) handlers.gap();
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
    const connection = new pg.Client({ connectionString: url, application_name: `spatial-hub ${name} ${process.pid}` });
    client = connection;
    connection.on('error', lost);
    connection.on('end', () => { if (client === connection) lost(); });
    connection.on('notification', (message) => {
      if (message.channel === channel && message.payload) handlers.message(message.payload);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${channel}`);
      if (client !== connection || closed) return;
      handlers.gap();
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
