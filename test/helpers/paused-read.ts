// A long read whose client stops reading after its first megabyte while something else happens, then reads on: what a stream carries across a change.
import { get } from 'node:http';

export interface PausedRead {
  status: number;
  body: string;
  /** The answer ended before its end (the hub cut it). */
  cut: boolean;
}

/**
 * GETs `url` with `token`; after `afterBytes` of the answer the client stops reading while `meanwhile` runs, then
 * reads to the end. The answer must be larger than what the hub reads whole before sending (4 MiB) and what the
 * sockets hold, so that the hub's read waits on the client.
 */
export function readPausing(url: string, token: string, meanwhile: () => Promise<void>, afterBytes = 1_000_000): Promise<PausedRead> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let paused = false;
      const done = (cut: boolean) => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString(), cut });
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (paused || size < afterBytes) return;
        paused = true;
        response.pause();
        meanwhile().then(() => response.resume(), reject);
      });
      response.on('end', () => done(!response.complete));
      response.on('error', () => done(true));
    }).on('error', reject);
  });
}
