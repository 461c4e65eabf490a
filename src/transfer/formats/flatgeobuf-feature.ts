// Encodes FlatGeobuf features as the library's buildFeature does, but with one builder and one property buffer for every feature and the values read straight from the feature or from its stored text (no per-feature builder, property object or TextEncoder copy).
import * as flatbuffers from 'flatbuffers';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import type { Geometry as EncodedGeometry } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { buildGeometry, type IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';
import { NULL_START, TRUE_START } from '../../core/json-bytes.js';
import type { StoredFeature } from './plain-feature-text.js';
import { hasEscape, numberAt, TokenNames } from './stored-feature-values.js';

const TWO_TO_32 = 2 ** 32;
const utf8 = new TextDecoder();

/** What the encoder is given for a feature without a geometry. */
export const NULL_GEOMETRY: IParsedGeometry = Object.freeze({ xy: [], ends: [], parts: [], type: GeometryType.Unknown }) as IParsedGeometry;

/**
 * A feature without a geometry is written without the geometry table, as the format's schema allows: GDAL (3.6) fails
 * on a geometry table without positions ("Unexpected nullptr: XY data") and stops reading the file there.
 */
const isNullGeometry = (geometry: IParsedGeometry): boolean =>
  geometry.type === GeometryType.Unknown && geometry.xy.length === 0 && (geometry.parts?.length ?? 0) === 0;

/**
 * The geometry an encoded feature holds, as parsedGeometry() gave it to the encoder: a null geometry, a multipolygon
 * and a collection as their parts, any other as its positions (ends where there were several rings or lines); `padZ`
 * gives 2D positions z = 0 (pad3D's result for a geometry whose positions are all 2D).
 */
export function encodedGeometry(geometry: EncodedGeometry | null, padZ: boolean): IParsedGeometry {
  if (geometry === null) return NULL_GEOMETRY;
  const type = geometry.type();
  if (type === GeometryType.Unknown || type === GeometryType.MultiPolygon || type === GeometryType.GeometryCollection) {
    const parts = Array.from({ length: geometry.partsLength() }, (_, i) => encodedGeometry(geometry.parts(i) as EncodedGeometry, padZ));
    return type === GeometryType.Unknown ? { xy: [], ends: [], parts, type } : { type, parts } as IParsedGeometry;
  }
  const xy = Array.from(geometry.xyArray() ?? []);
  const z = geometry.zArray();
  const ends = geometry.endsArray();
  return {
    xy, z: z !== null ? Array.from(z) : padZ && xy.length > 0 ? new Array<number>(xy.length / 2).fill(0) : undefined,
    ends: ends !== null ? Array.from(ends) : undefined, type,
  } as IParsedGeometry;
}
/** Values up to this many bytes are copied byte by byte. */
const SHORT_COPY = 32;

export class FlatGeobufFeatureEncoder {
  private readonly builder = new flatbuffers.Builder(1024);
  private properties = Buffer.allocUnsafe(1024);
  private offset = 0;
  /** The type of each column: [0] is the id's, [i + 1] that of propertyNames[i]. */
  private types: ColumnType[] = [ColumnType.String];
  private propertyNames: readonly string[] = [];
  /** The column of each property name; 0 (the id's) for a name without one (a property named `id`). */
  private readonly columnOf = new Map<string, number>();
  private readonly keys = new TokenNames();
  /** Per column, where the current text's value is, valid where `stamp` holds the current feature's number. */
  private readonly valueStart: number[] = [0];
  private readonly valueEnd: number[] = [0];
  private readonly stamp: number[] = [-1];
  private features = 0;

  /**
   * The columns as they stand: the id, then the properties `names` in `types` (the id's type first). Names are only
   * added at the end, so a column keeps its index while an export's columns grow; types may change between calls.
   */
  useColumns(names: readonly string[], types: ColumnType[]): void {
    for (let i = this.propertyNames.length; i < names.length; i++) {
      this.columnOf.set(names[i], i + 1);
      this.valueStart.push(0);
      this.valueEnd.push(0);
      this.stamp.push(-1);
    }
    this.propertyNames = names;
    this.types = types;
  }

  /** The size-prefixed feature; the bytes are the builder's and change with the next call, so the caller copies them. */
  encode(geometry: IParsedGeometry, id: string | undefined, properties: Record<string, unknown>): Uint8Array {
    this.offset = 0;
    for (let i = 0; i < this.types.length; i++) {
      const value = i === 0 ? id : properties[this.propertyNames[i - 1]];
      if (value !== null && value !== undefined) this.property(i, this.types[i], value);
    }
    return this.finish(geometry);
  }

  /**
   * The same feature as encode() gives for the parsed text, with the id and the values read from the text's bytes: in the
   * columns' order, strings without escapes and JSON values copied as they are (the hub's texts are JSON.stringify's).
   */
  encodeText(geometry: IParsedGeometry, text: StoredFeature): Uint8Array {
    const { bytes, members } = text;
    const feature = this.features++;
    for (let i = 0; i < members.length; i += 4) {
      const column = this.columnOf.get(this.keys.of(bytes, members[i], members[i + 1], i / 4)) ?? 0;
      if (column === 0 || bytes[members[i + 2]] === NULL_START) continue;
      this.stamp[column] = feature;
      this.valueStart[column] = members[i + 2];
      this.valueEnd[column] = members[i + 3];
    }
    this.offset = 0;
    this.tokenProperty(0, ColumnType.String, bytes, text.idStart, text.idEnd);
    for (let column = 1; column < this.types.length; column++) {
      if (this.stamp[column] === feature) this.tokenProperty(column, this.types[column], bytes, this.valueStart[column], this.valueEnd[column]);
    }
    return this.finish(geometry);
  }

  /**
   * A feature this encoder gave (`encoded`, size-prefixed) when the columns had the types `from`, in the
   * columns' types now, with `geometry`: what encode() gives for the feature it came from. A column's kind only widens
   * (Long to Double, anything to Json), so a value is copied where its type stayed and converted where it widened.
   */
  reencode(encoded: Uint8Array, from: readonly ColumnType[], geometry: IParsedGeometry): Uint8Array {
    const values = Feature.getSizePrefixedRootAsFeature(new flatbuffers.ByteBuffer(encoded)).propertiesArray();
    const view = values === null ? undefined : Buffer.from(values.buffer, values.byteOffset, values.length);
    this.offset = 0;
    for (let at = 0; view !== undefined && at < view.length;) {
      const index = view.readUInt16LE(at);
      const type = from[index];
      const start = at + 2;
      const end = type === ColumnType.Bool ? start + 1 : type === ColumnType.Long || type === ColumnType.Double ? start + 8 : start + 4 + view.readUInt32LE(start);
      at = end;
      if (this.types[index] === type) {
        this.room(2 + end - start);
        this.offset = this.properties.writeUInt16LE(index, this.offset);
        this.offset += view.copy(this.properties, this.offset, start, end);
        continue;
      }
      const value = type === ColumnType.Bool ? view[start] === 1
        : type === ColumnType.Long ? view.readUInt32LE(start) + view.readInt32LE(start + 4) * TWO_TO_32
        : type === ColumnType.Double ? view.readDoubleLE(start)
        : type === ColumnType.Json ? JSON.parse(utf8.decode(view.subarray(start + 4, end))) as unknown
        : utf8.decode(view.subarray(start + 4, end));
      this.property(index, this.types[index], value);
    }
    return this.finish(geometry);
  }

  private finish(geometry: IParsedGeometry): Uint8Array {
    return this.build(geometry, this.properties.subarray(0, this.offset));
  }

  /** The size-prefixed feature of this geometry and these encoded properties (the bytes are the builder's, as encode's). */
  build(geometry: IParsedGeometry, properties: Uint8Array): Uint8Array {
    const builder = this.builder;
    builder.clear();
    const propertiesOffset = properties.length > 0 ? builder.createByteVector(properties) : 0;
    const geometryOffset = isNullGeometry(geometry) ? 0 : buildGeometry(builder, geometry);
    Feature.startFeature(builder);
    if (geometryOffset) Feature.addGeometry(builder, geometryOffset);
    if (propertiesOffset) Feature.addProperties(builder, propertiesOffset);
    builder.finishSizePrefixed(Feature.endFeature(builder));
    return builder.asUint8Array();
  }

  private room(size: number): void {
    if (this.offset + size <= this.properties.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.properties.length * 2, this.offset + size));
    this.properties.copy(bigger, 0, 0, this.offset);
    this.properties = bigger;
  }

  /** The column's index, then the value of the JSON token [start, end) in the column's type. */
  private tokenProperty(index: number, type: ColumnType, bytes: Buffer, start: number, end: number): void {
    switch (type) {
      case ColumnType.Bool:
        return this.property(index, type, bytes[start] === TRUE_START);
      case ColumnType.Long:
      case ColumnType.Double:
        return this.property(index, type, numberAt(bytes, start, end));
      case ColumnType.String:
        if (hasEscape(bytes, start, end)) return this.property(index, type, JSON.parse(bytes.toString('utf8', start, end)));
        return this.copied(index, bytes, start + 1, end - 1);
      default:
        return this.copied(index, bytes, start, end);
    }
  }

  /** The column's index and the bytes [start, end) as its value's UTF-8 text. */
  private copied(index: number, bytes: Buffer, start: number, end: number): void {
    this.room(2 + 4 + end - start);
    this.offset = this.properties.writeUInt16LE(index, this.offset);
    this.offset = this.properties.writeUInt32LE(end - start, this.offset);
    // A feature's values are mostly short: a loop costs less than Buffer.copy's call for them.
    if (end - start > SHORT_COPY) {
      this.offset += bytes.copy(this.properties, this.offset, start, end);
      return;
    }
    const target = this.properties;
    for (let at = start; at < end; at++) target[this.offset++] = bytes[at];
  }

  /** The column's index, then its value in the column's type (the writer uses Bool, Long, Double, String and Json). */
  private property(index: number, type: ColumnType, value: unknown): void {
    this.room(2 + 8);
    this.offset = this.properties.writeUInt16LE(index, this.offset);
    switch (type) {
      case ColumnType.Bool:
        this.offset = this.properties.writeUInt8(value === true ? 1 : 0, this.offset);
        return;
      case ColumnType.Long: {
        // A safe integer as two 32-bit halves: a BigInt per value cost more than the rest of the feature's properties.
        const whole = value as number;
        if (!Number.isSafeInteger(whole)) {
          this.offset = this.properties.writeBigInt64LE(BigInt(whole), this.offset);
          return;
        }
        const high = Math.floor(whole / TWO_TO_32);
        this.offset = this.properties.writeUInt32LE(whole - high * TWO_TO_32, this.offset);
        this.offset = this.properties.writeInt32LE(high, this.offset);
        return;
      }
      case ColumnType.Double:
        this.offset = this.properties.writeDoubleLE(value as number, this.offset);
        return;
      case ColumnType.String:
      case ColumnType.Json: {
        const text = type === ColumnType.Json ? JSON.stringify(value) : String(value);
        // UTF-8 takes at most three bytes per UTF-16 unit: room enough without measuring first.
        this.room(4 + text.length * 3);
        const length = this.properties.write(text, this.offset + 4, 'utf8');
        this.properties.writeUInt32LE(length, this.offset);
        this.offset += 4 + length;
        return;
      }
      default:
        throw new Error(`no FlatGeobuf encoding for column type ${type}`);
    }
  }
}
