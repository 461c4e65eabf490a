// Writes a GeoJSON FeatureCollection feature by feature, never holding the collection; feature texts are copied as they come.
import type { WriterFactory } from '../transfer-feature.js';
import { OutputBatch } from './output-stream.js';

const OPEN = Buffer.from('{"type":"FeatureCollection","features":[\n');
const BETWEEN = Buffer.from(',\n');

export const writeGeoJson: WriterFactory = (out) => {
  const batch = new OutputBatch(out);
  let first = true;
  const next = () => {
    batch.add(first ? OPEN : BETWEEN);
    first = false;
  };
  return {
    async write(feature) {
      next();
      batch.add(Buffer.from(JSON.stringify(feature)));
      await batch.settle();
    },
    async writeText(text) {
      next();
      batch.addText(text);
      await batch.settle();
    },
    async end() {
      batch.add(Buffer.from(first ? '{"type":"FeatureCollection","features":[]}\n' : '\n]}\n'));
      await batch.flush();
    },
    release() {
      // Nothing kept aside: every feature went to the output as it came.
    },
  };
};
