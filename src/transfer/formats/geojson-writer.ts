// Writes a GeoJSON FeatureCollection feature by feature, never holding the collection.
import type { WriterFactory } from '../transfer-feature.js';
import { put } from './output-stream.js';

export const writeGeoJson: WriterFactory = (out) => {
  let first = true;
  return {
    async write(feature) {
      await put(out, (first ? '{"type":"FeatureCollection","features":[\n' : ',\n') + JSON.stringify(feature));
      first = false;
    },
    async end() {
      await put(out, first ? '{"type":"FeatureCollection","features":[]}\n' : '\n]}\n');
    },
  };
};
