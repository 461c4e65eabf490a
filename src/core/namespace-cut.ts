// Where the hub's namespace stands in a stored feature text (the span stored with the row), and the pages of texts the storage cuts it out of.
import { COMMA, LINE_FEED, RECORD_SEPARATOR } from './json-bytes.js';
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
 * The span the storage keeps for a namespace member (FeatureWrite.namespaceCut), in bytes of UTF-8: both engines cut
 * the text as bytes, where an offset is found without reading the text before it (on text, SQLite and PostgreSQL walk
 * its characters for every offset; docs/import-export.md, "Export, fourth round" and "sixth round").
 */
export const spanBytes = (member: string | undefined): number | null => (member === undefined ? null : Buffer.byteLength(member));

/**
 * A page asked for as plain texts (`queryText`'s `plain`): an RFC 8142 text sequence, each text after a record separator
 * and followed by a line feed (neither occurs raw in a stored text: JSON.stringify escapes control characters), each
 * with the namespace cut out where its row's span says where it is, with `cut` the number of those. A page whose texts
 * were all cut is the sequence answer's bytes as they are sent; the line feed it ends with marks it as plain: a page of
 * stored texts ends with the `}` of its last feature.
 */
export function isPlainPage(page: string | Buffer): boolean {
  return typeof page === 'string' ? page.endsWith('\n') : page[page.length - 1] === LINE_FEED;
}

/**
 * A page of plain texts with some not cut, as stored texts joined by commas (as `queryText` gives without `plain`): the
 * hub scans those. The separators go and the line feeds between texts become commas, compacted in place.
 */
export function commaJoined(page: string | Buffer): string | Buffer {
  if (typeof page === 'string') return page.slice(1, -1).replaceAll(`\n${String.fromCharCode(RECORD_SEPARATOR)}`, ',');
  let kept = 0;
  for (let at = 0; at < page.length;) {
    const end = page.indexOf(LINE_FEED, at);
    if (kept > 0) page[kept++] = COMMA;
    page.copyWithin(kept, at + 1, end);
    kept += end - at - 1;
    at = end + 1;
  }
  return page.subarray(0, kept);
}
