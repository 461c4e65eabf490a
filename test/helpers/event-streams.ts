// Event streams of the hub (GET /hub/spaces/{id}/events) read the way applications read them: through the `eventsource` package, or through a raw socket.
import { connect, type Socket } from 'node:net';
import { EventSource } from 'eventsource';
import type { HubProcess } from './hub-process.js';
import { requestHead } from './raw-http.js';

export interface ReceivedEvent {
  /** `message` for changesets; `reset`, `unmatched`, `disconnect` otherwise. */
  type: string;
  id: string;
  data: Record<string, unknown>;
}

const NAMED = ['reset', 'unmatched', 'disconnect'];

/** An EventSource on a space's events with the token in the Authorization header, recording every event. */
export class EventStream {
  readonly events: ReceivedEvent[] = [];
  readonly errors: Array<{ code?: number; message?: string }> = [];
  readonly source: EventSource;
  private waiters: Array<() => void> = [];

  constructor(hub: HubProcess, path: string, token = hub.token) {
    this.source = new EventSource(hub.url + path, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }),
    });
    const record = (type: string) => (event: MessageEvent) => {
      this.events.push({ type, id: event.lastEventId, data: JSON.parse(event.data as string) as Record<string, unknown> });
      this.notify();
    };
    this.source.onmessage = record('message');
    for (const name of NAMED) this.source.addEventListener(name, record(name));
    this.source.onerror = (error) => {
      this.errors.push({ code: error.code, message: error.message });
      this.notify();
    };
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** The changesets received, by version. */
  get changesets(): ReceivedEvent[] {
    return this.events.filter((event) => event.type === 'message');
  }

  /** Resolves once `done()` holds; fails after `ms`. */
  async until(what: string, done: () => boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`gave up waiting for ${what}; received ${this.events.length} events: ${JSON.stringify(this.events.slice(-3)).slice(0, 600)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }

  /** Waits until the stream is open (its first comment came). */
  async opened(): Promise<void> {
    if (this.source.readyState === this.source.OPEN) return;
    await new Promise<void>((resolve, reject) => {
      this.source.addEventListener('open', () => resolve(), { once: true });
      this.source.addEventListener('error', () => reject(new Error(`the stream did not open: ${JSON.stringify(this.errors)}`)), { once: true });
    });
  }

  close(): void {
    this.source.close();
  }
}

/** A raw connection asking for a stream: what it received so far, and whether the hub closed it. */
export interface RawStream {
  socket: Socket;
  /** The status line and headers as received. */
  readonly head: string;
  /** The body so far, its chunked framing taken off. */
  readonly body: string;
  readonly closed: boolean;
}

/** The complete chunks of a chunked body. */
function dechunk(raw: Buffer): string {
  const parts: Buffer[] = [];
  for (let at = 0; at < raw.length;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0) || lineEnd + 2 + size > raw.length) break;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Opens a stream over a plain socket; with `paused` nothing is read until `socket.resume()`. */
export function rawStream(hub: HubProcess, path: string, headers: Record<string, string> = {}, paused = false): RawStream {
  const { hostname, port } = new URL(hub.url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => { chunks.push(chunk); });
  socket.on('close', () => { closed = true; });
  socket.on('error', () => undefined);
  socket.write(requestHead(hub, 'GET', path, headers));
  if (paused) socket.pause();
  const received = () => {
    const all = Buffer.concat(chunks);
    const end = all.indexOf('\r\n\r\n');
    return end < 0 ? { head: all.toString('latin1'), body: '' } : { head: all.subarray(0, end).toString('latin1'), body: dechunk(all.subarray(end + 4)) };
  };
  return { socket, get head() { return received().head; }, get body() { return received().body; }, get closed() { return closed; } };
}
