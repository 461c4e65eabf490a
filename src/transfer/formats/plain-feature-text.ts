// The export's fast path: finds the feature texts in the hub's answers and cuts the hub's namespace out of each at the byte level, without parsing features into objects.
// UTF-8 never uses the bytes of JSON's ASCII punctuation inside a multi-byte character, so scanning bytes is as safe as scanning characters.
import { CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, LINE_FEED, OPEN_BRACE, QUOTE } from '../../core/json-bytes.js';
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
 * A stored feature text found by one pass over its bytes: its plain text (FeatureText: the namespace cut out) and where
 * its parts are, so that writers with columns (FlatGeobuf) read them without parsing the feature.
 */
export interface StoredFeature extends FeatureText {
  /** The id's JSON string, quotes included. */
  idStart: number;
  idEnd: number;
  /** The geometry's JSON value (`null` or an object). */
  geometryStart: number;
  geometryEnd: number;
  /** Four numbers per property but the namespace, in the text's order: its key's JSON string [start, end), its value [start, end). */
  members: number[];
}

/** A feature of a page that is not a stored text: [start, end) of its JSON value, which the caller parses. */
export interface OtherFeature {
  start: number;
  end: number;
  members?: undefined;
}

/**
 * The stored feature text that starts at `start` (and ends by `to`) as the export writes it: without the
 * `@ns:com:here:xyz` member of its properties, byte for byte what JSON.stringify(plain(JSON.parse(text))) gives for a
 * stored text. Undefined for any other shape (foreign members, whitespace, another member order, a second namespace):
 * the caller parses that feature instead. Each byte is read once.
 */
export function scanStoredFeature(bytes: Buffer, start: number, to = bytes.length): StoredFeature | undefined {
  if (!bytesAt(bytes, start, FEATURE_START)) return undefined;
  const idStart = start + FEATURE_START.length - 1;
  const idEnd = bounded(stringEnd, bytes, idStart, to);
  if (idEnd < 0 || !bytesAt(bytes, idEnd, GEOMETRY_KEY)) return undefined;
  const geometryStart = idEnd + GEOMETRY_KEY.length;
  const geometryEnd = bytesAt(bytes, geometryStart, NULL) ? geometryStart + NULL.length
    : bytes[geometryStart] === OPEN_BRACE ? bounded(valueEnd, bytes, geometryStart, to) : -1;
  if (geometryEnd < 0 || !bytesAt(bytes, geometryEnd, PROPERTIES_KEY) || bytes[geometryEnd + PROPERTIES_KEY.length] !== OPEN_BRACE) return undefined;
  const members: number[] = [];
  let cutFrom = -1;
  let cutTo = -1;
  let member = geometryEnd + PROPERTIES_KEY.length + 1;
  while (bytes[member] !== CLOSE_BRACE) {
    if (bytes[member] !== QUOTE) return undefined;
    const keyEnd = bounded(stringEnd, bytes, member, to);
    if (keyEnd < 0 || bytes[keyEnd] !== COLON) return undefined;
    const memberEnd = bounded(valueEnd, bytes, keyEnd + 1, to);
    if (memberEnd < 0) return undefined;
    const after = bytes[memberEnd];
    if (after !== COMMA && after !== CLOSE_BRACE) return undefined;
    if (keyEnd - member === NAMESPACE_KEY.length && bytesAt(bytes, member, NAMESPACE_KEY)) {
      if (cutFrom >= 0) return undefined;
      // The comma before the member goes with it; a first member takes the comma after it instead.
      if (bytes[member - 1] === COMMA) [cutFrom, cutTo] = [member - 1, memberEnd];
      else [cutFrom, cutTo] = [member, after === COMMA ? memberEnd + 1 : memberEnd];
    } else {
      members.push(member, keyEnd, keyEnd + 1, memberEnd);
    }
    member = after === COMMA ? memberEnd + 1 : memberEnd;
  }
  // The properties must be the last member: anything after them is a foreign member, which the export leaves out.
  if (bytes[member + 1] !== CLOSE_BRACE || member + 2 > to) return undefined;
  const end = member + 2;
  return cutFrom < 0 ? { bytes, start, cutFrom: end, cutTo: end, end, idStart, idEnd, geometryStart, geometryEnd, members }
    : { bytes, start, cutFrom, cutTo, end, idStart, idEnd, geometryStart, geometryEnd, members };
}

/**
 * The features of comma-joined feature texts from `from` on, each scanned as a stored text or, when it is not one,
 * found as a JSON value; `stop` is the index of the first byte after them (the hub's pages: the array's `]`).
 * Undefined when the bytes are not such a list.
 */
export function scanFeatures(bytes: Buffer, from: number): { features: Array<StoredFeature | OtherFeature>; stop: number } | undefined {
  const features: Array<StoredFeature | OtherFeature> = [];
  let at = from;
  while (bytes[at] === OPEN_BRACE) {
    let feature: StoredFeature | OtherFeature | undefined = scanStoredFeature(bytes, at);
    if (feature === undefined) {
      const end = bounded(valueEnd, bytes, at, bytes.length);
      if (end < 0) return undefined;
      feature = { start: at, end };
    }
    features.push(feature);
    at = feature.end;
    if (bytes[at] !== COMMA) break;
    at++;
    if (bytes[at] !== OPEN_BRACE) return undefined;
  }
  return { features, stop: at };
}

/** The features of comma-joined feature texts (the hub's pages inside its answers); undefined when the bytes are not such a list. */
export function featureList(bytes: Buffer): Array<StoredFeature | OtherFeature> | undefined {
  const scanned = scanFeatures(bytes, 0);
  return scanned !== undefined && scanned.stop === bytes.length ? scanned.features : undefined;
}

/** An iterate page split without parsing its features: the features, and the members after them (the handle). */
export interface PageFeatures {
  features: Array<StoredFeature | OtherFeature>;
  members: Record<string, unknown>;
}

/** Splits a FeatureCollection page as the hub writes it, in one pass; undefined for any other layout (the caller then parses the page). */
export function pageFeatures(page: Buffer): PageFeatures | undefined {
  if (!bytesAt(page, 0, COLLECTION_START)) return undefined;
  const scanned = scanFeatures(page, COLLECTION_START.length);
  if (scanned === undefined || page[scanned.stop] !== CLOSE_BRACKET) return undefined;
  try {
    const members = JSON.parse(`{"features":[]${page.toString('utf8', scanned.stop + 1)}`) as Record<string, unknown>;
    return { features: scanned.features, members };
  } catch {
    return undefined;
  }
}

/** Writes one feature of a page: its text copied when it is a stored text and the writer takes texts, else parsed (and serialized again by the writer). */
export function writePageFeature(writer: FormatWriter, bytes: Buffer, feature: StoredFeature | OtherFeature): Promise<void> {
  if (feature.members !== undefined && writer.writeText !== undefined) return writer.writeText(feature);
  return writer.write(plain(JSON.parse(bytes.toString('utf8', feature.start, feature.end)) as TransferFeature));
}

/** Writes the features of a page: at once when all are stored texts and the writer takes many (writeTexts), else one by one. */
export async function writePageFeatures(writer: FormatWriter, bytes: Buffer, features: ReadonlyArray<StoredFeature | OtherFeature>): Promise<void> {
  if (writer.writeTexts !== undefined && features.every((feature): feature is StoredFeature => feature.members !== undefined)) return writer.writeTexts(features);
  for (const feature of features) await writePageFeature(writer, bytes, feature);
}

/** Writes the stored feature text at [start, end) as plain(feature): copied when the writer takes texts and the text has the stored shape, else parsed. */
export function writeStoredFeature(writer: FormatWriter, bytes: Buffer, start: number, end: number): Promise<void> {
  const scanned = writer.writeText === undefined ? undefined : scanStoredFeature(bytes, start, end);
  return writePageFeature(writer, bytes, scanned?.end === end ? scanned : { start, end });
}

/**
 * Writes a plain page (core/namespace-cut.ts: a text sequence of texts without the namespace): as it is by a writer of
 * text sequences, copied by writers that take texts, else parsed. Returns the number of features.
 */
export async function writePlainPage(writer: FormatWriter, bytes: Buffer): Promise<number> {
  if (writer.writeSequence !== undefined) {
    await writer.writeSequence(bytes);
    let records = 0;
    for (let at = bytes.indexOf(LINE_FEED); at >= 0; at = bytes.indexOf(LINE_FEED, at + 1)) records++;
    return records;
  }
  const texts: FeatureText[] = [];
  for (let start = 1; start < bytes.length;) {
    const end = bytes.indexOf(LINE_FEED, start);
    texts.push({ bytes, start, cutFrom: end, cutTo: end, end });
    start = end + 2;
  }
  if (writer.writeTexts !== undefined) await writer.writeTexts(texts);
  else for (const text of texts) await writer.write(JSON.parse(bytes.toString('utf8', text.start, text.end)) as TransferFeature);
  return texts.length;
}
