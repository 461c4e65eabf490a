// Writes FlatGeobuf: each feature is encoded as it arrives (flatgeobuf-feature.ts); the header, which can only be built once every feature was seen (it lists every column's kind and the geometry type), goes into room left for it before the features in a regular file, or before a copy of them from a temporary file otherwise.
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open, truncate } from 'node:fs/promises';
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
 * Bytes left for the header beyond what it takes when the first page is written: room for the columns a later page
 * adds (a column costs its name and about 30 bytes) and for the geometry type, which the header leaves out while the
 * types differ. A header that outgrows it is written as on a pipe (below).
 */
const HEADER_ROOM = 1024;

/** The header padded with zeros after its tables to `length` bytes, its size prefix saying so (a flatbuffer's reader follows offsets from the root and never reads the rest). */
function paddedHeader(header: Uint8Array, length: number): Uint8Array {
  const padded = Buffer.alloc(length);
  padded.set(header);
  padded.writeUInt32LE(length - 4, 0);
  return padded;
}

/** Resolves once every write handed to the stream before it is done (a write of nothing queues behind them). */
const written = (out: Writable): Promise<void> => new Promise((resolve, reject) => out.write(Buffer.alloc(0), (error) => (error ? reject(error) : resolve())));

/**
 * Each feature is encoded as it arrives, with the columns' kinds and hasZ as they stand. Into a regular file
 * (`options.file`) the encoded features go straight after room left for the header (the magic bytes, then the header as
 * it would be after the first page, and HEADER_ROOM), and at the end the final header (every column's final kind, the
 * geometry type, the count) is written into that room, padded to fill it. Elsewhere (stdout, a pipe), and when a run
 * is stale or the header does not fit, the encoded features are kept in a temporary file and copied after the header;
 * the runs encoded before a column's kind changed or hasZ turned true are read back and encoded again in the final
 * kinds (usually the first few features: kinds settle early). The file has no spatial index (index_node_size 0), which
 * readers (GDAL, the flatgeobuf library) read in full, as a stream.
 */
export const writeFlatGeobuf: WriterFactory = (out, options) => {
  /** The temporary directory, made when first needed. */
  let dir: string | undefined;
  const temporaryFile = () => {
    dir ??= mkdtempSync(join(tmpdir(), 'spatial-hub-flatgeobuf-'));
    return join(dir, 'features.fgb');
  };
  /** Where the encoded features go: the output after the header's room (start > 0), or a temporary file; set by the first page. */
  let target: { file: string; stream: Writable; batch: OutputBatch; start: number } | undefined;
  const release = () => {
    if (target !== undefined && target.stream !== out) target.stream.destroy();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
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
  /** The header of the features seen so far: every column's kind, the geometry type, hasZ, the count. */
  const headerNow = () => {
    syncColumns();
    const geometryTypes = [...kinds.geometryTypes].filter((type) => type !== 'null');
    const single = geometryTypes.length === 1 ? (GeometryType as unknown as Record<string, GeometryType>)[geometryTypes[0]] : undefined;
    return buildHeader({ geometryType: single ?? GeometryType.Unknown, hasZ: kinds.hasZ, columns, featuresCount: kinds.count });
  };
  /** Where the first page's features go: after room for the header in a regular file, else a temporary file. */
  const targetOf = (): NonNullable<typeof target> => {
    if (options?.file !== undefined && statSync(options.file, { throwIfNoEntry: false })?.isFile() === true) {
      // The header now has the count (never 0 here, so present) and the columns so far; 8-aligned, as the builder ends it.
      const start = magicbytes.length + headerNow().length + HEADER_ROOM;
      const batch = new OutputBatch(out);
      batch.add(magicbytes);
      batch.add(Buffer.alloc(start - magicbytes.length));
      return { file: options.file, stream: out, batch, start };
    }
    const file = temporaryFile();
    const stream = createWriteStream(file);
    return { file, stream, batch: new OutputBatch(stream), start: 0 };
  };
  /** The page's encoded features to their target. */
  const flushPage = () => {
    if (textEncoder.size === 0) return;
    const bytes = textEncoder.take();
    target ??= targetOf();
    target.batch.add(bytes);
    encodedBytes += bytes.length;
  };
  /** Encodes again, in the final column types and hasZ, a run encoded before a change. */
  async function* encodedAgain(encodedFile: string, run: Run, end: number): AsyncIterable<Uint8Array> {
    for await (const [offset, bytes] of encodedFeatures(encodedFile, run.encodedStart, end)) {
      const kept = mixed.get(offset);
      const geometry = kept !== undefined ? parsedGeometry(kept, kinds.hasZ)
        : encodedGeometry(Feature.getSizePrefixedRootAsFeature(new flatbuffers.ByteBuffer(bytes)).geometry(), kinds.hasZ && !run.hasZ);
      yield encoder.reencode(bytes, run.types, geometry);
    }
  }
  /** The header, then the encoded features of `encodedFile` (offsets as in encodedBytes), the stale runs encoded again. */
  const writeWhole = async (to: Writable, encodedFile: string) => {
    await put(to, magicbytes);
    await put(to, headerNow());
    const batch = new OutputBatch(to);
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i];
      const next = runs[i + 1]?.encodedStart ?? encodedBytes;
      if (run.changes === kinds.changes) {
        await batch.flush();
        await copyRange(to, encodedFile, run.encodedStart, next);
        continue;
      }
      for await (const bytes of encodedAgain(encodedFile, run, next)) {
        batch.add(bytes);
        await batch.settle();
      }
    }
    await batch.flush();
  };
  /** The features are in the output after the header's room: the header into it, or (a stale run, a header too long) the file written again from a copy of them. */
  const endInPlace = async (file: string, start: number) => {
    await written(out);
    const header = headerNow();
    if (runs.every((run) => run.changes === kinds.changes) && magicbytes.length + header.length <= start) {
      const handle = await open(file, 'r+');
      try {
        await handle.write(Buffer.concat([magicbytes, paddedHeader(header, start - magicbytes.length)]), 0, start, 0);
      } finally {
        await handle.close();
      }
      return;
    }
    const copy = temporaryFile();
    const copied = createWriteStream(copy);
    await copyRange(copied, file, start, start + encodedBytes);
    copied.end();
    await finished(copied);
    const again = createWriteStream(file, { flags: 'r+', start: 0 });
    await writeWhole(again, copy);
    again.end();
    await finished(again);
    await truncate(file, again.bytesWritten);
  };
  const end = async () => {
    flushPage();
    if (target === undefined) {
      // No feature: the header alone, no file of features to read.
      await writeWhole(out, '');
      return;
    }
    await target.batch.flush();
    if (target.start > 0) {
      await endInPlace(target.file, target.start);
      return;
    }
    target.stream.end();
    await finished(target.stream);
    await writeWhole(out, target.file);
  };
  return {
    write: async (feature) => {
      takeLine(feature, Buffer.from(JSON.stringify(feature)));
      flushPage();
      await target?.batch.settle();
    },
    writeText: async (text) => {
      takeText(text);
      flushPage();
      await target?.batch.settle();
    },
    writeTexts: async (texts) => {
      for (const text of texts) takeText(text);
      flushPage();
      await target?.batch.settle();
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
