// A minimal keep-alive HTTP client for the benchmark: fewer layers than fetch, so less client time in the figures.
import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';

export interface BenchResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A kept-alive socket that turned out closed before the request got through. */
class StaleSocket extends Error {}

export class HubClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  private readonly url: URL;

  constructor(origin: string, private readonly token: string) {
    this.url = new URL(origin);
  }

  /**
   * One request. A kept-alive socket the hub closed while the bench was busy (a long synchronous fill blocks the bench's
   * event loop past the hub's keep-alive timeout, so the close is not seen before the socket is reused) fails at once
   * with EPIPE or ECONNRESET: the request is sent again on a new socket, as Node's documentation advises (`reusedSocket`).
   */
  async request(method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<BenchResponse> {
    try {
      return await this.once(method, path, body, headers);
    } catch (error) {
      if (!(error instanceof StaleSocket)) throw error;
      return this.once(method, path, body, headers);
    }
  }

  private once(method: string, path: string, body: Buffer | string | undefined, headers: Record<string, string>): Promise<BenchResponse> {
    return new Promise((resolve, reject) => {
      const sent: Record<string, string> = { authorization: `Bearer ${this.token}`, ...headers };
      if (body !== undefined) {
        sent['content-type'] ??= 'application/geo+json';
        sent['content-length'] = String(Buffer.byteLength(body));
      }
      const request = httpRequest({
        agent: this.agent, hostname: this.url.hostname, port: this.url.port, method, path, headers: sent,
      }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        reject(request.reusedSocket && (error.code === 'EPIPE' || error.code === 'ECONNRESET') ? new StaleSocket() : error);
      });
      request.end(body);
    });
  }

  /**
   * GET keeping only the last bytes of the answer: timed iterations read the handle from the tail and
   * drop the rest, so the figure measures the hub rather than the benchmark's own copying and scanning.
   */
  tail(path: string, keep = 512): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const request = httpRequest({
        agent: this.agent, hostname: this.url.hostname, port: this.url.port, method: 'GET', path,
        headers: { authorization: `Bearer ${this.token}` },
      }, (response) => {
        let last: Buffer = Buffer.alloc(0);
        response.on('data', (chunk: Buffer) => {
          last = chunk.length >= keep ? chunk : Buffer.concat([last, chunk]);
          if (last.length > keep) last = last.subarray(last.length - keep);
        });
        response.on('end', () => (response.statusCode === 200 ? resolve(last) : reject(new Error(`GET ${path} answered ${response.statusCode}`))));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end();
    });
  }

  /** Like `request`, but fails unless the status is the expected one. */
  async expect(status: number, method: string, path: string, body?: Buffer | string, headers?: Record<string, string>): Promise<Buffer> {
    const response = await this.request(method, path, body, headers);
    if (response.status !== status) {
      throw new Error(`${method} ${path} answered ${response.status} instead of ${status}: ${response.body.toString().slice(0, 500)}`);
    }
    return response.body;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Creates a space with the given definition; its id. */
export async function createSpace(client: HubClient, definition: Record<string, unknown>): Promise<string> {
  const created = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify(definition), { 'content-type': 'application/json' });
  return (JSON.parse(created.toString()) as { id: string }).id;
}

const FEATURE_START = Buffer.from('{"type":"Feature",');

/** Counts the features of a FeatureCollection answer without parsing it (each stored text starts the same way). */
export function countFeatures(body: Buffer): number {
  let count = 0;
  for (let at = body.indexOf(FEATURE_START); at >= 0; at = body.indexOf(FEATURE_START, at + FEATURE_START.length)) count++;
  return count;
}

/** The iterate handle from the end of an answer; undefined on the last page. */
export function handleOf(body: Buffer): string | undefined {
  const tail = body.subarray(Math.max(0, body.length - 300)).toString();
  return /"handle":"(\d+)"/.exec(tail)?.[1];
}

/** Follows the iterate handles to the end and counts the features of every page. */
export async function iterateHttp(client: HubClient, space: string, limit: number): Promise<number> {
  let total = 0;
  let handle: string | undefined = '0';
  while (handle !== undefined) {
    const body = await client.expect(200, 'GET', `/hub/spaces/${space}/iterate?limit=${limit}&handle=${handle}`);
    total += countFeatures(body);
    handle = handleOf(body);
  }
  return total;
}

/** The timed iteration: follows the handles, reading only each answer's tail; returns the number of pages. */
export async function iterateHttpTimed(client: HubClient, space: string, limit: number, onPage?: () => void): Promise<number> {
  let pages = 0;
  let handle: string | undefined = '0';
  while (handle !== undefined) {
    handle = handleOf(await client.tail(`/hub/spaces/${space}/iterate?limit=${limit}&handle=${handle}`));
    pages++;
    onPage?.();
  }
  return pages;
}
