// Writes FlatGeobuf: each feature is encoded as it arrives (flatgeobuf-feature.ts) into a temporary file, copied to the output after the header, which can only be built once every feature was seen (it lists every column's kind and the geometry type).
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import * as flatbuffers from 'flatbuffers';
import { hasOnly2DPositions, pad3D } from '../../geo/coordinates.js';
import type { Geometry } from '../../geo/geometry.js';
import { magicbytes } from 'flatgeobuf/lib/mjs/constants.js';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { parseGC, parseGeometry } from 'flatgeobuf/lib/mjs/geojson/geometry.js';
import type { ColumnMeta } from 'flatgeobuf/lib/mjs/column-meta.js';
import type { Geometry as GeoJsonGeometry } from 'geojson';
import type { IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';
import { type FeatureText, featureTextString, type TransferFeature, type WriterFactory } from '../transfer-feature.js';
import { scanStoredFeature, type StoredFeature } from './plain-feature-text.js';
import { encodedGeometry, FlatGeobufFeatureEncoder, NULL_GEOMETRY } from './flatgeobuf-feature.js';
import { FlatGeobufTextEncoder } from './flatgeobuf-text-encoder.js';
import { buildHeader } from './flatgeobuf-header.js';
import { OutputBatch, put } from './output-stream.js';
import { pointCoordinates } from './stored-feature-values.js';
import { ColumnKinds, type ValueKind } from './column-kinds.js';

const COLUMN_TYPES: Record<ValueKind, ColumnType> = {
  boolean: ColumnType.Bool, integer: ColumnType.Long, number: ColumnType.Double, string: ColumnType.String, json: ColumnType.Json,
};

const column = (name: string, type: ColumnType): ColumnMeta => ({
  name, type, title: null, description: null, width: -1, precision: -1, scale: -1, nullable: true, unique: false, primary_key: false,
});

/** The geometry as the library's parser gives it; in a 3D file a 2D geometry gets z = 0 (GDAL refuses a feature without Z data there). */
function parsedGeometry(geometry: Geometry | null, hasZ: boolean): IParsedGeometry {
  if (geometry === null) return NULL_GEOMETRY;
  const padded = (hasZ ? pad3D(geometry) : geometry) as GeoJsonGeometry;
  return padded.type === 'GeometryCollection' ? parseGC(padded) : parseGeometry(padded);
}

/** What parsedGeometry gives for a point of these coordinates (the library's type says ends and parts, which a point leaves undefined). */
const pointGeometry = (point: number[], hasZ: boolean): IParsedGeometry => ({
  xy: [point[0], point[1]], z: point.length > 2 ? [point[2]] : hasZ ? [0] : undefined, type: GeometryType.Point,
} as IParsedGeometry);

/** A line of text (a feature not written as a stored text) as encoded from: scanned where it has a stored text's shape, else parsed. */
function textFeature(line: Buffer): StoredFeature | TransferFeature {
  const scanned = scanStoredFeature(line, 0, line.length);
  return scanned?.end === line.length ? scanned : JSON.parse(line.toString('utf8')) as TransferFeature;
}

/** A run of features encoded while the columns kept their kinds and hasZ its value: where they start in the encoded file, and the column types and hasZ they were encoded with. */
interface Run {
  changes: number;
  encodedStart: number;
  types: readonly ColumnType[];
  hasZ: boolean;
}

/** The bytes [start, end) of a file, copied to the output. */
async function copyRange(out: Writable, file: string, start: number, end: number): Promise<void> {
  if (start >= end) return;
  for await (const chunk of createReadStream(file, { start, end: end - 1, highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) await put(out, chunk);
}

/** The size-prefixed features in the bytes [start, end) of a file: each one's offset in the file and its bytes. */
async function* encodedFeatures(file: string, start: number, end: number): AsyncIterable<[number, Uint8Array]> {
  if (start >= end) return;
  let rest: Buffer = Buffer.alloc(0);
  let offset = start;
  for await (const chunk of createReadStream(file, { start, end: end - 1, highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    const bytes = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let at = 0;
    for (; at + 4 <= bytes.length && at + 4 + bytes.readUInt32LE(at) <= bytes.length; at += 4 + bytes.readUInt32LE(at)) {
      // A copy: the library reads coordinates as Float64Arrays over the bytes, which the builder aligned from the size prefix on.
      yield [offset + at, new Uint8Array(bytes.subarray(at, at + 4 + bytes.readUInt32LE(at)))];
    }
    offset += at;
    rest = bytes.subarray(at);
  }
}

/**
 * Each feature is encoded as it arrives, with the columns' kinds and hasZ as they stand, into a file of encoded
 * features. The header (every column's final kind, the geometry type, the count) is written at the end, then the
 * encoded features are copied; the runs encoded before a column's kind changed or hasZ turned true are read back and
 * encoded again in the final kinds (usually the first few features: kinds settle early).
 */
export const writeFlatGeobuf: WriterFactory = (out) => {
  const dir = mkdtempSync(join(tmpdir(), 'spatial-hub-flatgeobuf-'));
  const encodedFile = join(dir, 'features.fgb');
  const encodedOut = createWriteStream(encodedFile);
  const encoded = new OutputBatch(encodedOut);
  const release = () => {
    encodedOut.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  const kinds = new ColumnKinds();
  /** The bytes handed to the file of encoded features; the current page (textEncoder) comes after them. */
  let encodedBytes = 0;
  const encoder = new FlatGeobufFeatureEncoder();
  const runs: Run[] = [];
  /**
   * Geometries with a position that is not 2D encoded while hasZ was false (their first position is 2D), by their
   * offset in the encoded file: which of their positions pad3D would pad cannot be told from the encoded z values. A hub
   * stores every position in 3D, so only other sources give them.
   */
  const mixed = new Map<number, Geometry>();
  let names: string[] = [];
  let columns: ColumnMeta[] = [];
  let types: ColumnType[] = [];
  let synced = -1;
  const syncColumns = () => {
    if (synced === kinds.typings) return;
    names = [...kinds.columns.keys()].filter((name) => name !== 'id');
    columns = [column('id', ColumnType.String), ...names.map((name) => column(name, COLUMN_TYPES[kinds.columns.get(name) ?? 'string']))];
    types = columns.map((meta) => meta.type);
    encoder.useColumns(names, types);
    textEncoder.useColumns(names, types);
    synced = kinds.typings;
  };
  /** A geometry of the feature at `offset` of the current page. */
  const geometryAt = (geometry: Geometry | null, offset: number): IParsedGeometry => {
    if (geometry !== null && !kinds.hasZ && !hasOnly2DPositions(geometry)) mixed.set(encodedBytes + offset, geometry);
    return parsedGeometry(geometry, kinds.hasZ);
  };
  const textEncoder = new FlatGeobufTextEncoder({ kinds, syncColumns, parsedGeometry: geometryAt, library: encoder });
  const geometryOf = (geometry: Geometry | null): IParsedGeometry => geometryAt(geometry, textEncoder.size);
  const encode = (feature: StoredFeature | TransferFeature): Uint8Array => {
    if ('members' in feature) {
      // A point is read from its text; any other geometry is parsed alone, not the whole feature.
      const point = pointCoordinates(feature.bytes, feature.geometryStart, feature.geometryEnd);
      const geometry = point !== undefined ? pointGeometry(point, kinds.hasZ)
        : geometryOf(JSON.parse(feature.bytes.toString('utf8', feature.geometryStart, feature.geometryEnd)) as Geometry | null);
      return encoder.encodeText(geometry, feature);
    }
    return encoder.encode(geometryOf(feature.geometry as Geometry | null), feature.id, feature.properties);
  };
  /** After a feature was encoded at `offset` of the page (its kinds noted): a new run where a kind changed with it. */
  const noteRun = (offset: number) => {
    let run = runs.at(-1);
    if (run?.changes !== kinds.changes) {
      run = { changes: kinds.changes, encodedStart: encodedBytes + offset, types, hasZ: kinds.hasZ };
      runs.push(run);
    }
    syncColumns();
    // Columns are added within a run but keep their kinds: the run's last types cover all its features.
    run.types = types;
  };
  /** A feature not given as a stored text, encoded as from its JSON text (the same values as the texts give, -0 and all). */
  const takeLine = (parsed: TransferFeature, line: Buffer) => {
    kinds.note(parsed);
    syncColumns();
    const offset = textEncoder.size;
    textEncoder.append(encode(textFeature(line)));
    noteRun(offset);
  };
  const takeText = (text: FeatureText) => {
    const offset = textEncoder.size;
    if (textEncoder.encode(text)) {
      noteRun(offset);
      return;
    }
    const line = Buffer.from(featureTextString(text));
    takeLine(JSON.parse(line.toString('utf8')) as TransferFeature, line);
  };
  /** The page's encoded features to the file. */
  const flushPage = () => {
    if (textEncoder.size === 0) return;
    const bytes = textEncoder.take();
    encoded.add(bytes);
    encodedBytes += bytes.length;
  };
  /** Encodes again, in the final column types and hasZ, a run encoded before a change. */
  async function* encodedAgain(run: Run, end: number): AsyncIterable<Uint8Array> {
    for await (const [offset, bytes] of encodedFeatures(encodedFile, run.encodedStart, end)) {
      const kept = mixed.get(offset);
      const geometry = kept !== undefined ? parsedGeometry(kept, kinds.hasZ)
        : encodedGeometry(Feature.getSizePrefixedRootAsFeature(new flatbuffers.ByteBuffer(bytes)).geometry(), kinds.hasZ && !run.hasZ);
      yield encoder.reencode(bytes, run.types, geometry);
    }
  }
  const end = async () => {
    flushPage();
    await encoded.flush();
    encodedOut.end();
    await finished(encodedOut);
    syncColumns();
    const geometryTypes = [...kinds.geometryTypes].filter((type) => type !== 'null');
    const single = geometryTypes.length === 1 ? (GeometryType as unknown as Record<string, GeometryType>)[geometryTypes[0]] : undefined;
    await put(out, magicbytes);
    await put(out, buildHeader({ geometryType: single ?? GeometryType.Unknown, hasZ: kinds.hasZ, columns, featuresCount: kinds.count }));
    const batch = new OutputBatch(out);
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i];
      const next = runs[i + 1]?.encodedStart ?? encodedBytes;
      if (run.changes === kinds.changes) {
        await batch.flush();
        await copyRange(out, encodedFile, run.encodedStart, next);
        continue;
      }
      for await (const bytes of encodedAgain(run, next)) {
        batch.add(bytes);
        await batch.settle();
      }
    }
    await batch.flush();
  };
  return {
    write: async (feature) => {
      takeLine(feature, Buffer.from(JSON.stringify(feature)));
      flushPage();
      await encoded.settle();
    },
    writeText: async (text) => {
      takeText(text);
      flushPage();
      await encoded.settle();
    },
    writeTexts: async (texts) => {
      for (const text of texts) takeText(text);
      flushPage();
      await encoded.settle();
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
