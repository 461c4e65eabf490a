// A stored geometry as PostGIS's hex EWKB with SRID 4326 and 2D positions: the geometry column's input, cheaper for PostGIS to read than GeoJSON.
import { type Geometry, positionLists } from '../../geo/geometry.js';

const TYPE_CODES = { Point: 1, LineString: 2, Polygon: 3, MultiPoint: 4, MultiLineString: 5, MultiPolygon: 6 } as const;
/** EWKB's flag for an SRID after the type code. */
const WITH_SRID = 0x20000000;
const SRID = 4326;
const HEADER = 1 + 4;
const SRID_SIZE = 4;
const POSITION = 16;

/**
 * The bytes a geometry is written into before its hex text is taken, grown as needed up to SCRATCH_LIMIT (a larger
 * geometry gets bytes of its own, which are not kept): a Buffer per geometry was an allocation per feature of every
 * bulk write.
 */
let scratch = Buffer.allocUnsafe(1024);
const SCRATCH_LIMIT = 1024 * 1024;

function bytesFor(size: number): Buffer {
  if (size > SCRATCH_LIMIT) return Buffer.allocUnsafe(size);
  if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.min(Math.max(size, 2 * scratch.length), SCRATCH_LIMIT));
  return scratch;
}

class EwkbWriter {
  private offset = 0;

  constructor(private readonly bytes: Buffer, private readonly size: number) {}

  header(code: number, srid: boolean): void {
    this.bytes[this.offset] = 1;
    this.bytes.writeUInt32LE(srid ? code | WITH_SRID : code, this.offset + 1);
    this.offset += HEADER;
    if (srid) this.count(SRID);
  }

  count(value: number): void {
    this.bytes.writeUInt32LE(value, this.offset);
    this.offset += 4;
  }

  /** Only x and y: the column holds 2D geometries; an empty point is NaN, NaN (PostGIS reads it as POINT EMPTY). */
  position(position: readonly number[]): void {
    this.bytes.writeDoubleLE(position.length === 0 ? NaN : position[0], this.offset);
    this.bytes.writeDoubleLE(position.length === 0 ? NaN : position[1], this.offset + 8);
    this.offset += POSITION;
  }

  positions(list: readonly (readonly number[])[]): void {
    this.count(list.length);
    for (const position of list) this.position(position);
  }

  rings(rings: readonly (readonly (readonly number[])[])[]): void {
    this.count(rings.length);
    for (const ring of rings) this.positions(ring);
  }

  hex(): string {
    if (this.offset !== this.size) throw new Error(`EWKB size ${this.size} expected, ${this.offset} written`);
    return this.bytes.toString('hex', 0, this.size);
  }
}

/** Bytes of the whole geometry: headers, counts and 16 bytes a position. */
function sizeOf(geometry: Geometry): number {
  if (geometry.type === 'Point') return HEADER + SRID_SIZE + POSITION;
  const lists = positionLists(geometry);
  let positions = 0;
  for (const list of lists) positions += list.length;
  const srid = SRID_SIZE;
  switch (geometry.type) {
    case 'LineString': return HEADER + srid + 4 + positions * POSITION;
    case 'Polygon': return HEADER + srid + 4 + lists.length * 4 + positions * POSITION;
    case 'MultiPoint': return HEADER + srid + 4 + positions * (HEADER + POSITION);
    case 'MultiLineString': return HEADER + srid + 4 + lists.length * (HEADER + 4) + positions * POSITION;
    case 'MultiPolygon': return HEADER + srid + 4 + geometry.coordinates.length * (HEADER + 4) + lists.length * 4 + positions * POSITION;
  }
}

export function hexEwkb(geometry: Geometry): string {
  const size = sizeOf(geometry);
  const writer = new EwkbWriter(bytesFor(size), size);
  writer.header(TYPE_CODES[geometry.type], true);
  switch (geometry.type) {
    case 'Point':
      writer.position(geometry.coordinates);
      break;
    case 'LineString':
      writer.positions(geometry.coordinates);
      break;
    case 'Polygon':
      writer.rings(geometry.coordinates);
      break;
    case 'MultiPoint':
      writer.count(geometry.coordinates.length);
      for (const point of geometry.coordinates) {
        writer.header(TYPE_CODES.Point, false);
        writer.position(point);
      }
      break;
    case 'MultiLineString':
      writer.count(geometry.coordinates.length);
      for (const line of geometry.coordinates) {
        writer.header(TYPE_CODES.LineString, false);
        writer.positions(line);
      }
      break;
    case 'MultiPolygon':
      writer.count(geometry.coordinates.length);
      for (const polygon of geometry.coordinates) {
        writer.header(TYPE_CODES.Polygon, false);
        writer.rings(polygon);
      }
      break;
  }
  return writer.hex();
}
