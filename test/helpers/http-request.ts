// One HTTP request from a test over node:http(s) with a keep-alive agent, answering what the tests read of fetch's Response.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

/*
 * Why not fetch: undici's fetch costs the test process about 1.2-1.4 ms of CPU per request against a local hub,
 * more than the hub itself spends on a small read, where node:http with a keep-alive agent costs about 0.5 ms
 * (docs/decisions.md, "The tests' HTTP client"). The suite sends most of its requests through here, so this is CI time.
 * Like undici, the agent keeps connections open and drops an idle one before the hub's announced keep-alive timeout
 * (Node reads the Keep-Alive hint), and its idle sockets do not keep a test process alive.
 */
const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/**
 * The request headers fetch adds where the caller gives none, sent alike so that the hub negotiates as it did for
 * fetch: it compresses answers for this Accept-Encoding, which `answerBody` undoes as fetch does.
 */
const FETCH_DEFAULTS: Record<string, string> = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
};

/** fetch sends `content-length: 0` for these methods without a body, and no length for the others' empty bodies. */
const EXPECTS_BODY = new Set(['POST', 'PUT', 'PATCH']);

export interface RawResponse {
  status: number;
  /** As fetch gives them: every header line appended, Content-Encoding kept after decoding. */
  headers: Headers;
  /** The body, decoded from its Content-Encoding. */
  body: Buffer;
}

/** A request as fetch would send it (never following a redirect); rejects when the connection fails, as fetch does. */
export function request(url: string, method: string, headers: Record<string, string> = {}, body?: string | Uint8Array): Promise<RawResponse> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const sent: Record<string, string> = { ...headers };
  const given = new Set(Object.keys(sent).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(FETCH_DEFAULTS)) if (!given.has(name)) sent[name] = value;
  if (typeof body === 'string' && !given.has('content-type')) sent['content-type'] = 'text/plain;charset=UTF-8';
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const length = bytes?.length ?? 0;
  if (length > 0 || EXPECTS_BODY.has(method)) sent['content-length'] = String(length);
  return new Promise<RawResponse>((resolve, reject) => {
    if (bytes !== undefined && (method === 'GET' || method === 'HEAD')) throw new TypeError(`fetch sends no body with ${method}`);
    const options = { method, headers: sent, agent: secure ? httpsAgent : httpAgent };
    const onResponse = (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode ?? 0, headers: headersOf(response.rawHeaders), body: answerBody(method, response, Buffer.concat(chunks)) });
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      // An answer cut off before its end rejects, as fetch's body read does.
      response.on('close', () => {
        if (!response.complete) reject(new Error(`the answer to ${method} ${url} ended early`));
      });
    };
    try {
      const outgoing = secure ? httpsRequest(target, options, onResponse) : httpRequest(target, options, onResponse);
      outgoing.on('error', reject);
      outgoing.end(bytes);
    } catch (error) {
      // An invalid header name or value throws here; fetch rejects with a TypeError then.
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

function headersOf(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}

/** The body decoded as fetch decodes it: per Content-Encoding, except where an answer has no body. */
function answerBody(method: string, response: IncomingMessage, body: Buffer): Buffer {
  const status = response.statusCode ?? 0;
  if (body.length === 0 || method === 'HEAD' || status === 204 || status === 304) return body;
  switch ((response.headers['content-encoding'] ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      // Like undici: zlib-wrapped when the first two bytes are a zlib header, raw deflate otherwise.
      return (body[0] & 0x0f) === 8 && ((body[0] << 8) | body[1]) % 31 === 0 ? inflateSync(body) : inflateRawSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      return body;
  }
}

/** The body as text, as fetch's `text()` reads it: UTF-8 without a leading byte order mark. */
export function textOf(body: Buffer): string {
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return (bom ? body.subarray(3) : body).toString('utf8');
}
