// Writes GeoJSON sequences, one Feature per line: newline-delimited as GDAL writes by default, or with RFC 8142 record separators for HTTP answers.
import type { Writable } from 'node:stream';
import type { FeatureText, FormatWriter, TransferFeature } from '../transfer-feature.js';
import { OutputBatch } from './output-stream.js';

const LINE_FEED = Buffer.from('\n');
const RECORD_SEPARATOR = Buffer.from('\u001e');

/** Feature texts are copied as they come (writeText) into batches, not parsed, serialized and written one by one. */
function sequenceWriter(out: Writable, before: Buffer | undefined): FormatWriter {
  const batch = new OutputBatch(out);
  return {
    async write(feature: TransferFeature) {
      if (before !== undefined) batch.add(before);
      batch.add(Buffer.from(JSON.stringify(feature)));
      batch.add(LINE_FEED);
      await batch.settle();
    },
    async writeText(text: FeatureText) {
      if (before !== undefined) batch.add(before);
      batch.addText(text);
      batch.add(LINE_FEED);
      await batch.settle();
    },
    end: () => batch.flush(),
  };
}

export const writeGeoJsonSeq = (out: Writable): FormatWriter => sequenceWriter(out, undefined);

/** GeoJSON text sequences as RFC 8142 and `application/geo+json-seq` say: each Feature after a record separator (0x1E), ending in a line feed. */
export const writeGeoJsonTextSeq = (out: Writable): FormatWriter => sequenceWriter(out, RECORD_SEPARATOR);
