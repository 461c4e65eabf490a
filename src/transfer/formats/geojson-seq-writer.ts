// Writes GeoJSON sequences, one Feature per line: newline-delimited as GDAL writes by default, or with RFC 8142 record separators for HTTP answers.
import type { WriterFactory } from '../transfer-feature.js';
import { put } from './output-stream.js';

export const writeGeoJsonSeq: WriterFactory = (out) => ({
  async write(feature) {
    await put(out, JSON.stringify(feature) + '\n');
  },
  async end() {},
});

/** GeoJSON text sequences as RFC 8142 and `application/geo+json-seq` say: each Feature after a record separator (0x1E), ending in a line feed. */
export const writeGeoJsonTextSeq: WriterFactory = (out) => ({
  async write(feature) {
    await put(out, `\u001e${JSON.stringify(feature)}\n`);
  },
  async end() {},
});
