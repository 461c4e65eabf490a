// Writes FlatGeobuf: each feature is encoded as it arrives (flatgeobuf-feature.ts) into a temporary file, copied to the output after the header, which can only be built once every feature was seen (it lists every column's kind and the geometry type).
import { createReadStream, createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { pad3D } from '../../geo/coordinates.js';
import type { Geometry } from '../../geo/geometry.js';
import { magicbytes } from 'flatgeobuf/lib/mjs/constants.js';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { parseGC, parseGeometry } from 'flatgeobuf/lib/mjs/geojson/geometry.js';
import type { ColumnMeta } from 'flatgeobuf/lib/mjs/column-meta.js';
import type { Geometry as GeoJsonGeometry } from 'geojson';
import type { IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';
import { type FeatureText, featureTextString, type TransferFeature, type WriterFactory } from '../transfer-feature.js';
import type { StoredFeature } from './plain-feature-text.js';
import { FlatGeobufFeatureEncoder } from './flatgeobuf-feature.js';
import { buildHeader } from './flatgeobuf-header.js';
import { OutputBatch, put } from './output-stream.js';
import { pointCoordinates } from './stored-feature-values.js';
import { Spool, spooledFeature, type ValueKind } from './spool.js';

const COLUMN_TYPES: Record<ValueKind, ColumnType> = {
  boolean: ColumnType.Bool, integer: ColumnType.Long, number: ColumnType.Double, string: ColumnType.String, json: ColumnType.Json,
};

const column = (name: string, type: ColumnType): ColumnMeta => ({
  name, type, title: null, description: null, width: -1, precision: -1, scale: -1, nullable: true, unique: false, primary_key: false,
});

/** The geometry as the library's parser gives it; in a 3D file a 2D geometry gets z = 0 (GDAL refuses a feature without Z data there). */
function parsedGeometry(geometry: Geometry | null, hasZ: boolean): IParsedGeometry {
  if (geometry === null) return { xy: [], ends: [], parts: [], type: GeometryType.Unknown };
  const padded = (hasZ ? pad3D(geometry) : geometry) as GeoJsonGeometry;
  return padded.type === 'GeometryCollection' ? parseGC(padded) : parseGeometry(padded);
}

/** What parsedGeometry gives for a point of these coordinates (the library's type says ends and parts, which a point leaves undefined). */
const pointGeometry = (point: number[], hasZ: boolean): IParsedGeometry => ({
  xy: [point[0], point[1]], z: point.length > 2 ? [point[2]] : hasZ ? [0] : undefined, type: GeometryType.Point,
} as IParsedGeometry);

/** A run of features encoded while the spool's columns kept their kinds and hasZ its value: where they start in the encoded file and in the spool's text. */
interface Run {
  changes: number;
  encodedStart: number;
  textStart: number;
}

/** The bytes [start, end) of a file, copied to the output. */
async function copyRange(out: Writable, file: string, start: number, end: number): Promise<void> {
  if (start >= end) return;
  for await (const chunk of createReadStream(file, { start, end: end - 1, highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) await put(out, chunk);
}

/**
 * Each feature is encoded as it arrives, with the columns' kinds and hasZ as they stand, into a file of encoded features,
 * and spooled as text too. The header (every column's final kind, the geometry type, the count) is written at the end,
 * then the encoded features are copied; the runs encoded before a column's kind changed or hasZ turned true are encoded
 * again from their spooled texts (usually the first few features: kinds settle early).
 */
export const writeFlatGeobuf: WriterFactory = (out) => {
  const spool = new Spool();
  const encodedFile = spool.path('features.fgb');
  const encodedOut = createWriteStream(encodedFile);
  const encoded = new OutputBatch(encodedOut);
  const release = () => {
    encodedOut.destroy();
    spool.remove();
  };
  let encodedBytes = 0;
  const encoder = new FlatGeobufFeatureEncoder();
  const runs: Run[] = [];
  let names: string[] = [];
  let columns: ColumnMeta[] = [];
  const synced = { columns: -1, changes: -1 };
  const syncColumns = () => {
    if (synced.columns === spool.columns.size && synced.changes === spool.changes) return;
    names = [...spool.columns.keys()].filter((name) => name !== 'id');
    columns = [column('id', ColumnType.String), ...names.map((name) => column(name, COLUMN_TYPES[spool.columns.get(name) ?? 'string']))];
    encoder.useColumns(names, columns.map((meta) => meta.type));
    synced.columns = spool.columns.size;
    synced.changes = spool.changes;
  };
  const encode = (feature: StoredFeature | TransferFeature): Uint8Array => {
    if ('members' in feature) {
      // A point is read from its text; any other geometry is parsed alone, not the whole feature.
      const point = pointCoordinates(feature.bytes, feature.geometryStart, feature.geometryEnd);
      const geometry = point !== undefined ? pointGeometry(point, spool.hasZ)
        : parsedGeometry(JSON.parse(feature.bytes.toString('utf8', feature.geometryStart, feature.geometryEnd)) as Geometry | null, spool.hasZ);
      return encoder.encodeText(geometry, feature);
    }
    return encoder.encode(parsedGeometry(feature.geometry as Geometry | null, spool.hasZ), feature.id, feature.properties);
  };
  /** Encodes a feature the spool has just taken (its line began at `textStart`), as the replay of that line would give it. */
  const take = (textStart: number, feature: StoredFeature | TransferFeature) => {
    if (runs.at(-1)?.changes !== spool.changes) runs.push({ changes: spool.changes, encodedStart: encodedBytes, textStart });
    syncColumns();
    const bytes = encode(feature);
    encoded.add(bytes);
    encodedBytes += bytes.length;
  };
  const takeText = (text: FeatureText) => {
    const textStart = spool.spooled;
    spool.take(text);
    // A stored text gives what its spooled line (the same text without the namespace) gives when scanned again.
    if ((text as Partial<StoredFeature>).members !== undefined) take(textStart, text as StoredFeature);
    else {
      const line = Buffer.from(featureTextString(text));
      take(textStart, spooledFeature(line, 0, line.length));
    }
  };
  // Both at once: a drain of one file that came while waiting for the other would be missed.
  const settle = () => Promise.all([spool.settle(), encoded.settle()]);
  const end = async () => {
    await spool.end();
    await encoded.flush();
    encodedOut.end();
    await finished(encodedOut);
    syncColumns();
    const types = [...spool.geometryTypes].filter((type) => type !== 'null');
    const single = types.length === 1 ? (GeometryType as unknown as Record<string, GeometryType>)[types[0]] : undefined;
    await put(out, magicbytes);
    await put(out, buildHeader({ geometryType: single ?? GeometryType.Unknown, hasZ: spool.hasZ, columns, featuresCount: spool.count }));
    const batch = new OutputBatch(out);
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i];
      const next = runs[i + 1];
      if (run.changes === spool.changes) {
        await batch.flush();
        await copyRange(out, encodedFile, run.encodedStart, next?.encodedStart ?? encodedBytes);
        continue;
      }
      for await (const feature of spool.replayTexts(run.textStart, next?.textStart ?? spool.spooled)) {
        batch.add(encode(feature));
        await batch.settle();
      }
    }
    await batch.flush();
  };
  return {
    write: async (feature) => {
      const textStart = spool.spooled;
      const line = spool.takeFeature(feature);
      take(textStart, spooledFeature(line, 0, line.length));
      await settle();
    },
    writeText: async (text) => {
      takeText(text);
      await settle();
    },
    writeTexts: async (texts) => {
      for (const text of texts) takeText(text);
      await settle();
    },
    end: async () => {
      try {
        await end();
      } finally {
        release();
      }
    },
    release,
  };
};
