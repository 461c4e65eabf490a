// Encodes FlatGeobuf features as the library's buildFeature does, but with one builder and one property buffer for every feature and the values read straight from the feature (no per-feature builder, property object or TextEncoder copy).
import * as flatbuffers from 'flatbuffers';
import type { ColumnMeta } from 'flatgeobuf/lib/mjs/column-meta.js';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import { buildGeometry, type IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';

export class FlatGeobufFeatureEncoder {
  private readonly builder = new flatbuffers.Builder(1024);
  private properties = Buffer.allocUnsafe(1024);
  private offset = 0;

  /** columns[0] is the id; columns[i + 1] is the property names[i]. */
  constructor(private readonly columns: ColumnMeta[], private readonly names: string[]) {}

  /** The size-prefixed feature; the bytes are the builder's and change with the next call, so the caller copies them. */
  encode(geometry: IParsedGeometry, id: string | undefined, properties: Record<string, unknown>): Uint8Array {
    this.offset = 0;
    for (let i = 0; i < this.columns.length; i++) {
      const value = i === 0 ? id : properties[this.names[i - 1]];
      if (value !== null && value !== undefined) this.property(i, this.columns[i].type, value);
    }
    const builder = this.builder;
    builder.clear();
    const propertiesOffset = this.offset > 0 ? builder.createByteVector(this.properties.subarray(0, this.offset)) : 0;
    const geometryOffset = buildGeometry(builder, geometry);
    Feature.startFeature(builder);
    Feature.addGeometry(builder, geometryOffset);
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

  /** The column's index, then its value in the column's type (the writer uses Bool, Long, Double, String and Json). */
  private property(index: number, type: ColumnType, value: unknown): void {
    this.room(2 + 8);
    this.offset = this.properties.writeUInt16LE(index, this.offset);
    switch (type) {
      case ColumnType.Bool:
        this.offset = this.properties.writeUInt8(value === true ? 1 : 0, this.offset);
        return;
      case ColumnType.Long:
        this.offset = this.properties.writeBigInt64LE(BigInt(value as number), this.offset);
        return;
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
