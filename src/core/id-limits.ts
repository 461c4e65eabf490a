// How long a space or feature id may be: every id must fit into one URL path segment the router accepts.

/** The router's `maxParamLength`; a longer path segment answers 414, so no stored id may be longer. */
export const MAX_ID_LENGTH = 1000;
