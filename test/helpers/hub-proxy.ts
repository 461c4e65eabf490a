// Loopback HTTP proxies in front of a hub, for tests that refuse, hold, rewrite or count some requests and pass the rest on.
import { once } from 'node:events';
import { type ClientRequest, createServer, type IncomingHttpHeaders, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HubProcess } from './hub-process.js';

export interface PassOptions {
  /** The headers sent to the hub; the request's own by default. */
  headers?: IncomingHttpHeaders;
  /** What is done with the hub's answer; by default it is sent back as it came. */
  onAnswer?: (answer: IncomingMessage) => void;
}

/** Sends a request on to the hub; the caller writes or pipes its body into the request returned. */
export function passOn(hub: HubProcess, incoming: IncomingMessage, outgoing: ServerResponse, options: PassOptions = {}): ClientRequest {
  const target = new URL(hub.url);
  const onAnswer = options.onAnswer ?? ((answer: IncomingMessage) => {
    outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(outgoing);
  });
  return request({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: options.headers ?? incoming.headers }, onAnswer);
}

/** A proxy on a free port of `host` whose handler decides what each request gets. */
export async function startProxy(handle: (incoming: IncomingMessage, outgoing: ServerResponse) => void, host = '127.0.0.1'): Promise<{ server: Server; url: string; close: () => void }> {
  const server = createServer(handle);
  server.listen(0, host);
  await once(server, 'listening');
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}
