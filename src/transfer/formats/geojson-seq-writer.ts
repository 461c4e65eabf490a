// Writes GeoJSON sequences, one Feature per line: newline-delimited as GDAL writes by default, or with RFC 8142 record separators for HTTP answers.
import type { Writable } from 'node:stream';
import { LINE_FEED, RECORD_SEPARATOR } from '../../core/json-bytes.js';
import type { FeatureText, FormatWriter, TransferFeature } from '../transfer-feature.js';
import { OutputBatch, put } from './output-stream.js';

/** Feature texts are copied as they come (writeText, writeTexts) into batches, not parsed, serialized and written one by one. */
function sequenceWriter(out: Writable, before: number | undefined): FormatWriter {
  const batch = new OutputBatch(out);
  const add = (text: FeatureText) => {
    if (before !== undefined) batch.addByte(before);
    batch.addText(text);
    batch.addByte(LINE_FEED);
  };
  return {
    async write(feature: TransferFeature) {
      if (before !== undefined) batch.addByte(before);
      batch.add(Buffer.from(JSON.stringify(feature)));
      batch.addByte(LINE_FEED);
      await batch.settle();
    },
    async writeText(text: FeatureText) {
      add(text);
      await batch.settle();
    },
    async writeTexts(texts: readonly FeatureText[]) {
      texts.forEach(add);
      await batch.settle();
    },
    // A page already in this form (plain pages are RFC 8142 sequences) goes out after what came before it, without a copy.
    ...(before === RECORD_SEPARATOR ? {
      async writeSequence(sequence: Buffer) {
        await batch.flush();
        await put(out, sequence);
      },
    } : {}),
    end: () => batch.flush(),
    release() {
      // Nothing kept aside: every feature went to the output as it came.
    },
  };
}

export const writeGeoJsonSeq = (out: Writable): FormatWriter => sequenceWriter(out, undefined);

/** GeoJSON text sequences as RFC 8142 and `application/geo+json-seq` say: each Feature after a record separator (0x1E), ending in a line feed. */
export const writeGeoJsonTextSeq = (out: Writable): FormatWriter => sequenceWriter(out, RECORD_SEPARATOR);

/**
 * Writes a hub's `application/geo+json-seq` answer (RFC 8142: each record after a record separator, ending in a line
 * feed) as the newline-delimited sequence writeGeoJsonSeq writes, by dropping the separators: JSON text never holds a
 * raw 0x1E (control characters are escaped in strings), so every one starts a record. The body is compacted in place
 * and written at once. Returns the number of records.
 */
export async function writeTextSeqAsLines(out: Writable, body: Buffer): Promise<number> {
  let records = 0;
  let at = body.indexOf(RECORD_SEPARATOR);
  // Bytes before the first separator (none in a hub's answer) stay where they are.
  let kept = at < 0 ? body.length : at;
  while (at >= 0) {
    records++;
    const next = body.indexOf(RECORD_SEPARATOR, at + 1);
    const end = next < 0 ? body.length : next;
    body.copyWithin(kept, at + 1, end);
    kept += end - at - 1;
    at = next;
  }
  if (kept > 0) await put(out, body.subarray(0, kept));
  return records;
}
