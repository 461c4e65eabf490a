// Parses a feature write body: small bodies with JSON.parse, large ones token by token with stream-json.
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import Assembler from 'stream-json/Assembler.js';
import Parser from 'stream-json/Parser.js';
import { hubError } from '../../hub/errors.js';
import type { WriteBody } from '../../hub/features/write-entries.js';

/**
 * Up to this size the body is buffered and handed to JSON.parse, which is several times faster than a
 * streaming parser. Above it, the text is never held whole: stream-json assembles one feature at a time.
 */
export const STREAM_PARSE_THRESHOLD = 8 * 1024 * 1024;

interface Token { name: string; value?: string }

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function describeRoot(root: unknown): string {
  if (Array.isArray(root)) return 'is an array';
  if (root === null || typeof root !== 'object') return `is ${JSON.stringify(root)}`;
  const type = (root as Record<string, unknown>).type;
  return type === undefined ? 'has no "type" member' : `has type ${JSON.stringify(type)}`;
}

/** Checks the root type (API.md 1.7) and the shape of its list member. */
export function toWriteBody(root: unknown): WriteBody {
  if (typeof root === 'object' && root !== null && !Array.isArray(root)) {
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

function parseText(buffer: Buffer): unknown {
  const start = buffer.subarray(0, 3).equals(BOM) ? 3 : 0;
  try {
    return JSON.parse(buffer.toString('utf8', start));
  } catch (error) {
    throw hubError('invalidJsonFeatures', { detail: (error as Error).message });
  }
}

/** Assembles the root while routing each element of a root-level `features` array into its own assembler. */
class FeatureCollector {
  private readonly root = new Assembler();
  private readonly features: unknown[] = [];
  private element: Assembler | undefined;
  private depth = 0;
  private rootKey: string | undefined;
  private inFeatures = false;

  consume(token: Token): void {
    if (this.element) {
      this.element.consume(token);
      if (this.element.done) this.finishElement();
      return;
    }
    if (this.inFeatures && token.name !== 'endArray') {
      this.element = new Assembler();
      this.element.consume(token);
      if (this.element.done) this.finishElement();
      return;
    }
    this.root.consume(token);
    if (token.name === 'startObject' || token.name === 'startArray') this.depth++;
    else if (token.name === 'endObject' || token.name === 'endArray') {
      this.depth--;
      this.inFeatures = false;
    } else if (token.name === 'keyValue' && this.depth === 1) this.rootKey = token.value;
    if (token.name === 'startArray' && this.depth === 2 && this.rootKey === 'features') this.inFeatures = true;
  }

  private finishElement(): void {
    this.features.push(this.element?.current);
    this.element = undefined;
  }

  result(): unknown {
    const root = this.root.current as unknown;
    if (typeof root === 'object' && root !== null && Array.isArray((root as Record<string, unknown>).features)) {
      (root as Record<string, unknown>).features = this.features;
    }
    return root;
  }
}

async function streamParse(buffered: Buffer[], rest: AsyncIterator<Buffer>): Promise<unknown> {
  const parser = new Parser({ packValues: true, streamValues: false, packKeys: true, streamKeys: false, packStrings: true, streamStrings: false });
  const collector = new FeatureCollector();
  parser.on('data', (token: Token) => collector.consume(token));
  const finished = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', (error: Error) => reject(hubError('invalidJsonFeatures', { detail: error.message })));
  });
  finished.catch(() => {});
  // Racing with `finished` keeps a parse error from leaving us waiting for a drain that never comes.
  const write = async (chunk: Buffer): Promise<void> => {
    if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), finished]);
  };
  const first = buffered[0];
  if (first.subarray(0, 3).equals(BOM)) buffered[0] = first.subarray(3);
  for (const chunk of buffered) await write(chunk);
  buffered.length = 0;
  for (let next = await rest.next(); !next.done; next = await rest.next()) await write(next.value);
  parser.end();
  await finished;
  return collector.result();
}

export async function readFeatureBody(stream: Readable): Promise<WriteBody> {
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const buffered: Buffer[] = [];
  let size = 0;
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    buffered.push(next.value);
    size += next.value.length;
    if (size > STREAM_PARSE_THRESHOLD) return toWriteBody(await streamParse(buffered, iterator));
  }
  return toWriteBody(parseText(Buffer.concat(buffered)));
}
