// The export's fast path: finds the feature texts in the hub's answers and cuts the hub's namespace out of each at the byte level, without parsing features into objects.
// UTF-8 never uses the bytes of JSON's ASCII punctuation inside a multi-byte character, so scanning bytes is as safe as scanning characters.
import type { FeatureText, FormatWriter, TransferFeature } from '../transfer-feature.js';

const NAMESPACE = '@ns:com:here:xyz';

/** The hub's namespace (tags, timestamps) stays in the hub: a file gets the feature as the user wrote it. */
export function plain(feature: TransferFeature): TransferFeature {
  const properties = { ...(feature.properties ?? {}) };
  delete properties[NAMESPACE];
  return { type: 'Feature', id: feature.id, geometry: feature.geometry ?? null, properties };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const bytesOf = (text: string) => Buffer.from(text, 'utf8');
/** How every stored feature text starts (src/hub/feature-text.ts composes them so), up to the id's opening quote. */
const FEATURE_START = bytesOf('{"type":"Feature","id":"');
const GEOMETRY_KEY = bytesOf(',"geometry":');
const NULL = bytesOf('null');
const PROPERTIES_KEY = bytesOf(',"properties":');
const NAMESPACE_KEY = bytesOf(JSON.stringify(NAMESPACE));
/** How an iterate or search page starts (src/http/reply/feature-collection.ts). */
const COLLECTION_START = bytesOf('{"type":"FeatureCollection","features":[');

/** Whether `expected` is at `index` (a loop: a subarray to compare would cost an object per call). */
function at(bytes: Uint8Array, index: number, expected: Uint8Array): boolean {
  if (index + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[index + i] !== expected[i]) return false;
  return true;
}

/** The index after the string whose opening quote is at `start`; -1 when the bytes end first. */
function stringEnd(bytes: Uint8Array, start: number, to: number): number {
  for (let i = start + 1; i < to; i++) {
    if (bytes[i] === BACKSLASH) i++;
    else if (bytes[i] === QUOTE) return i + 1;
  }
  return -1;
}

/** The index after the object or array whose bracket is at `start`; -1 when the bytes end first. */
function containerEnd(bytes: Uint8Array, start: number, to: number): number {
  let depth = 0;
  for (let i = start; i < to; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = stringEnd(bytes, i, to) - 1;
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
  }
  return -1;
}

/** The index after the compact JSON value starting at `start` (a number or literal ends before `,`, `}` or `]`). */
function valueEnd(bytes: Uint8Array, start: number, to: number): number {
  const c = bytes[start];
  if (c === QUOTE) return stringEnd(bytes, start, to);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return containerEnd(bytes, start, to);
  let i = start;
  while (i < to && bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE && bytes[i] !== CLOSE_BRACKET) i++;
  return i > start ? i : -1;
}

/**
 * The feature text at [start, end) as the export writes it: without the `@ns:com:here:xyz` member of its properties,
 * byte for byte what JSON.stringify(plain(JSON.parse(text))) gives for a stored text. Undefined for any other shape (foreign
 * members, whitespace, another member order): the caller parses that feature instead.
 */
export function plainFeatureText(bytes: Buffer, start: number, end: number): FeatureText | undefined {
  if (!at(bytes, start, FEATURE_START) || bytes[end - 1] !== CLOSE_BRACE) return undefined;
  let i = stringEnd(bytes, start + FEATURE_START.length - 1, end);
  if (i < 0 || !at(bytes, i, GEOMETRY_KEY)) return undefined;
  i += GEOMETRY_KEY.length;
  i = at(bytes, i, NULL) ? i + NULL.length : bytes[i] === OPEN_BRACE ? containerEnd(bytes, i, end) : -1;
  if (i < 0 || !at(bytes, i, PROPERTIES_KEY) || bytes[i + PROPERTIES_KEY.length] !== OPEN_BRACE) return undefined;
  const properties = i + PROPERTIES_KEY.length;
  // The properties must be the last member: anything after them is a foreign member, which the export leaves out.
  if (containerEnd(bytes, properties, end) !== end - 1) return undefined;
  for (let member = properties + 1; bytes[member] !== CLOSE_BRACE;) {
    if (bytes[member] !== QUOTE) return undefined;
    const keyEnd = stringEnd(bytes, member, end);
    if (keyEnd < 0 || bytes[keyEnd] !== COLON) return undefined;
    const memberEnd = valueEnd(bytes, keyEnd + 1, end);
    if (memberEnd < 0) return undefined;
    if (keyEnd - member === NAMESPACE_KEY.length && at(bytes, member, NAMESPACE_KEY)) {
      // The comma before the member goes with it; a first member takes the comma after it instead.
      return bytes[member - 1] === COMMA ? { bytes, start, cutFrom: member - 1, cutTo: memberEnd, end }
        : { bytes, start, cutFrom: member, cutTo: bytes[memberEnd] === COMMA ? memberEnd + 1 : memberEnd, end };
    }
    if (bytes[memberEnd] === COMMA) member = memberEnd + 1;
    else if (bytes[memberEnd] === CLOSE_BRACE) member = memberEnd;
    else return undefined;
  }
  return { bytes, start, cutFrom: end, cutTo: end, end };
}

/** The [start, end) of each object in comma-joined feature texts (the hub's pages); undefined when the bytes are not such a list. */
export function featureSpans(bytes: Buffer, from = 0, to = bytes.length): Array<[number, number]> | undefined {
  const spans: Array<[number, number]> = [];
  for (let i = from; i < to;) {
    if (bytes[i] !== OPEN_BRACE) return undefined;
    const end = containerEnd(bytes, i, to);
    if (end < 0) return undefined;
    spans.push([i, end]);
    i = end;
    if (i < to && bytes[i++] !== COMMA) return undefined;
  }
  return spans;
}

/** An iterate page split without parsing its features: their spans, and the members after them (the handle). */
export interface PageSpans {
  features: Array<[number, number]>;
  members: Record<string, unknown>;
}

/** Splits a FeatureCollection page as the hub writes it; undefined for any other layout (the caller then parses the page). */
export function pageSpans(page: Buffer): PageSpans | undefined {
  if (!at(page, 0, COLLECTION_START)) return undefined;
  const arrayStart = COLLECTION_START.length - 1;
  const arrayEnd = containerEnd(page, arrayStart, page.length);
  if (arrayEnd < 0) return undefined;
  const features = featureSpans(page, arrayStart + 1, arrayEnd - 1);
  if (features === undefined) return undefined;
  try {
    const members = JSON.parse(`{"features":[]${page.toString('utf8', arrayEnd)}`) as Record<string, unknown>;
    return { features, members };
  } catch {
    return undefined;
  }
}

/**
 * Writes the stored feature text at [start, end) as plain(feature): copied when the writer takes texts and the text has
 * the stored shape, else parsed (and the writer serializes it again).
 */
export async function writeStoredFeature(writer: FormatWriter, bytes: Buffer, start: number, end: number): Promise<void> {
  const text = writer.writeText === undefined ? undefined : plainFeatureText(bytes, start, end);
  if (text !== undefined && writer.writeText !== undefined) return writer.writeText(text);
  return writer.write(plain(JSON.parse(bytes.toString('utf8', start, end)) as TransferFeature));
}
