// HTTP to a hub for the import and export commands: the token in a header only, retries with exponential back-off on 429/502/503/504 and lost connections (Retry-After honoured), never on another 4xx.
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class HubClient {
  /** Retries made so far, for the summary. */
  retried = 0;
  /** Whether the hub is on this machine (a loopback address), where compressing answers costs both sides CPU and saves no time. */
  readonly local: boolean;

  constructor(private readonly url: string, private readonly token: string | undefined, private readonly retry: RetryPolicy = DEFAULT_RETRY) {
    const host = new URL(url).hostname;
    this.local = host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  }

  request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<HubResponse> {
    return this.send(method, path, body, headers, async (response) => ({ status: response.status, text: await response.text() }));
  }

  /** A successful answer's body as bytes (export pages, which are split without decoding them). */
  requestBytes(method: string, path: string, headers: Record<string, string> = {}): Promise<Buffer> {
    return this.send(method, path, undefined, headers, async (response) => Buffer.from(await response.arrayBuffer()));
  }

  private async send<T>(method: string, path: string, body: string | undefined, headers: Record<string, string>, read: (response: Response) => Promise<T>): Promise<T> {
    const target = this.url.replace(/\/+$/, '') + path;
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      let failure: string;
      try {
        response = await fetch(target, {
          method, body,
          headers: { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/geo+json' } : {}), ...headers },
        });
        if (response.ok) return await read(response);
        const text = await response.text();
        failure = `${method} ${path.split('?')[0]}: ${response.status} ${hubMessage(text)}`;
        if (!RETRIED.has(response.status)) throw new HubRequestError(failure, response.status);
      } catch (error) {
        if (error instanceof HubRequestError) throw error;
        // fetch hides the cause (refused, reset) one level down.
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        failure = `${method} ${path.split('?')[0]}: no answer from ${new URL(target).host} (${cause?.code ?? cause?.message ?? (error as Error).message})`;
      }
      if (attempt >= this.retry.retries) throw new HubRequestError(`${failure} (gave up after ${attempt + 1} attempts)`, response?.status);
      this.retried++;
      await sleep(this.delay(attempt, response?.headers.get('retry-after') ?? null));
    }
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
