// One process serving HTTP: the hub over an open storage, the server on the port, and its graceful stop.
import type { Config } from './config/config.js';
import { buildServer } from './http/server.js';
import type { NodePeers } from './hub/access/node-peers.js';
import type { ChangePeers } from './hub/changes/change-peers.js';
import { Hub } from './hub/hub.js';
import type { Storage } from './storage/storage.js';

export function hubOf(storage: Storage, config: Config, version: string, upSince: number, peers?: NodePeers & ChangePeers): Hub {
  return new Hub(storage, { name: 'Spatial Data Hub', version, upSince },
    {
      statisticsExactLimit: config.statisticsExactLimit, spacePageSize: config.spacePageSize, sessionTtl: config.sessionTtl, peers, cacheSize: config.cacheSize,
      subscriptions: {
        pollMs: config.subscriptionPoll, leaseMs: config.subscriptionLease, retries: config.subscriptionRetries, backoffMs: config.subscriptionBackoff,
        timeoutMs: config.webhookTimeout, allowPrivate: config.allowPrivateWebhooks, maxLag: config.subscriptionMaxLag,
      },
      events: { heartbeatMs: config.eventHeartbeat, bufferBytes: config.eventBuffer, stallMs: config.eventStall },
      jobs: { dir: config.jobsDir, maxInput: config.jobsMaxInput, chunk: config.jobsChunk, maxLine: config.maxBody, pollMs: config.jobsPoll, leaseMs: config.jobsLease, retentionMs: config.jobsRetention },
    });
}

/**
 * Listens on `port` and returns the port it got (`0` picks one). SIGINT or SIGTERM stop taking connections, let the
 * requests in progress finish, close the storage and end the process; a second signal while stopping changes nothing
 * (a terminal's Ctrl-C reaches a worker both directly and through its primary). Requests still running after
 * HUB_SHUTDOWN_TIMEOUT lose their connections: a stop must end even when a client reads an answer forever.
 * `nodeMetrics`: a worker's GET /metrics, summed over the node by the primary.
 */
export async function serve(hub: Hub, config: Config, port: number, nodeMetrics?: () => Promise<string>): Promise<number> {
  const app = await buildServer(hub, { ...config, nodeMetrics });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      let cut = false;
      const deadline = setTimeout(() => {
        process.stderr.write(`Requests still in progress ${config.shutdownTimeout} ms after the stop signal (HUB_SHUTDOWN_TIMEOUT): closing their connections.\n`);
        cut = true;
        app.server.closeAllConnections();
      }, config.shutdownTimeout);
      await app.close();
      clearTimeout(deadline);
      // The server counts a destroyed connection gone at once, but its socket reports the close (and its request's
      // access line is written) in libuv's close phase, after app.close() resolved: a timer turn later it has.
      if (cut) await new Promise((resolve) => setTimeout(resolve, 0));
      await hub.delivery.stop();
      await hub.jobRunner.stop();
      await hub.storage.close();
      process.exit(0);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Node would print the stack trace; unexpected errors are logged with their code and message only (docs/decisions.md,
  // "Hostile input"). A worker that ends is replaced by its primary.
  process.on('uncaughtException', (error: Error & { code?: unknown }) => {
    process.stderr.write(`Stopping after an unexpected error${error.code === undefined ? '' : ` (${String(error.code)})`}: ${error.message}\n`);
    process.exit(1);
  });
  await app.listen({ host: config.host, port });
  hub.delivery.start();
  hub.jobRunner.start();
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : port;
}
