// The worker processes of a hub started with HUB_WORKERS, seen through /proc: which exist, and which one holds a connection.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import type { HubProcess } from './hub-process.js';
import { openConnection, type RawAnswer, requestHead } from './raw-http.js';

/** The pid of the parent of a process (field 4 of /proc/<pid>/stat), undefined when it has ended. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The processes the hub's primary started: its workers. */
export function workersOf(hub: HubProcess): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => parentOf(pid) === hub.process.pid);
}

/** The socket inode of the hub's end of a connection, from the kernel's table of IPv4 TCP sockets. */
function hubEndOf(hubPort: number, clientPort: number): string | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1]?.endsWith(`:${hex(hubPort)}`) && fields[2]?.endsWith(`:${hex(clientPort)}`)) return fields[9];
  }
  return undefined;
}

/** The worker holding the hub's end of the open connection from `clientPort`: the one that answers on it. */
export function holderOf(hub: HubProcess, clientPort: number): number | undefined {
  const inode = hubEndOf(Number(new URL(hub.url).port), clientPort);
  if (inode === undefined) return undefined;
  return workersOf(hub).find((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`);
    } catch {
      return false;
    }
  });
}

/** A kept-alive connection that stays with one worker: requests on it are answered one after the other by that worker. */
export interface KeptConnection {
  worker: number | undefined;
  ask(method: string, path: string, body?: string): Promise<{ status: number; body: string }>;
  close(): void;
}

export async function keptConnection(hub: HubProcess): Promise<KeptConnection> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(hub.url);
  let clientPort = 0;
  const ask = (method: string, path: string, body?: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${hub.token}` };
    if (body !== undefined) headers['content-type'] = 'application/geo+json';
    const request = httpRequest({ agent, host: url.hostname, port: url.port, method, path, headers }, (response) => {
      clientPort = response.socket.localPort ?? 0;
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
  await ask('GET', '/hub');
  return { worker: holderOf(hub, clientPort), ask, close: () => agent.destroy() };
}

export interface WorkerAnswer extends RawAnswer {
  /** The worker that answered. */
  worker: number | undefined;
}

/** One request on a connection of its own, which the hub's primary hands to a worker; `token` replaces the admin's. */
export async function askOnNewConnection(hub: HubProcess, method: string, path: string,
  options: { token?: string; body?: string } = {}): Promise<WorkerAnswer> {
  const connection = await openConnection(hub);
  try {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) Object.assign(headers, { 'content-type': 'application/geo+json', 'content-length': String(Buffer.byteLength(options.body)) });
    await connection.send(requestHead(hub, method, path, headers) + (options.body ?? ''));
    const answer = await connection.answer;
    return { ...answer, worker: holderOf(hub, connection.socket.localPort ?? 0) };
  } finally {
    connection.destroy();
  }
}
