// Hides the passwords in PostgreSQL URLs (one or a comma-separated list) for logs and messages.

const MASK = '***';
const POSTGRES_URL = /^postgres(ql)?:\/\//;

/**
 * `postgres://user:secret@host/db` → `postgres://user:***@host/db`, also `?password=…`, in each URL of a list.
 * The URLs are read with the WHATWG URL parser, which pg reads a connection string with (pg-connection-string):
 * what is hidden is the password pg sends, so `postgres://hub:pa@ss@host/db` shows as `postgres://hub:***@host/db`
 * as pg connects with the password `pa@ss`. A location that does not parse is masked as text (maskUnparsable).
 */
export function maskUrl(location: string): string {
  // openStorage splits a postgres list at every comma; a comma inside a password makes a piece that does not parse.
  const pieces = POSTGRES_URL.test(location) ? location.split(',') : [location];
  const urls = pieces.map(parse);
  if (urls.some((url) => url === undefined)) return maskUnparsable(location);
  return pieces.map((piece, i) => maskParsed(piece, urls[i] as URL)).join(',');
}

function parse(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** The text as it was when it holds no password: a URL serialised again could look different from what was configured. */
function maskParsed(text: string, url: URL): string {
  const inQuery = maskParams(url.searchParams);
  if (url.password === '' && !inQuery) return text;
  if (url.password !== '') url.password = MASK;
  return url.href;
}

/** pg takes `password` from the query too (ahead of the one before the host); every parameter naming a password is hidden. */
function maskParams(params: URLSearchParams): boolean {
  const secret = [...new Set(params.keys())].filter((key) => /password/i.test(key));
  for (const key of secret) params.set(key, MASK);
  return secret.length > 0;
}

/**
 * Where the parser cannot tell the password from the host, nothing between `://` and the last `@` is shown: a
 * password lies inside that span whichever `@` or `/` in it the writer meant. The query after it is masked as parsed.
 * pg refuses most such strings; one it takes (`postgres://u:pw@/db?host=/run/postgresql`) still shows host and query.
 */
function maskUnparsable(text: string): string {
  const scheme = text.indexOf('://');
  const start = scheme === -1 ? 0 : scheme + 3;
  const at = text.lastIndexOf('@');
  const [head, tail] = at < start ? ['', text] : [`${text.slice(0, start)}${MASK}`, text.slice(at)];
  const question = tail.indexOf('?');
  if (question === -1) return head + tail;
  const params = new URLSearchParams(tail.slice(question + 1));
  return maskParams(params) ? `${head}${tail.slice(0, question + 1)}${params.toString()}` : head + tail;
}
