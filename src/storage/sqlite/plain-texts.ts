// The SQL that gives a page of plain feature texts on SQLite: each stored text without its namespace where its row's span fits it (core/namespace-cut.ts).
import { LINE_FEED, RECORD_SEPARATOR } from '../../core/json-bytes.js';
import { NAMESPACE_MEMBER_START, NAMESPACE_TAIL } from '../../core/namespace-cut.js';

/*
 * SQLite's span is in bytes of UTF-8 (core/namespace-cut.ts, `spanBytes`): on a blob, `length` and `substr` count bytes and
 * find an offset without reading the text before it. On text they count characters and walk the text for each call:
 * cutting 5,000-feature pages so cost the hub (SQLite runs in its process) more than the scan it saves
 * (docs/import-export.md, "Export, fourth round").
 */

/** A blob literal of SQL for an ASCII text without quotes in it. */
const blob = (text: string) => `CAST('${text}' AS BLOB)`;

/**
 * Whether the row's span (`ns_cut`) starts at the comma before the namespace member, or at the member right after the
 * `{` of `properties`. A negative start counts from the end.
 */
const FITS = `f.ns_cut IS NOT NULL AND (substr(CAST(f.json AS BLOB), -(f.ns_cut + ${NAMESPACE_TAIL}), ${NAMESPACE_MEMBER_START.length + 1}) = ${blob(`,${NAMESPACE_MEMBER_START}`)}
  OR substr(CAST(f.json AS BLOB), -(f.ns_cut + ${NAMESPACE_TAIL + 1}), ${NAMESPACE_MEMBER_START.length + 1}) = ${blob(`{${NAMESPACE_MEMBER_START}`)})`;

/** The columns the page's rows select, in place of `f.seq, f.json`: the text's bytes, the span beside them, and whether it fits. */
export const PLAIN_COLUMNS = `f.seq, CAST(f.json AS BLOB) AS json, f.ns_cut, ${FITS} AS fits`;

/**
 * Writes the rows of PLAIN_COLUMNS as a GeoJSON text sequence (a record separator before each text, a line feed after it),
 * each cut where its span fits, as one UTF-8 blob, with the count of cut texts last: a page whose texts were all cut is
 * then the answer's bytes as they are sent.
 */
export const PLAIN_AGGREGATE = `SELECT CAST(char(${RECORD_SEPARATOR}) || string_agg(CASE WHEN fits THEN substr(json, 1, length(json) - ns_cut - ${NAMESPACE_TAIL}) || substr(json, -${NAMESPACE_TAIL})
  ELSE json END, char(${LINE_FEED}, ${RECORD_SEPARATOR})) || char(${LINE_FEED}) AS BLOB), count(*), max(seq), total(fits)`;
