// The feature texts OGC clients get: flat properties (the hub's namespace becomes createdAt, updatedAt and tags) and 2D where the hub padded z; in JSON-FG also `time` and `place`.
import { ByteWriter } from '../../core/byte-writer.js';
import { isObject } from '../../core/json.js';
import { CLOSE_BRACE, COLON, COMMA, QUOTE } from '../../core/json-bytes.js';
import { bytesAt, stringEnd, valueEnd } from '../../core/json-bytes-scan.js';
import { appendZeroZDropped } from './planar-text.js';
import { NS } from '../namespace.js';

/** How the hub writes every stored feature (feature-text.ts `compose`): these members first, in this order. */
const PREFIX = Buffer.from('{"type":"Feature","id":"');
const GEOMETRY = Buffer.from(',"geometry":');
const PROPERTIES = Buffer.from(',"properties":{');
/**
 * The namespace's members OGC clients see as plain properties, after the feature's own. A property of the same name
 * wins, as it does in filters (ogc-service.ts): a space holding its own `updatedAt` shows and filters on that.
 */
const TIMES = ['createdAt', 'updatedAt'] as const;
const KEYS = {
  namespace: Buffer.from(JSON.stringify(NS)),
  createdAt: Buffer.from('"createdAt"'),
  updatedAt: Buffer.from('"updatedAt"'),
  tags: Buffer.from('"tags"'),
};
const COMMA_BYTES = Buffer.from(',');
const TAGS_MEMBER = Buffer.from('"tags":');
const NO_TAGS = Buffer.from('[]');
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** The members a hub time becomes: a property, or JSON-FG's `time` (from `updatedAt`, the instant `datetime` selects on). */
type TimeMember = (typeof TIMES)[number] | 'time';
const TIME_TEXT: Record<TimeMember, (iso: string) => string> = {
  createdAt: (iso) => `"createdAt":"${iso}"`,
  updatedAt: (iso) => `"updatedAt":"${iso}"`,
  time: (iso) => `"time":{"timestamp":"${iso}"}`,
};
/** JSON-FG's members of a feature without a time, and its `place`: null, as `geometry` holds the CRS84 geometry. */
const NO_TIME = Buffer.from(',"time":null');
const NULL_PLACE = Buffer.from(',"place":null}');

/** A hub time as its member (`"createdAt":"…ISO 8601…"`); the features of one write share their times, so recent ones are remembered. */
const timeMembers: Record<TimeMember, Map<number, Buffer>> = { createdAt: new Map(), updatedAt: new Map(), time: new Map() };
const lastTime: Record<TimeMember, { millis: number; member: Buffer }> = {
  createdAt: { millis: NaN, member: Buffer.alloc(0) }, updatedAt: { millis: NaN, member: Buffer.alloc(0) }, time: { millis: NaN, member: Buffer.alloc(0) },
};
function timeMember(name: TimeMember, millis: number): Buffer | undefined {
  const last = lastTime[name];
  if (last.millis === millis) return last.member;
  const known = timeMembers[name];
  let member = known.get(millis);
  if (member === undefined) {
    const time = new Date(millis);
    if (Number.isNaN(time.getTime())) return undefined;
    if (known.size >= 1024) known.clear();
    member = Buffer.from(TIME_TEXT[name](time.toISOString()));
    known.set(millis, member);
  }
  last.millis = millis;
  last.member = member;
  return member;
}

/** The non-negative integer in `bytes[start, end)`, or undefined when it is not one. */
function integerIn(bytes: Uint8Array, start: number, end: number): number | undefined {
  let value = 0;
  for (let at = start; at < end; at++) {
    if (bytes[at] < DIGIT_0 || bytes[at] > DIGIT_9) return undefined;
    value = value * 10 + bytes[at] - DIGIT_0;
  }
  return end > start ? value : undefined;
}

/** Whether `bytes[start, end)` are the bytes of `key` (compared byte by byte: a native call costs more for keys this short). */
function isKey(bytes: Uint8Array, start: number, end: number, key: Buffer): boolean {
  if (end - start !== key.length) return false;
  for (let at = 0; at < key.length; at++) if (bytes[start + at] !== key[at]) return false;
  return true;
}

/**
 * What the quick path learns of one feature's properties, kept between features so that a page makes no garbage for
 * it: where the namespace member starts and ends (its key, and its value), and which hub names the feature has as its own.
 */
const hub = { memberStart: -1, valueStart: -1, memberEnd: -1, createdAt: false, updatedAt: false, tags: false, updatedAtStart: -1, updatedAtEnd: -1 };

/**
 * Reads the members of the properties object whose first member starts at `at` into `hub`. Returns the index after
 * the closing `}`, or -1 when the members are not `"key":value` pairs.
 */
function readProperties(input: Buffer, at: number): number {
  hub.memberStart = -1;
  hub.updatedAtStart = -1;
  hub.createdAt = hub.updatedAt = hub.tags = false;
  if (input[at] === CLOSE_BRACE) return at + 1;
  for (;;) {
    if (input[at] !== QUOTE) return -1;
    const keyEnd = stringEnd(input, at);
    if (input[keyEnd] !== COLON) return -1;
    const end = valueEnd(input, keyEnd + 1);
    if (isKey(input, at, keyEnd, KEYS.namespace)) {
      hub.memberStart = at;
      hub.valueStart = keyEnd + 1;
      hub.memberEnd = end;
    } else {
      if (isKey(input, at, keyEnd, KEYS.createdAt)) hub.createdAt = true;
      else if (isKey(input, at, keyEnd, KEYS.updatedAt)) hub.updatedAt = true;
      else if (isKey(input, at, keyEnd, KEYS.tags)) hub.tags = true;
    }
    if (input[end] === CLOSE_BRACE) return end + 1;
    if (input[end] !== COMMA) return -1;
    at = end + 1;
  }
}

/** The index after the members that start at `at` and the `}` closing them, or -1 when they are not `"key":value` pairs. */
function membersEnd(input: Buffer, at: number): number {
  for (;;) {
    if (input[at] !== QUOTE) return -1;
    const keyEnd = stringEnd(input, at);
    if (input[keyEnd] !== COLON) return -1;
    const end = valueEnd(input, keyEnd + 1);
    if (input[end] === CLOSE_BRACE) return end + 1;
    if (input[end] !== COMMA) return -1;
    at = end + 1;
  }
}

/** Appends `"name":"…ISO 8601…"` for the integer in `input[start, end)` unless the feature has its own `name`; whether it did. */
function appendTime(name: (typeof TIMES)[number], input: Buffer, start: number, end: number, out: ByteWriter, comma: boolean): boolean {
  if (hub[name]) return false;
  const millis = integerIn(input, start, end);
  const member = millis === undefined ? undefined : timeMember(name, millis);
  if (member === undefined) return false;
  if (comma) out.copy(COMMA_BYTES, 0, 1);
  out.copy(member, 0, member.length);
  return true;
}

/**
 * Appends the hub's members the feature does not have as its own, from the namespace object in `input[start, end)`
 * as the hub writes it (`{"space":…,"createdAt":…,"updatedAt":…,"tags":[…],…}`). Always at least `tags`. Keys are
 * told apart by length and second byte before they are compared: this runs for every feature of a page.
 */
function appendHubMembers(input: Buffer, start: number, end: number, out: ByteWriter, comma: boolean): void {
  let tagsStart = -1;
  let tagsEnd = -1;
  for (let at = start + 1; at < end - 1;) {
    const keyEnd = stringEnd(input, at);
    const valueStart = keyEnd + 1;
    const valueStop = valueEnd(input, valueStart);
    const length = keyEnd - at;
    const second = input[at + 1];
    if (length === KEYS.createdAt.length && second === KEYS.createdAt[1] && isKey(input, at, keyEnd, KEYS.createdAt)) {
      if (appendTime('createdAt', input, valueStart, valueStop, out, comma)) comma = true;
    } else if (length === KEYS.updatedAt.length && second === KEYS.updatedAt[1] && isKey(input, at, keyEnd, KEYS.updatedAt)) {
      hub.updatedAtStart = valueStart;
      hub.updatedAtEnd = valueStop;
      if (appendTime('updatedAt', input, valueStart, valueStop, out, comma)) comma = true;
    } else if (length === KEYS.tags.length && second === KEYS.tags[1] && isKey(input, at, keyEnd, KEYS.tags)) {
      tagsStart = valueStart;
      tagsEnd = valueStop;
    }
    at = valueStop + 1;
  }
  if (hub.tags) return;
  if (comma) out.copy(COMMA_BYTES, 0, 1);
  out.copy(TAGS_MEMBER, 0, TAGS_MEMBER.length);
  if (tagsStart >= 0) out.copy(input, tagsStart, tagsEnd);
  else out.copy(NO_TAGS, 0, NO_TAGS.length);
}

/**
 * JSON-FG's members after the rest of a feature: `time`, the namespace's `updatedAt` at `input[start, end)` (null without
 * one), `place` null, and the feature's closing brace.
 */
function appendFgMembers(input: Buffer, start: number, end: number, out: ByteWriter): void {
  const millis = start < 0 ? undefined : integerIn(input, start, end);
  const time = millis === undefined ? undefined : timeMember('time', millis);
  if (time === undefined) out.copy(NO_TIME, 0, NO_TIME.length);
  else {
    out.copy(COMMA_BYTES, 0, 1);
    out.copy(time, 0, time.length);
  }
  out.copy(NULL_PLACE, 0, NULL_PLACE.length);
}

/**
 * The feature at `start` as the hub stores it, appended in the OGC form (JSON-FG with `fg`) without parsing it; the
 * index after it, or undefined (nothing appended) when it is laid out otherwise. In JSON-FG a feature with members
 * besides type, id, geometry and properties is parsed instead, as one of them could be a JSON-FG member of its own.
 */
function quickFeature(input: Buffer, start: number, out: ByteWriter, fg: boolean): number | undefined {
  if (!bytesAt(input, start, PREFIX)) return undefined;
  const idEnd = stringEnd(input, start + PREFIX.length - 1);
  if (!bytesAt(input, idEnd, GEOMETRY)) return undefined;
  const geometryStart = idEnd + GEOMETRY.length;
  const geometryEnd = valueEnd(input, geometryStart);
  if (!bytesAt(input, geometryEnd, PROPERTIES)) return undefined;
  const propertiesEnd = readProperties(input, geometryEnd + PROPERTIES.length);
  if (propertiesEnd < 0) return undefined;
  let end: number;
  if (input[propertiesEnd] === CLOSE_BRACE) end = propertiesEnd + 1;
  else if (input[propertiesEnd] === COMMA && !fg) end = membersEnd(input, propertiesEnd + 1);
  else return undefined;
  if (end < 0 || (end < input.length && input[end] !== COMMA)) return undefined;
  out.copy(input, start, geometryStart);
  appendZeroZDropped(input, geometryStart, geometryEnd, out);
  const ownStart = geometryEnd + PROPERTIES.length;
  // Without JSON-FG the feature's closing brace is copied with what precedes it; with it, JSON-FG's members come first.
  const copiedEnd = fg ? end - 1 : end;
  if (hub.memberStart < 0) {
    out.copy(input, geometryEnd, copiedEnd);
    if (fg) appendFgMembers(input, -1, -1, out);
    return end;
  }
  // The feature's own members are the properties without the namespace member and one comma next to it.
  const before = hub.memberStart > ownStart ? hub.memberStart - 1 : hub.memberStart;
  const after = hub.memberStart > ownStart || input[hub.memberEnd] !== COMMA ? hub.memberEnd : hub.memberEnd + 1;
  out.copy(input, geometryEnd, before);
  out.copy(input, after, propertiesEnd - 1);
  const hasOwn = before > ownStart || after < propertiesEnd - 1;
  appendHubMembers(input, hub.valueStart, hub.memberEnd, out, hasOwn);
  out.copy(input, propertiesEnd - 1, copiedEnd);
  if (fg) appendFgMembers(input, hub.updatedAtStart, hub.updatedAtEnd, out);
  return end;
}

/** The members a JSON-FG feature holds for the hub: a stored feature's own members of these names are dropped. */
const FG_MEMBERS = new Set(['time', 'place', 'coordRefSys', 'conformsTo', 'featureType', 'featureSchema']);

/** The feature at `start` of any layout, parsed and appended in the OGC form (JSON-FG with `fg`); the index after it. */
function parsedFeature(input: Buffer, start: number, out: ByteWriter, fg: boolean): number {
  const end = valueEnd(input, start);
  const { type: _type, id, geometry, properties, ...foreign } = JSON.parse(input.toString('utf8', start, end)) as Record<string, unknown>;
  const extra = fg ? Object.fromEntries(Object.entries(foreign).filter(([name]) => !FG_MEMBERS.has(name))) : foreign;
  const { [NS]: namespace, ...own } = isObject(properties) ? properties : {};
  const members: Record<string, unknown> = {};
  let updatedAt: string | undefined;
  if (isObject(namespace)) {
    for (const name of TIMES) {
      const time = typeof namespace[name] === 'number' ? new Date(namespace[name]) : undefined;
      if (time && !Number.isNaN(time.getTime()) && name === 'updatedAt') updatedAt = time.toISOString();
      if (time && !Number.isNaN(time.getTime()) && !(name in own)) members[name] = time.toISOString();
    }
    if (!('tags' in own)) members.tags = Array.isArray(namespace.tags) ? namespace.tags : [];
  }
  out.text(`{"type":"Feature"${id === undefined ? '' : `,"id":${JSON.stringify(id)}`},"geometry":`);
  const geometryText = Buffer.from(JSON.stringify(geometry ?? null));
  appendZeroZDropped(geometryText, 0, geometryText.length, out);
  const extraText = JSON.stringify(extra).slice(1, -1);
  const fgText = fg ? `,"time":${updatedAt === undefined ? 'null' : JSON.stringify({ timestamp: updatedAt })},"place":null` : '';
  out.text(`,"properties":${JSON.stringify({ ...own, ...members })}${extraText === '' ? '' : `,${extraText}`}${fgText}}`);
  return end;
}

/** Stored feature texts joined by commas, each appended in the OGC form (JSON-FG with `fg`). */
function shapedTexts(texts: string | Buffer, fg: boolean): Buffer {
  const input = typeof texts === 'string' ? Buffer.from(texts) : texts;
  const out = new ByteWriter(input.length + (input.length >> 3) + (fg ? 64 : 0));
  let at = 0;
  while (at < input.length) {
    const end = quickFeature(input, at, out, fg) ?? parsedFeature(input, at, out, fg);
    if (end >= input.length) break;
    if (input[end] !== COMMA) throw new SyntaxError(`features are joined by commas, not at ${end}`);
    out.copy(input, end, end + 1);
    at = end + 1;
  }
  return out.bytes();
}

/**
 * Stored feature texts, one or several joined by commas (a page as storage reads it), as OGC clients get them:
 * - the hub's namespace `@ns:com:here:xyz` is not a property: OGC clients expect flat, typed columns, and QGIS showed it
 *   as one column holding an object. Its times become `createdAt` and `updatedAt` (ISO 8601) and its tags `tags` (an
 *   array of strings), unless the feature has its own property of that name;
 * - positions are 2D when the hub padded them: every z of the feature is 0.
 * Pages go through as bytes, scanned once and copied in slices: building strings per feature, or calling a native
 * search per member, cost several times iterate's whole page (docs/ogc-output.md).
 */
export const ogcFeatureTexts = (texts: string | Buffer): Buffer => shapedTexts(texts, false);

/**
 * The same as JSON-FG features (docs/jsonfg.md): besides, `time` is the namespace's `updatedAt` as a timestamp (null
 * without one), whatever property of that name the feature has, as it is the instant `datetime` selects on; `place` is
 * null, as `geometry` holds the geometry in CRS84, the only CRS served.
 */
export const jsonFgFeatureTexts = (texts: string | Buffer): Buffer => shapedTexts(texts, true);
