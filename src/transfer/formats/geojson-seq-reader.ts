// Reads GeoJSONSeq / newline-delimited GeoJSON: one Feature per line (RFC 8142 record separators allowed), line by line; the items a resumed load skips are not parsed.
import { createInterface } from 'node:readline';
import { type FormatReader, sendsAsRead, toFeature } from '../transfer-feature.js';

export const readGeoJsonSeq: FormatReader = async function* (source, options) {
  let line = 0;
  let skip = options.skip ?? 0;
  for await (const raw of createInterface({ input: source.open(), crlfDelay: Infinity })) {
    line++;
    const text = raw.replace(/^\uFEFF/, '').replace(/\u001e/g, '').trim();
    if (text === '') continue;
    // Every non-empty line is one item, a feature or a bad record: it is counted without being read.
    if (skip > 0) {
      skip--;
      continue;
    }
    const position = `line ${line}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      yield { error: `not valid JSON (${(error as Error).message})`, position };
      continue;
    }
    const result = toFeature(value, options.idProperty);
    if (typeof result === 'string') yield { error: result, position };
    else yield sendsAsRead(value, options.idProperty) ? { feature: result, position, text } : { feature: result, position };
  }
};
