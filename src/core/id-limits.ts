// What a space, feature or project id may be: every id must fit into one URL path segment the router accepts.

/** The router's `maxParamLength`; a longer path segment answers 414, so no stored id may be longer. */
export const MAX_ID_LENGTH = 1000;

/** Characters a client-chosen id may not hold: they would break the id's path segment, or be invisible. */
export const FORBIDDEN_ID_CHARACTERS = /[/?#%\s\u0000-\u001f\u007f]/;

/** The rule the hub states when it refuses an id, for the id named `name`. */
export const idRule = (name: string): string =>
  `The property '${name}' must be a non-empty string of at most ${MAX_ID_LENGTH} characters without '/', '?', '#', '%', white space or control characters.`;
