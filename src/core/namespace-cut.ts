// Where the hub's namespace stands in a stored feature text (the span stored with the row), and the pages of texts the storage cuts it out of.
import { COMMA, LINE_FEED } from './json-bytes.js';
import { NS } from './namespace-key.js';

/**
 * A stored text written by hub/feature-text.ts ends in its namespace member (with the comma before it, unless it is the
 * only member of `properties`), then the `}` closing `properties` and the `}` closing the feature: the span is the
 * member's length, which then ends this many characters (and bytes) before the text's end.
 */
export const NAMESPACE_TAIL = 2;

/**
 * What the cut must start with, after the comma before it or, as the only member, after the `{` of `properties`: the storage checks it before it cuts, so that a span that does
 * not fit its text (a writer that forgot to clear it) gives the whole text, which the hub then scans.
 */
export const NAMESPACE_MEMBER_START = `${JSON.stringify(NS)}:{`;

/**
 * A page asked for as plain texts (`queryText`'s `plain`): the texts joined by line feeds (a stored text never holds a
 * raw one: JSON.stringify escapes control characters), each with the namespace cut out where its row's span says where
 * it is, with `cut` the number of those. The read pipeline hands a page whose texts were all cut on with a line feed
 * after its last one, which marks it as plain: a page of stored texts ends with the `}` of its last feature.
 */
export function isPlainPage(page: string | Buffer): boolean {
  return typeof page === 'string' ? page.endsWith('\n') : page[page.length - 1] === LINE_FEED;
}

/** A page of plain texts with some not cut, as stored texts joined by commas (as `queryText` gives without `plain`): the hub scans those. */
export function commaJoined(page: string | Buffer): string | Buffer {
  if (typeof page === 'string') return page.replaceAll('\n', ',');
  for (let at = page.indexOf(LINE_FEED); at >= 0; at = page.indexOf(LINE_FEED, at + 1)) page[at] = COMMA;
  return page;
}
