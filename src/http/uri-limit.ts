// The longest request URI the hub serves, and how to tell a URI over it from oversized headers when Node's parser refuses a request.

/**
 * Characters of the request target (path and query). Node's parser refuses a request line and headers of 16 KiB
 * together; 16,000 leaves a URI Node can take beside a few short headers, so a `GET /features?id=…` of 500 ids (the
 * most a list may hold) of 30 characters each still fits. Past it the answer is 414, however long the URI is.
 */
export const MAX_URI_LENGTH = 16_000;

/** A request line begins with its method (llhttp knows upper-case methods only, M-SEARCH among them) and a space; empty lines before it are skipped. */
const REQUEST_START = /^(?:\r?\n)*[A-Z-]+ /;

/**
 * Node's parser reports a request line and headers over its limit as one error (HPE_HEADER_OVERFLOW), with the read
 * it failed in (`rawPacket`) and how far into it it got (`bytesParsed`). The URI is what overflowed when no line had
 * ended yet in those bytes, or when the request line in them holds a target longer than MAX_URI_LENGTH.
 *
 * A read may begin in the middle of the request, the request line having started in an earlier one that is gone.
 * Then bytes without a line end are taken for the rest of the target when they hold no space, which a target cannot
 * hold: a single header line without spaces, over 16 KiB and received in several reads, is taken for a long URI.
 */
export function isUriOverflow(raw: Buffer | undefined, bytesParsed: number | undefined): boolean {
  if (raw === undefined) return false;
  const seen = raw.toString('latin1', 0, typeof bytesParsed === 'number' ? Math.min(bytesParsed, raw.length) : raw.length);
  const start = REQUEST_START.exec(seen);
  const lineEnd = seen.indexOf('\n', start?.[0].length ?? 0);
  if (!start) return lineEnd === -1 && !seen.includes(' ');
  if (lineEnd === -1) return true;
  const line = seen.slice(start[0].length, lineEnd);
  const targetEnd = line.lastIndexOf(' ');
  return (targetEnd === -1 ? line.length : targetEnd) > MAX_URI_LENGTH;
}
