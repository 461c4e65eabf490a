// The feature texts OGC clients get: flat properties (the hub's namespace becomes createdAt, updatedAt and tags) and 2D where the hub padded z.
import { isObject } from '../../core/json.js';
import { stringEnd, valueEnd } from '../../core/json-text-scan.js';
import { zeroZDropped } from '../../geo/planar-text.js';
import { NS } from '../namespace.js';

/** How the hub writes every stored feature (feature-text.ts `compose`): these members first, in this order. */
const PREFIX = '{"type":"Feature","id":"';
const GEOMETRY = ',"geometry":';
const PROPERTIES = ',"properties":{';
const NS_KEY = JSON.stringify(NS);

/**
 * The namespace's members OGC clients see as plain properties, after the feature's own. A property of the same name
 * wins, as it does in filters (ogc-service.ts): a space holding its own `updatedAt` shows and filters on that.
 */
function hubMembers(namespace: unknown, taken: (key: string) => boolean): string[] {
  if (!isObject(namespace)) return [];
  const members: string[] = [];
  for (const key of ['createdAt', 'updatedAt'] as const) {
    const millis = namespace[key];
    const time = typeof millis === 'number' ? new Date(millis) : undefined;
    if (time && !Number.isNaN(time.getTime()) && !taken(key)) members.push(`"${key}":"${time.toISOString()}"`);
  }
  if (!taken('tags')) members.push(`"tags":${JSON.stringify(Array.isArray(namespace.tags) ? namespace.tags : [])}`);
  return members;
}

/** One feature from its parsed form, for a text not laid out as the hub writes it (never seen from storage; kept for safety). */
function parsedFeatureText(json: string): string {
  const { type: _type, id, geometry, properties, ...extra } = JSON.parse(json) as Record<string, unknown>;
  const { [NS]: namespace, ...own } = isObject(properties) ? properties : {};
  const ownText = JSON.stringify(own).slice(1, -1);
  const members = [...(ownText === '' ? [] : [ownText]), ...hubMembers(namespace, (key) => key in own)];
  const extraText = JSON.stringify(extra).slice(1, -1);
  return `{"type":"Feature"${id === undefined ? '' : `,"id":${JSON.stringify(id)}`},"geometry":${zeroZDropped(JSON.stringify(geometry ?? null))}`
    + `,"properties":{${members.join(',')}}${extraText === '' ? '' : `,${extraText}`}}`;
}

/** Thrown inside the fast path when the text is not laid out as expected; the feature is then parsed. */
class UnexpectedLayout extends Error {}

const expect = (text: string, at: number, part: string) => {
  if (!text.startsWith(part, at)) throw new UnexpectedLayout();
  return at + part.length;
};

/** The members of the object whose first member starts at `at` (just after its `{`): their [start, end) and the index after the `}`. */
function members(text: string, at: number): { spans: Array<[number, number, number]>; end: number } {
  const spans: Array<[number, number, number]> = [];
  if (text[at] === '}') return { spans, end: at + 1 };
  for (;;) {
    if (text[at] !== '"') throw new UnexpectedLayout();
    const keyEnd = stringEnd(text, at);
    const valueStart = expect(text, keyEnd, ':');
    const end = valueEnd(text, valueStart);
    spans.push([at, keyEnd, end]);
    if (text[end] === '}') return { spans, end: end + 1 };
    at = expect(text, end, ',');
  }
}

/** The feature that starts at `start` as OGC clients get it, and the index after it. Reads the text once, parsing only the namespace. */
function shapedFeature(text: string, start: number): { json: string; end: number } {
  try {
    const idStart = expect(text, start, PREFIX) - 1;
    const geometryStart = expect(text, stringEnd(text, idStart), GEOMETRY);
    const geometryEnd = valueEnd(text, geometryStart);
    const properties = members(text, expect(text, geometryEnd, PROPERTIES));
    const extra = text[properties.end] === ',' ? members(text, properties.end + 1) : { spans: [], end: expect(text, properties.end, '}') };
    const own: string[] = [];
    const keys = new Set<string>();
    let namespace: unknown;
    for (const [keyStart, keyEnd, end] of properties.spans) {
      const key = text.slice(keyStart, keyEnd);
      if (key === NS_KEY) namespace = JSON.parse(text.slice(keyEnd + 1, end));
      else {
        own.push(text.slice(keyStart, end));
        keys.add(key);
      }
    }
    const shown = [...own, ...hubMembers(namespace, (name) => keys.has(`"${name}"`))];
    const extraText = extra.spans.length === 0 ? '' : `,${text.slice(extra.spans[0][0], extra.end - 1)}`;
    const json = `${text.slice(start, geometryStart)}${zeroZDropped(text.slice(geometryStart, geometryEnd))},"properties":{${shown.join(',')}}${extraText}}`;
    return { json, end: extra.end };
  } catch (error) {
    if (!(error instanceof UnexpectedLayout)) throw error;
    const end = valueEnd(text, start);
    return { json: parsedFeatureText(text.slice(start, end)), end };
  }
}

/**
 * Stored feature texts, one or several joined by commas (a page as storage reads it), as OGC clients get them:
 * - the hub's namespace `@ns:com:here:xyz` is not a property: OGC clients expect flat, typed columns, and QGIS showed it
 *   as one column holding an object. Its times become `createdAt` and `updatedAt` (ISO 8601) and its tags `tags` (an
 *   array of strings), unless the feature has its own property of that name;
 * - positions are 2D when the hub padded them: every z of the feature is 0 (docs/ogc-output.md).
 */
export function ogcFeatureTexts(texts: string): string {
  if (texts === '') return texts;
  const shaped: string[] = [];
  let at = 0;
  for (;;) {
    const { json, end } = shapedFeature(texts, at);
    shaped.push(json);
    if (end >= texts.length) return shaped.join(',');
    at = expect(texts, end, ',');
  }
}
