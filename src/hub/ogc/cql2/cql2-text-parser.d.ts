// Types of the CQL2-text parser that peggy generates from cql2-text.peggy at build time (package.json "grammar").

/** Where a parse error lies: offset from 0, line and column from 1. */
export interface Cql2Location {
  start: { offset: number; line: number; column: number };
}

export class SyntaxError extends Error {
  location: Cql2Location;
}

/** The expression as its CQL2-JSON tree. */
export function parse(text: string): unknown;
