// Reads a small JSON object body (a space definition or a single feature), with the documented error on bad JSON.
import type { Readable } from 'node:stream';
import { hubError } from '../../hub/errors.js';
import { readWholeBody } from './body-stream.js';

export async function readJsonObject(stream: Readable, onInvalid: 'invalidJsonSpace' | 'invalidJsonFeatures'): Promise<Record<string, unknown>> {
  const buffer = await readWholeBody(stream);
  const start = buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8', start));
  } catch (error) {
    throw hubError(onInvalid, { detail: (error as Error).message });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw hubError(onInvalid, { detail: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` });
  }
  return value as Record<string, unknown>;
}
