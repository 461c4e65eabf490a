// A raw TCP HTTP/1.1 client for tests that need to send a request slowly, stall mid-body, or keep it open.
import { connect, type Socket } from 'node:net';
import type { HubProcess } from './hub-process.js';

export interface RawAnswer {
  /** 0 when the connection closed without an answer. */
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawConnection {
  socket: Socket;
  send(data: string | Buffer): Promise<void>;
  /** The first answer on the connection, or status 0 once it closes without one. */
  answer: Promise<RawAnswer>;
  /** Resolves when the hub has closed the connection. */
  closed: Promise<void>;
  /** False once the connection is closed, by either side. */
  isOpen(): boolean;
  destroy(): void;
}

function parseAnswer(raw: Buffer): RawAnswer {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0])?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status, headers, body };
}

function unchunk(text: string): string {
  let body = '';
  for (let at = 0; ;) {
    const lineEnd = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!(size > 0)) return body;
    body += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** True once `raw` holds a complete answer (by Content-Length, or the last chunk of a chunked body). */
function complete(raw: Buffer): boolean {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  if (/^HTTP\/1\.1 (204|304)/.test(text)) return true;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
  if (length) return raw.length >= Buffer.byteLength(text.slice(0, end + 4)) + Number(length[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(text.slice(0, end))) return text.endsWith('0\r\n\r\n');
  return false;
}

export async function openConnection(hub: HubProcess): Promise<RawConnection> {
  const url = new URL(hub.url);
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  let received = Buffer.alloc(0);
  let open = true;
  const closed = new Promise<void>((resolve) => socket.once('close', () => {
    open = false;
    resolve();
  }));
  const answer = new Promise<RawAnswer>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (complete(received)) resolve(parseAnswer(received));
    });
    socket.once('close', () => resolve(received.length > 0 ? parseAnswer(received) : { status: 0, headers: {}, body: '' }));
  });
  return {
    socket,
    answer,
    closed,
    isOpen: () => open,
    send: (data) => new Promise<void>((resolve, reject) => {
      socket.write(data, (error) => (error ? reject(error) : resolve()));
    }),
    destroy: () => socket.destroy(),
  };
}

/** The request line and headers of a request, with the admin token and the end of the header block. */
export function requestHead(hub: HubProcess, method: string, path: string, headers: Record<string, string> = {}): string {
  const all: Record<string, string> = { host: new URL(hub.url).host, authorization: `Bearer ${hub.token}`, ...headers };
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Repeats `attempt` until it returns a value, at most `tries` times with a short pause between. */
export async function eventually<T>(what: string, attempt: () => Promise<T | undefined>, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await attempt();
    if (value !== undefined) return value;
    await pause(25);
  }
  throw new Error(`gave up waiting: ${what}`);
}
