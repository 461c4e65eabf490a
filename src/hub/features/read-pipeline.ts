// Turns stored feature rows into response texts: the database's joined text when nothing transforms, else the transform plan per feature.
import type { FeatureQuery } from '../../core/feature-query.js';
import { commaJoined } from '../../core/namespace-cut.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import type { FeatureSource } from '../feature-source.js';
import type { CachedAnswer, EncodedBody } from './answer-cache.js';
import { type TransformPlan, transformText } from './transform-plan.js';

export interface ReadOptions {
  transforms: TransformPlan;
  /** The request without what never changes its answer (credentials, clientId): with the content version it names the answer. */
  etagKey: string;
  /** Aborts when the client goes away: storage then cancels the query. */
  signal?: AbortSignal;
  /** Reshapes the answer's feature texts after the transforms, a page (texts joined by commas) at a time: the OGC API's form. */
  shape?: (texts: string | Buffer) => string | Buffer;
  /**
   * The answer leaves the namespace out (a file format): pages whose texts the storage could all cut come as plain pages
   * (core/namespace-cut.ts: text sequences, each text followed by a line feed), the others as stored texts joined by commas.
   */
  plainTexts?: boolean;
}

/** One stored feature as the read answers it, or undefined when a transform left it out. */
export function shapedOne(json: string, options: ReadOptions): string | undefined {
  const text = transformText(json, options.transforms);
  return text === undefined || !options.shape ? text : options.shape(text).toString();
}

/** The texts as the read's `shape` makes them (unchanged without one). */
export function shaped(texts: string | Buffer, options: ReadOptions): string | Buffer {
  return options.shape ? options.shape(texts) : texts;
}

/**
 * A FeatureCollection answer: feature texts stream lazily, a page at a time, each page the features'
 * JSON joined by commas; `trailer` is complete once they have been consumed.
 */
export interface FeatureCollectionStream {
  /** Names the answer before it is produced (`answerKey`): the ETag is computed from the body as it is sent. */
  key: string;
  cacheTTL?: number;
  features: AsyncIterable<string | Buffer>;
  trailer(): Record<string, unknown>;
  /** The whole answer from the node's answer cache: sent as it is, and nothing is read. */
  cached?: CachedAnswer;
  /** Takes the whole answer once it has been made, for the answer cache; an answer streamed in pieces is not offered. */
  keep?(answer: CachedAnswer): void;
  /** Takes the cached answer's body compressed for a client, to keep it beside the body. */
  keepEncoded?(encoded: EncodedBody): void;
}

/**
 * The content version of the spaces read (feature-source.ts) at the version read and the request: equal keys give equal bodies. It keys
 * the node's memory of ETags, so a repeated If-None-Match costs no query, and tags an answer too large to be hashed
 * before it is sent (docs/decisions.md, "ETags").
 */
export function answerKey(source: FeatureSource, request: string, version?: number): string {
  return hashedName(answerName(source, request, version));
}

/** What `answerKey` hashes, as text: the answer cache's keys, where a hit then needs no hash. */
export function answerName(source: FeatureSource, request: string, version?: number): string {
  return `${source.space.id}\n${source.contentAt(version)}\n${request}`;
}

/** The key of a name made by `answerName`. */
export const hashedName = (name: string): string => sha256Hex(name).slice(0, 32);

/**
 * The response pages of a query. Without transformation the database's joined page texts go out as they
 * are; with one, each feature runs through the plan and the page is joined here. `onPage` sees each page's
 * size and last insertion sequence as read from storage.
 */
export async function* renderPages(
  source: FeatureSource,
  query: FeatureQuery,
  options: ReadOptions,
  onPage: (count: number, lastSeq: number) => void = () => {},
): AsyncIterable<string | Buffer> {
  if (options.transforms.length === 0 && options.plainTexts && !options.shape) {
    for await (const page of source.queryText(query, options.signal, true)) {
      onPage(page.count, page.lastSeq);
      // An engine without spans gives stored texts, a page cut whole is the answer's bytes; a mixed page goes back to stored texts for the scan.
      yield page.cut === undefined || (page.cut === page.count && page.count > 0) ? page.text : commaJoined(page.text);
    }
    return;
  }
  if (options.transforms.length === 0) {
    for await (const page of source.queryText(query, options.signal)) {
      onPage(page.count, page.lastSeq);
      yield shaped(page.text, options);
    }
    return;
  }
  for await (const rows of source.query(query, options.signal)) {
    onPage(rows.length, rows[rows.length - 1].seq);
    const texts: string[] = [];
    for (const row of rows) {
      const text = transformText(row.json, options.transforms);
      if (text !== undefined) texts.push(text);
    }
    yield shaped(texts.join(','), options);
  }
}
