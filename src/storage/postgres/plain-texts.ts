// The SQL that gives a page of plain feature texts on PostgreSQL: each stored text without its namespace where its row's span fits it (core/namespace-cut.ts).
import { LINE_FEED, RECORD_SEPARATOR } from '../../core/json-bytes.js';
import { NAMESPACE_MEMBER_START, NAMESPACE_TAIL } from '../../core/namespace-cut.js';

/**
 * Why bytes. On text, `left`, `right` and `substr` count characters and walk the UTF-8 text for each offset: cutting so
 * cost the database more than the hub's scan it saved (docs/import-export.md, "Export, fourth round"). `textsend` gives
 * the text's bytes (a copy: the hub's connections speak UTF-8, as its databases do), on which `length` and `substr` find an offset
 * without reading what comes before it; the page is turned back into text once, for the wire ("Export, sixth round").
 */
const bytes = (data: string | number[]) => `'\\x${(typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)).toString('hex')}'::bytea`;

/** The columns the page's inner read selects, in place of `f.seq, f.feature`. */
export const PLAIN_COLUMNS = 'f.seq, f.feature, f.ns_cut';

/**
 * Whether the row's span starts at the comma before the namespace member, or at the member right after the `{` of
 * `properties` (the text's last byte is at `length(p.b)`); a span that fits neither leaves the text whole.
 */
const FITS = `(p.ns_cut IS NOT NULL AND (substr(p.b, length(p.b) - p.ns_cut - ${NAMESPACE_TAIL - 1}, ${NAMESPACE_MEMBER_START.length + 1}) = ${bytes(`,${NAMESPACE_MEMBER_START}`)}
  OR substr(p.b, length(p.b) - p.ns_cut - ${NAMESPACE_TAIL}, ${NAMESPACE_MEMBER_START.length + 1}) = ${bytes(`{${NAMESPACE_MEMBER_START}`)}))`;

/**
 * The page of the rows `inner` selects (PLAIN_COLUMNS, in order) as a GeoJSON text sequence (a record separator before
 * each text, a line feed after it), each cut where its span fits, as one text; then the count, the last `seq` and how
 * many were cut. `OFFSET 0` keeps the subquery from being merged into the aggregate, which would copy each text's bytes
 * once for every place they are used.
 */
export const plainPage = (inner: string) => `SELECT convert_from(${bytes([RECORD_SEPARATOR])}
    || string_agg(CASE WHEN ${FITS} THEN substr(p.b, 1, length(p.b) - p.ns_cut - ${NAMESPACE_TAIL}) || substr(p.b, length(p.b) - ${NAMESPACE_TAIL - 1}) ELSE p.b END,
                  ${bytes([LINE_FEED, RECORD_SEPARATOR])}) || ${bytes([LINE_FEED])}, 'UTF8') AS text,
    count(*)::int AS count, max(p.seq) AS last_seq, (count(*) FILTER (WHERE ${FITS}))::int AS cut
  FROM (SELECT i.seq, textsend(i.feature) AS b, i.ns_cut FROM (${inner}) i OFFSET 0) p`;
