// Streams the features of a GeoJSON file (a FeatureCollection or one Feature) without holding the file: stream-json tokens, one feature assembled at a time.
import parserStream, { parser } from 'stream-json';
import Assembler from 'stream-json/assembler.js';
import { type FormatReader, InputError, toFeature } from '../transfer-feature.js';

export const readGeoJson: FormatReader = async function* (source, options) {
  // packed values only: the chunked tokens would double the work for no use here.
  const tokens = source.open().pipe(parserStream({ streamValues: false }));
  /** Everything outside the features array (type, name, crs …, or a whole single Feature). */
  const top = new Assembler();
  let feature: Assembler | undefined;
  let depth = 0;
  let inFeatures = false;
  let lastKey = '';
  let index = 0;
  let started = false;
  try {
    for await (const token of tokens as AsyncIterable<parser.Token>) {
      started = true;
      if (feature) {
        feature.consume(token);
        if (feature.done) {
          const result = toFeature(feature.current, options.idProperty);
          yield typeof result === 'string' ? { error: result, position: `feature ${index}` } : { feature: result, position: `feature ${index}` };
          index++;
          feature = undefined;
        }
        continue;
      }
      if (inFeatures) {
        if (token.name === 'endArray') {
          inFeatures = false;
          depth--;
          top.consume({ name: 'nullValue', value: null });
          continue;
        }
        feature = new Assembler();
        feature.consume(token);
        if (feature.done) throw new InputError('not a GeoJSON Feature (expected an object)', `feature ${index}`);
        continue;
      }
      if (token.name === 'keyValue') lastKey = token.value;
      if (token.name === 'startArray' && depth === 1 && lastKey === 'features') {
        inFeatures = true;
        depth++;
        continue;
      }
      if (token.name === 'startObject' || token.name === 'startArray') depth++;
      if (token.name === 'endObject' || token.name === 'endArray') depth--;
      top.consume(token);
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    // An empty file (or only white space) is an empty load, as an empty FeatureCollection is.
    if (!started) return;
    throw new InputError(`the GeoJSON is not valid or ends early (${(error as Error).message})`, feature || index === 0 ? `feature ${index}` : `after feature ${index - 1}`);
  }
  if (feature || depth !== 0) throw new InputError('the GeoJSON ends in the middle of a value', `feature ${index}`);
  const value = top.current as { type?: unknown } | null;
  if (value === null) return; // an empty file
  if (value.type === 'Feature') {
    const result = toFeature(value, options.idProperty);
    if (typeof result === 'string') throw new InputError(result, 'feature 0');
    yield { feature: result, position: 'feature 0' };
  } else if (value.type !== 'FeatureCollection') {
    throw new InputError('the GeoJSON is neither a FeatureCollection nor a Feature', 'the top-level object');
  }
};
