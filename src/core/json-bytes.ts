// The bytes that structure JSON text, for the scanners that read bodies before or instead of JSON.parse.

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
/** The first bytes of the literals `true`, `false` and `null`: a value starting with one is that literal. */
export const TRUE_START = 0x74;
export const FALSE_START = 0x66;
export const NULL_START = 0x6e;
/** Ends each record of a sequence (GeoJSONSeq, NDJSON, the spool, plain pages); never raw inside a JSON text. */
export const LINE_FEED = 0x0a;
/** Starts each record of an RFC 8142 text sequence (`application/geo+json-seq`); never raw inside a JSON text. */
export const RECORD_SEPARATOR = 0x1e;
