// GeoJSON geometries to ISO well-known binary (little-endian; Z as the 1000 type offset), for GeoPackage and GeoParquet geometry columns.
import type { Geometry } from '../transfer-feature.js';

const CODES: Record<string, number> = { Point: 1, LineString: 2, Polygon: 3, MultiPoint: 4, MultiLineString: 5, MultiPolygon: 6, GeometryCollection: 7 };

/** Grows as it is written: a geometry's size is known only after walking it. */
class ByteSink {
  private bytes = new Uint8Array(256);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private room(size: number): void {
    if (this.length + size <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + size));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  byte(value: number): void {
    this.room(1);
    this.view.setUint8(this.length++, value);
  }

  uint32(value: number): void {
    this.room(4);
    this.view.setUint32(this.length, value, true);
    this.length += 4;
  }

  float64(value: number): void {
    this.room(8);
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

/**
 * Encodes a geometry in `dims` (2 or 3) dimensions: a missing third coordinate is written as 0, as the hub stores it.
 * An empty point is written as NaN coordinates, the usual WKB convention (GDAL, GEOS).
 */
export function encodeWkb(geometry: Geometry, dims: 2 | 3): Uint8Array {
  const sink = new ByteSink();
  const position = (value: unknown) => {
    const numbers = value as number[];
    for (let i = 0; i < dims; i++) sink.float64(numbers[i] ?? 0);
  };
  const list = (value: unknown, each: (item: unknown) => void) => {
    const items = value as unknown[];
    sink.uint32(items.length);
    items.forEach(each);
  };
  const write = (part: Geometry): void => {
    const code = CODES[part.type];
    if (code === undefined) throw new Error(`cannot write a geometry of type ${JSON.stringify(part.type)} as WKB`);
    sink.byte(1);
    sink.uint32(code + (dims === 3 ? 1000 : 0));
    const coordinates = part.coordinates;
    switch (part.type) {
      case 'Point': {
        const point = coordinates as number[];
        if (point.length === 0) for (let i = 0; i < dims; i++) sink.float64(NaN);
        else position(point);
        return;
      }
      case 'LineString': return list(coordinates, position);
      case 'Polygon': return list(coordinates, (ring) => list(ring, position));
      case 'MultiPoint': return list(coordinates, (point) => write({ type: 'Point', coordinates: point }));
      case 'MultiLineString': return list(coordinates, (line) => write({ type: 'LineString', coordinates: line }));
      case 'MultiPolygon': return list(coordinates, (polygon) => write({ type: 'Polygon', coordinates: polygon }));
      default: return list(part.geometries ?? [], (member) => write(member as Geometry));
    }
  };
  write(geometry);
  return sink.result();
}

/** [minX, minY, maxX, maxY] of every position; undefined for a geometry without one. */
export function boundsOf(geometry: Geometry): [number, number, number, number] | undefined {
  const box: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  const walk = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    if (typeof value[0] === 'number') {
      const [x, y] = value as number[];
      if (x < box[0]) box[0] = x;
      if (y < box[1]) box[1] = y;
      if (x > box[2]) box[2] = x;
      if (y > box[3]) box[3] = y;
      return;
    }
    value.forEach(walk);
  };
  walk(geometry.coordinates);
  (geometry.geometries ?? []).forEach((part) => {
    const inner = boundsOf(part);
    if (inner) walk([[inner[0], inner[1]], [inner[2], inner[3]]]);
  });
  return box[0] === Infinity ? undefined : box;
}
