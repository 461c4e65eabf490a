// The SQL that gives a page of plain feature texts on PostgreSQL: each stored text without its namespace where its row's span fits it (core/namespace-cut.ts).
import { NAMESPACE_MEMBER_START, NAMESPACE_TAIL } from '../../core/namespace-cut.js';

/** A string literal of SQL for a text without quotes in it. */
const literal = (text: string) => `'${text}'`;

/** The span's characters and the tail after it, counted from the text's end as `right` counts (characters, not bytes). */
const CUT_AND_TAIL = `right(f.feature, f.ns_cut + ${NAMESPACE_TAIL})`;

/** Whether the row's span (`ns_cut`) starts at the namespace member or the comma before it. */
const FITS = `f.ns_cut IS NOT NULL AND (left(${CUT_AND_TAIL}, ${NAMESPACE_MEMBER_START.length + 1}) = ${literal(`,${NAMESPACE_MEMBER_START}`)}
  OR left(${CUT_AND_TAIL}, ${NAMESPACE_MEMBER_START.length}) = ${literal(NAMESPACE_MEMBER_START)})`;

/** The columns the page's rows select, in place of `f.seq, f.feature`: the span beside the text, and whether it fits. */
export const PLAIN_COLUMNS = `f.seq, f.feature, f.ns_cut, ${FITS} AS fits`;

/** Joins the rows `p` of PLAIN_COLUMNS by line feeds, each cut where its span fits (`left` with a negative length: all but the last characters), with the count of cut texts last. */
export const PLAIN_AGGREGATE = `SELECT string_agg(CASE WHEN p.fits THEN left(p.feature, -(p.ns_cut + ${NAMESPACE_TAIL})) || right(p.feature, ${NAMESPACE_TAIL})
  ELSE p.feature END, E'\\n'), count(*)::int, max(p.seq), (count(*) FILTER (WHERE p.fits))::int`;
