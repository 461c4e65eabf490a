// The SQL that gives a page of plain feature texts on SQLite: each stored text without its namespace where its row's span fits it (core/namespace-cut.ts).
import { NAMESPACE_MEMBER_START, NAMESPACE_TAIL } from '../../core/namespace-cut.js';

/** A string literal of SQL for a text without quotes in it. */
const literal = (text: string) => `'${text}'`;

/**
 * Whether the row's span (`ns_cut`, in characters, as SQLite's `substr` counts them on text) starts at the comma before
 * the namespace member, or at the member right after the `{` of `properties`. A negative start counts from the text's end.
 */
const FITS = `f.ns_cut IS NOT NULL AND (substr(f.json, -(f.ns_cut + ${NAMESPACE_TAIL}), ${NAMESPACE_MEMBER_START.length + 1}) = ${literal(`,${NAMESPACE_MEMBER_START}`)}
  OR substr(f.json, -(f.ns_cut + ${NAMESPACE_TAIL + 1}), ${NAMESPACE_MEMBER_START.length + 1}) = ${literal(`{${NAMESPACE_MEMBER_START}`)})`;

/** The columns the page's rows select, in place of `f.seq, f.json`: the span beside the text, and whether it fits. */
export const PLAIN_COLUMNS = `f.seq, f.json, f.ns_cut, ${FITS} AS fits`;

/** Joins the rows of PLAIN_COLUMNS by line feeds, each cut where its span fits, as one UTF-8 blob, with the count of cut texts last. */
export const PLAIN_AGGREGATE = `SELECT CAST(string_agg(CASE WHEN fits THEN substr(json, 1, length(json) - ns_cut - ${NAMESPACE_TAIL}) || substr(json, -${NAMESPACE_TAIL})
  ELSE json END, char(10)) AS BLOB), count(*), max(seq), total(fits)`;
