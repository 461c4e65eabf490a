// Writes newline-delimited GeoJSON (GeoJSONSeq without record separators, as GDAL's GeoJSONSeq driver writes by default): one Feature per line.
import type { WriterFactory } from '../transfer-feature.js';
import { put } from './output-stream.js';

export const writeGeoJsonSeq: WriterFactory = (out) => ({
  async write(feature) {
    await put(out, JSON.stringify(feature) + '\n');
  },
  async end() {},
});
