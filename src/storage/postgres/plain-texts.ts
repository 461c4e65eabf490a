// The SQL that gives a page of plain feature texts on PostgreSQL: each stored text without its namespace where its row's span fits it (core/namespace-cut.ts).
import { NAMESPACE_MEMBER_START, NAMESPACE_TAIL } from '../../core/namespace-cut.js';

/** A string literal of SQL for a text without quotes in it. */
const literal = (text: string) => `'${text}'`;

/** The text from `before` characters ahead of the span on, counted from the text's end as `right` counts (characters, not bytes). */
const FROM_SPAN = (before: number) => `right(f.feature, f.ns_cut + ${NAMESPACE_TAIL + before})`;

/** Whether the row's span (`ns_cut`) starts at the comma before the namespace member, or at the member right after the `{` of `properties`. */
const FITS = `f.ns_cut IS NOT NULL AND (left(${FROM_SPAN(0)}, ${NAMESPACE_MEMBER_START.length + 1}) = ${literal(`,${NAMESPACE_MEMBER_START}`)}
  OR left(${FROM_SPAN(1)}, ${NAMESPACE_MEMBER_START.length + 1}) = ${literal(`{${NAMESPACE_MEMBER_START}`)})`;

/** The columns the page's rows select, in place of `f.seq, f.feature`: the span beside the text, and whether it fits. */
export const PLAIN_COLUMNS = `f.seq, f.feature, f.ns_cut, ${FITS} AS fits`;

/** Joins the rows `p` of PLAIN_COLUMNS by line feeds, each cut where its span fits (`left` with a negative length: all but the last characters), with the count of cut texts last. */
export const PLAIN_AGGREGATE = `SELECT string_agg(CASE WHEN p.fits THEN left(p.feature, -(p.ns_cut + ${NAMESPACE_TAIL})) || right(p.feature, ${NAMESPACE_TAIL})
  ELSE p.feature END, E'\\n'), count(*)::int, max(p.seq), (count(*) FILTER (WHERE p.fits))::int`;
