// A webhook receiver on loopback for subscription tests: records every POST and answers as the test tells it (status, delay).
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Record<string, unknown>;
}

/** How the receiver answers the nth POST (from 1): a status, after a delay in ms. */
export type Answer = (nth: number, delivery: Delivery) => { status: number; delayMs?: number };

export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  private server?: Server;
  /** Every POST that arrived, accepted or not. */
  received = 0;
  port = 0;

  constructor(public answer: Answer = () => ({ status: 200 })) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Listens on `port` (0: a free one; a restarted receiver takes its old one). */
  async start(port = this.port): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const delivery = { headers: request.headers, text, body: JSON.parse(text) as Record<string, unknown> };
        const { status, delayMs = 0 } = this.answer(++this.received, delivery);
        setTimeout(() => {
          if (status >= 200 && status < 300) this.deliveries.push(delivery);
          response.writeHead(status).end('ok');
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const { server } = this;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Versions of the accepted deliveries, in the order they arrived. */
  get versions(): number[] {
    return this.deliveries.map((delivery) => delivery.body.version as number);
  }
}

/** Whether the delivery's X-Hub-Signature-256 is the HMAC-SHA256 of its body under `secret`. */
export function signatureValid(delivery: Delivery, secret: string): boolean {
  return delivery.headers['x-hub-signature-256'] === `sha256=${createHmac('sha256', secret).update(delivery.text).digest('hex')}`;
}

/** Waits until `check` holds, polling; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
