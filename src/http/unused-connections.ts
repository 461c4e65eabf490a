// Connections that never sent a byte (a client's or browser's preconnect, a pool's spare socket): a graceful stop closes them as it closes idle ones.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Node's closeIdleConnections() counts a connection as idle only once a request on it has ended: one opened but not
 * used yet counts as in progress, and a stop would wait HUB_SHUTDOWN_TIMEOUT for it (undici's fetch leaves such a
 * connection behind when a read is aborted mid-answer). Returns what closes those that have sent nothing so far;
 * one with part of a request received is left to finish like any request in progress.
 */
export function unusedConnections(server: Server): { close(): void } {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return {
    close() {
      for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}
