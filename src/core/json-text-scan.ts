// Finding the ends of JSON values in a text without parsing them: for reshaping stored feature texts as they stream.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The index after the JSON string that starts (with its quote) at `start`. */
export function stringEnd(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) return at + 1;
    at += code === BACKSLASH ? 2 : 1;
  }
  throw new SyntaxError(`unterminated string at ${start}`);
}

/**
 * The index after the JSON value that starts at `start` in well-formed JSON text without whitespace (as
 * JSON.stringify writes): a string, an object or array with everything in it, or a scalar up to the next `,`, `]` or `}`.
 */
export function valueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    let at = start;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === QUOTE) {
        at = stringEnd(text, at);
        continue;
      }
      if (code === OPEN_BRACE || code === OPEN_BRACKET) depth += 1;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return at + 1;
      }
      at += 1;
    }
    throw new SyntaxError(`unterminated value at ${start}`);
  }
  let at = start;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET) break;
    at += 1;
  }
  return at;
}
