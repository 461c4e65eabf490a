// HTTP to a hub for the import and export commands: the token in a header only, retries with exponential back-off on 429/502/503/504 and lost connections (Retry-After honoured), never on another 4xx.
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';

export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number;
  /** The first back-off; each further one doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 8, baseDelayMs: 500, maxDelayMs: 30_000 };
const RETRIED = new Set([429, 502, 503, 504]);

export interface HubResponse {
  status: number;
  text: string;
}

/** A request the hub refused or that kept failing; the message names the status and the hub's error message, never the token. */
export class HubRequestError extends Error {
  constructor(message: string, readonly status: number | undefined) {
    super(message);
  }
}

/** The hub's message from either error shape of API.md 1.6. */
function hubMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { errorMessage?: unknown; message?: unknown };
    const message = body.errorMessage ?? body.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the start of the text says more than nothing
  }
  return text.slice(0, 200);
}

/** What an answer brings back: fetch's Response would add web streams and their per-chunk work to every export page. */
interface Answer {
  status: number;
  retryAfter: string | null;
  body: Buffer;
  /** The media type without parameters, lower case; empty when the hub sent none. */
  contentType: string;
  /** The `Link` header, when the hub sent one. */
  link: string | undefined;
}

/** A successful answer as the export reads it: its body as bytes, its media type and its `Link` header. */
export type BytesAnswer = Pick<Answer, 'body' | 'contentType' | 'link'>;

/** A successful answer's media type and links, known from its headers before its body has arrived. */
export type AnswerHead = Pick<Answer, 'contentType' | 'link'>;

/** A kept-alive socket the hub closed between two requests: the request is sent again at once on a new one, as Node's documentation advises (`reusedSocket`). */
class StaleSocket extends Error {}

/** No answer for this long is a lost connection (retried), as fetch's default timeouts made it. */
const ANSWER_TIMEOUT_MS = 300_000;

const DECODERS: Record<string, (body: Buffer) => Promise<Buffer>> = {
  gzip: promisify(gunzip), 'x-gzip': promisify(gunzip), deflate: promisify(inflate), br: promisify(brotliDecompress),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class HubClient {
  /** Retries made so far, for the summary. */
  retried = 0;
  /**
   * The hub's clock as its last answer's `Date` header gave it (ms; the header has whole seconds, so never ahead of the
   * hub): what any later write of the hub is stamped after. Undefined until an answer brought one.
   */
  hubClock: number | undefined;
  /** Whether the hub is on this machine (a loopback address), where compressing answers costs both sides CPU and saves no time. */
  readonly local: boolean;
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });

  constructor(private readonly url: string, private readonly token: string | undefined, private readonly retry: RetryPolicy = DEFAULT_RETRY) {
    const host = new URL(url).hostname;
    this.local = host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  }

  request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<HubResponse> {
    return this.send(method, path, body, headers).then((answer) => ({ status: answer.status, text: answer.body.toString('utf8') }));
  }

  /**
   * A successful answer's body as bytes with its media type and links (export pages, which are split or copied without
   * decoding them). `onHead` hears a successful answer's headers as they arrive, before its body (again for each attempt
   * that got that far).
   */
  requestBytes(method: string, path: string, headers: Record<string, string> = {}, onHead?: (head: AnswerHead) => void): Promise<BytesAnswer> {
    return this.send(method, path, undefined, headers, onHead);
  }

  private async send(method: string, path: string, body: string | undefined, headers: Record<string, string>, onHead?: (head: AnswerHead) => void): Promise<Answer> {
    const target = new URL(this.url.replace(/\/+$/, '') + path);
    const sent: Record<string, string> = {
      // A remote hub compresses its answers; one on this machine is asked not to (the caller says identity).
      'accept-encoding': 'gzip, deflate, br',
      ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/geo+json', 'content-length': String(Buffer.byteLength(body)) } : {}),
      ...headers,
    };
    for (let attempt = 0; ; attempt++) {
      let answer: Answer | undefined;
      let failure: string;
      try {
        answer = await this.exchange(method, target, body, sent, onHead).catch((error: unknown) => {
          if (error instanceof StaleSocket) return this.exchange(method, target, body, sent, onHead);
          throw error;
        });
        if (answer.status >= 200 && answer.status < 300) return answer;
        failure = `${method} ${path.split('?')[0]}: ${answer.status} ${hubMessage(answer.body.toString('utf8'))}`;
        if (!RETRIED.has(answer.status)) throw new HubRequestError(failure, answer.status);
      } catch (error) {
        if (error instanceof HubRequestError) throw error;
        failure = `${method} ${path.split('?')[0]}: no answer from ${target.host} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
      }
      if (attempt >= this.retry.retries) throw new HubRequestError(`${failure} (gave up after ${attempt + 1} attempts)`, answer?.status);
      this.retried++;
      await sleep(this.delay(attempt, answer?.retryAfter ?? null));
    }
  }

  /** One request and its whole answer, decompressed. */
  private exchange(method: string, target: URL, body: string | undefined, headers: Record<string, string>, onHead?: (head: AnswerHead) => void): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const options: RequestOptions = { method, headers, agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent };
      const answered = (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const contentType = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        const link = [response.headers.link ?? []].flat().join(', ') || undefined;
        const date = Date.parse(response.headers.date ?? '');
        if (Number.isFinite(date) && (this.hubClock === undefined || date > this.hubClock)) this.hubClock = date;
        if (status >= 200 && status < 300) onHead?.({ contentType, link });
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
          const decode = DECODERS[String(response.headers['content-encoding'] ?? '').toLowerCase()];
          const retryAfter = response.headers['retry-after'] ?? null;
          (decode === undefined ? Promise.resolve(raw) : decode(raw))
            .then((decoded) => resolve({ status, retryAfter, body: decoded, contentType, link }), reject);
        });
      };
      const request: ClientRequest = target.protocol === 'https:' ? httpsRequest(target, options, answered) : httpRequest(target, options, answered);
      request.setTimeout(ANSWER_TIMEOUT_MS, () => request.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
      request.on('error', (error: NodeJS.ErrnoException) => {
        reject(request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE') ? new StaleSocket() : error);
      });
      request.end(body);
    });
  }

  /** Retry-After in seconds (or an HTTP date) when the hub sends one, else base × 2^attempt with jitter, capped. */
  private delay(attempt: number, retryAfter: string | null): number {
    if (retryAfter !== null) {
      const seconds = Number(retryAfter);
      const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - Date.now();
      if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, this.retry.maxDelayMs);
    }
    const backoff = Math.min(this.retry.baseDelayMs * 2 ** attempt, this.retry.maxDelayMs);
    return backoff / 2 + Math.random() * (backoff / 2);
  }
}
