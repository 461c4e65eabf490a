// The export's fast path: finds the feature texts in the hub's answers and cuts the hub's namespace out of each at the byte level, without parsing features into objects.
// UTF-8 never uses the bytes of JSON's ASCII punctuation inside a multi-byte character, so scanning bytes is as safe as scanning characters.
import { CLOSE_BRACE, COLON, COMMA, OPEN_BRACE, QUOTE } from '../../core/json-bytes.js';
import { bytesAt, stringEnd, valueEnd } from '../../core/json-bytes-scan.js';
import { NS } from '../../core/namespace-key.js';
import type { FeatureText, FormatWriter, TransferFeature } from '../transfer-feature.js';

/** The hub's namespace (tags, timestamps) stays in the hub: a file gets the feature as the user wrote it. */
export function plain(feature: TransferFeature): TransferFeature {
  const properties = { ...(feature.properties ?? {}) };
  delete properties[NS];
  return { type: 'Feature', id: feature.id, geometry: feature.geometry ?? null, properties };
}

const bytesOf = (text: string) => Buffer.from(text, 'utf8');
/** How every stored feature text starts (src/hub/feature-text.ts composes them so), up to the id's opening quote. */
const FEATURE_START = bytesOf('{"type":"Feature","id":"');
const GEOMETRY_KEY = bytesOf(',"geometry":');
const NULL = bytesOf('null');
const PROPERTIES_KEY = bytesOf(',"properties":');
const NAMESPACE_KEY = bytesOf(JSON.stringify(NS));
/** How an iterate or search page starts (src/http/reply/feature-collection.ts). */
const COLLECTION_START = bytesOf('{"type":"FeatureCollection","features":[');

/**
 * The end of the value at `start` as core/json-bytes-scan.ts finds it, or -1 when it does not end within `to` (or is
 * empty): a malformed page falls back to parsing instead of failing.
 */
function bounded(end: (bytes: Buffer, start: number) => number, bytes: Buffer, start: number, to: number): number {
  try {
    const found = end(bytes, start);
    return found > start && found <= to ? found : -1;
  } catch {
    return -1;
  }
}

/**
 * The feature text at [start, end) as the export writes it: without the `@ns:com:here:xyz` member of its properties,
 * byte for byte what JSON.stringify(plain(JSON.parse(text))) gives for a stored text. Undefined for any other shape (foreign
 * members, whitespace, another member order): the caller parses that feature instead.
 */
export function plainFeatureText(bytes: Buffer, start: number, end: number): FeatureText | undefined {
  if (!bytesAt(bytes, start, FEATURE_START) || bytes[end - 1] !== CLOSE_BRACE) return undefined;
  let i = bounded(stringEnd, bytes, start + FEATURE_START.length - 1, end);
  if (i < 0 || !bytesAt(bytes, i, GEOMETRY_KEY)) return undefined;
  i += GEOMETRY_KEY.length;
  i = bytesAt(bytes, i, NULL) ? i + NULL.length : bytes[i] === OPEN_BRACE ? bounded(valueEnd, bytes, i, end) : -1;
  if (i < 0 || !bytesAt(bytes, i, PROPERTIES_KEY) || bytes[i + PROPERTIES_KEY.length] !== OPEN_BRACE) return undefined;
  const properties = i + PROPERTIES_KEY.length;
  // The properties must be the last member: anything after them is a foreign member, which the export leaves out.
  if (bounded(valueEnd, bytes, properties, end) !== end - 1) return undefined;
  for (let member = properties + 1; bytes[member] !== CLOSE_BRACE;) {
    if (bytes[member] !== QUOTE) return undefined;
    const keyEnd = bounded(stringEnd, bytes, member, end);
    if (keyEnd < 0 || bytes[keyEnd] !== COLON) return undefined;
    const memberEnd = bounded(valueEnd, bytes, keyEnd + 1, end);
    if (memberEnd < 0) return undefined;
    if (keyEnd - member === NAMESPACE_KEY.length && bytesAt(bytes, member, NAMESPACE_KEY)) {
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
    const end = bounded(valueEnd, bytes, i, to);
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
  if (!bytesAt(page, 0, COLLECTION_START)) return undefined;
  const arrayStart = COLLECTION_START.length - 1;
  const arrayEnd = bounded(valueEnd, page, arrayStart, page.length);
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
