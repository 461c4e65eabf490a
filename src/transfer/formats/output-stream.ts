// Writing text to an output stream with back-pressure, shared by the writers.
import { once } from 'node:events';
import type { Writable } from 'node:stream';

export async function put(out: Writable, chunk: string | Uint8Array): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}
