// Parses a feature write body: small bodies with JSON.parse, large ones feature by feature as they arrive.
import { isObject, withoutBom } from '../../core/json.js';
import type { Readable } from 'node:stream';
import { hubError } from '../../core/errors.js';
import { checkJsonText, MAX_BODY_DEPTH } from '../../core/json-limits.js';
import type { WriteBody } from '../../hub/writes/write-entries.js';
import { FeatureArrayScanner } from './feature-array-scanner.js';

/**
 * Up to this size the body is buffered and handed to JSON.parse in one piece. Above it, the text is
 * never held whole: the scanner parses one feature at a time as the bytes arrive.
 */
const STREAM_PARSE_THRESHOLD = 8 * 1024 * 1024;

const BOM_LENGTH = 3;

function describeRoot(root: unknown): string {
  if (Array.isArray(root)) return 'is an array';
  if (root === null || typeof root !== 'object') return `is ${JSON.stringify(root)}`;
  const type = (root as Record<string, unknown>).type;
  return type === undefined ? 'has no "type" member' : `has type ${JSON.stringify(type)}`;
}

/** Checks the root type (API.md 1.7) and the shape of its list member. */
function toWriteBody(root: unknown): WriteBody {
  if (isObject(root)) {
    const body = root as Record<string, unknown>;
    if (body.type === 'Feature') return { type: 'Feature', feature: body };
    if (body.type === 'FeatureCollection' && Array.isArray(body.features)) return { type: 'FeatureCollection', features: body.features };
    if (body.type === 'FeatureModificationList' && Array.isArray(body.modifications)) {
      return { type: 'FeatureModificationList', modifications: body.modifications };
    }
    if (body.type === 'FeatureCollection' || body.type === 'FeatureModificationList') {
      throw hubError('invalidRootType', { found: `is a ${body.type} without its ${body.type === 'FeatureCollection' ? 'features' : 'modifications'} array` });
    }
  }
  throw hubError('invalidRootType', { found: describeRoot(root) });
}

function parseText(buffer: Buffer): WriteBody {
  const text = withoutBom(buffer);
  // The streamed path checks the same nesting bound as it scans (feature-array-scanner.ts).
  const valuesChecked = checkJsonText(text, 'request body', MAX_BODY_DEPTH);
  let root: unknown;
  try {
    root = JSON.parse(text.toString('utf8'));
  } catch (error) {
    throw hubError('invalidJsonFeatures', { detail: (error as Error).message });
  }
  const body = toWriteBody(root);
  return valuesChecked ? { ...body, valuesChecked } : body;
}

async function streamParse(buffered: Buffer[], rest: AsyncIterator<Buffer>): Promise<unknown> {
  const scanner = new FeatureArrayScanner();
  // A byte-order mark may be split over the first chunks.
  let head = Buffer.concat(buffered.splice(0));
  let next = head.length < BOM_LENGTH ? await rest.next() : undefined;
  for (; next !== undefined && !next.done; next = head.length < BOM_LENGTH ? await rest.next() : undefined) {
    head = Buffer.concat([head, next.value]);
  }
  scanner.write(withoutBom(head));
  if (next?.done) return scanner.end();
  for (next = await rest.next(); !next.done; next = await rest.next()) scanner.write(next.value);
  return scanner.end();
}

/** `threshold` is the streaming threshold; tests lower it to drive both paths with small bodies. */
export async function readFeatureBody(stream: Readable, threshold: number = STREAM_PARSE_THRESHOLD): Promise<WriteBody> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const buffered: Buffer[] = [];
  let size = 0;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      buffered.push(next.value);
      size += next.value.length;
      if (size > threshold) return toWriteBody(await streamParse(buffered, iterator));
    }
  } catch (error) {
    stream.destroy();
    throw error;
  }
  return parseText(Buffer.concat(buffered));
}
