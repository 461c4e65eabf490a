// Builds a FlatGeobuf feature (a size-prefixed FlatBuffer) the way flatbuffers' Builder and flatgeobuf's buildGeometry do — back to front, the same alignment, padding and vtable sharing, byte for byte — with only the calls a feature needs and without the Builder's per-call ByteBuffer overhead.
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import type { IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';

/** Field numbers of the Geometry table (flat-geobuf/geometry.js) and the Feature table (flat-geobuf/feature.js). */
const GEOMETRY_FIELDS = 8;
const ENDS = 0;
const XY = 1;
const Z = 2;
const M = 3;
const TYPE = 6;
const PARTS = 7;
const FEATURE_FIELDS = 3;
const FEATURE_GEOMETRY = 0;
const FEATURE_PROPERTIES = 1;

/** Point shapes kept; past it points are built each time (a properties length of its own per feature would be needed to reach it). */
const MAX_TEMPLATES = 4096;

/** A point feature's bytes, and where in them its coordinates and properties go. */
interface PointTemplate {
  bytes: Buffer;
  xyAt: number;
  zAt: number;
  propertiesAt: number;
}

export class FeatureBuilder {
  private buffer = Buffer.alloc(4096);
  /** As the Builder's `space`: the data lies in buffer[space, buffer.length); offsets count from the buffer's end. */
  private space = this.buffer.length;
  private minAlign = 1;
  private readonly vtable: number[] = [];
  private vtableInUse = 0;
  private objectStart = 0;
  /** Offsets of the vtables written so far: a table whose vtable matches one shares it (the Builder's dedup). */
  private readonly vtables: number[] = [];
  private vectorLength = 0;
  /** Where the last build put the first x, z and property byte (as `space` values). */
  private xyAt = 0;
  private zAt = 0;
  private propertiesAt = 0;
  /** Points built before, by their shape (see feature()). */
  private readonly points = new Map<number, PointTemplate>();

  /**
   * The feature with this geometry and the properties bytes [start, end) of `properties` (none when empty), as
   * flatgeobuf's buildFeature would write it with a cleared Builder. The bytes are this builder's and change with the next call.
   */
  feature(geometry: IParsedGeometry, properties: Uint8Array, start: number, end: number): Buffer {
    const { xy, z } = geometry;
    if (geometry.type !== GeometryType.Point || geometry.parts || geometry.ends || geometry.m || xy.length !== 2 || (z && z.length !== 1)) return this.build(geometry, properties, start, end);
    // A point's bytes but for its values (coordinates, properties) depend only on the properties' length and the third
    // coordinate's presence: the Builder's padding, offsets and vtables follow from sizes alone. Built once per such shape,
    // then the values are written into the copy.
    const key = (end - start) * 2 + (z ? 1 : 0);
    const template = this.points.get(key);
    if (template === undefined) {
      const built = this.build(geometry, properties, start, end);
      if (this.points.size < MAX_TEMPLATES) this.points.set(key, { bytes: Buffer.from(built), xyAt: this.xyAt - this.space, zAt: this.zAt - this.space, propertiesAt: this.propertiesAt - this.space });
      return built;
    }
    const bytes = template.bytes;
    bytes.writeDoubleLE(xy[0], template.xyAt);
    bytes.writeDoubleLE(xy[1], template.xyAt + 8);
    if (z) bytes.writeDoubleLE(z[0], template.zAt);
    for (let from = start, to = template.propertiesAt; from < end; from++, to++) bytes[to] = properties[from];
    return bytes;
  }

  private build(geometry: IParsedGeometry, properties: Uint8Array, start: number, end: number): Buffer {
    this.space = this.buffer.length;
    this.minAlign = 1;
    this.vtables.length = 0;
    const propertiesOffset = end > start ? this.byteVector(properties, start, end) : 0;
    this.propertiesAt = this.space + 4;
    const geometryOffset = this.geometry(geometry);
    this.startObject(FEATURE_FIELDS);
    this.fieldOffset(FEATURE_GEOMETRY, geometryOffset);
    this.fieldOffset(FEATURE_PROPERTIES, propertiesOffset);
    const root = this.endObject();
    // finishSizePrefixed: the root offset, then the size of all that follows it.
    this.prep(this.minAlign, 8);
    this.addOffset(root);
    const size = this.offset();
    this.prep(4, 0);
    this.space -= 4;
    this.buffer.writeInt32LE(size, this.space);
    return this.buffer.subarray(this.space);
  }

  /** buildGeometry: the parts first (each a geometry), else the coordinate vectors, then the table. */
  private geometry(parsed: IParsedGeometry): number {
    const { xy, z, m, ends, parts, type } = parsed;
    if (parts) {
      const partOffsets = parts.map((part) => this.geometry(part));
      this.startVector(4, partOffsets.length, 4);
      for (let i = partOffsets.length - 1; i >= 0; i--) this.addOffset(partOffsets[i]);
      const partsOffset = this.endVector();
      this.startObject(GEOMETRY_FIELDS);
      this.fieldOffset(PARTS, partsOffset);
      this.fieldType(type);
      return this.endObject();
    }
    const xyOffset = this.doubles(xy);
    this.xyAt = this.space + 4;
    const zOffset = z ? this.doubles(z) : 0;
    this.zAt = this.space + 4;
    const mOffset = m ? this.doubles(m) : 0;
    let endsOffset = 0;
    if (ends) {
      this.startVector(4, ends.length, 4);
      for (let i = ends.length - 1; i >= 0; i--) {
        this.prep(4, 0);
        this.space -= 4;
        this.buffer.writeInt32LE(ends[i], this.space);
      }
      endsOffset = this.endVector();
    }
    this.startObject(GEOMETRY_FIELDS);
    this.fieldOffset(ENDS, endsOffset);
    this.fieldOffset(XY, xyOffset);
    this.fieldOffset(Z, zOffset);
    this.fieldOffset(M, mOffset);
    this.fieldType(type);
    return this.endObject();
  }

  private doubles(values: ArrayLike<number>): number {
    this.startVector(8, values.length, 8);
    for (let i = values.length - 1; i >= 0; i--) {
      this.prep(8, 0);
      this.space -= 8;
      this.buffer.writeDoubleLE(values[i], this.space);
    }
    return this.endVector();
  }

  private byteVector(bytes: Uint8Array, start: number, end: number): number {
    this.startVector(1, end - start, 1);
    this.space -= end - start;
    this.buffer.set(bytes.subarray(start, end), this.space);
    return this.endVector();
  }

  private offset(): number {
    return this.buffer.length - this.space;
  }

  /** Zero padding so that `size` is aligned after `additional` more bytes; grows the buffer (at its front) when needed. */
  private prep(size: number, additional: number): void {
    if (size > this.minAlign) this.minAlign = size;
    const alignSize = (~(this.buffer.length - this.space + additional) + 1) & (size - 1);
    while (this.space < alignSize + size + additional) {
      const bigger = Buffer.alloc(this.buffer.length * 2);
      this.buffer.copy(bigger, this.buffer.length);
      this.space += this.buffer.length;
      this.buffer = bigger;
    }
    for (let i = 0; i < alignSize; i++) this.buffer[--this.space] = 0;
  }

  private addInt16(value: number): void {
    this.prep(2, 0);
    this.space -= 2;
    this.buffer.writeInt16LE(value, this.space);
  }

  private addInt32(value: number): void {
    this.prep(4, 0);
    this.space -= 4;
    this.buffer.writeInt32LE(value, this.space);
  }

  /** The offset relative to where it is written (counted before the write, as the Builder does). */
  private addOffset(offset: number): void {
    this.prep(4, 0);
    const relative = this.offset() - offset + 4;
    this.space -= 4;
    this.buffer.writeInt32LE(relative, this.space);
  }

  private fieldOffset(field: number, offset: number): void {
    if (offset === 0) return;
    this.addOffset(offset);
    this.vtable[field] = this.offset();
  }

  /** The geometry's type: a byte, left out when it is the default (Unknown). */
  private fieldType(type: GeometryType): void {
    if (type === GeometryType.Unknown) return;
    this.prep(1, 0);
    this.buffer[--this.space] = type;
    this.vtable[TYPE] = this.offset();
  }

  private startVector(elementSize: number, length: number, alignment: number): void {
    this.vectorLength = length;
    this.prep(4, elementSize * length);
    this.prep(alignment, elementSize * length);
  }

  private endVector(): number {
    this.space -= 4;
    this.buffer.writeInt32LE(this.vectorLength, this.space);
    return this.offset();
  }

  private startObject(fields: number): void {
    for (let i = 0; i < fields; i++) this.vtable[i] = 0;
    this.vtableInUse = fields;
    this.objectStart = this.offset();
  }

  /** The Builder's endObject: the table's vtable written after it (trailing empty fields trimmed), or an equal earlier one shared. */
  private endObject(): number {
    this.addInt32(0);
    const vtableAt = this.offset();
    let i = this.vtableInUse - 1;
    while (i >= 0 && this.vtable[i] === 0) i--;
    const trimmed = i + 1;
    for (; i >= 0; i--) this.addInt16(this.vtable[i] !== 0 ? vtableAt - this.vtable[i] : 0);
    this.addInt16(vtableAt - this.objectStart);
    const length = (trimmed + 2) * 2;
    this.addInt16(length);
    let existing = 0;
    const mine = this.space;
    search: for (const other of this.vtables) {
      const at = this.buffer.length - other;
      if (this.buffer.readInt16LE(at) !== length) continue;
      for (let j = 2; j < length; j += 2) if (this.buffer.readInt16LE(mine + j) !== this.buffer.readInt16LE(at + j)) continue search;
      existing = other;
      break;
    }
    if (existing !== 0) {
      this.space = this.buffer.length - vtableAt;
      this.buffer.writeInt32LE(existing - vtableAt, this.space);
    } else {
      this.vtables.push(this.offset());
      this.buffer.writeInt32LE(this.offset() - vtableAt, this.buffer.length - vtableAt);
    }
    return vtableAt;
  }
}
