// Well-known binary to GeoJSON geometries (ISO and EWKB dimension flags), for GeoPackage geometry columns.
import type { Geometry } from '../transfer-feature.js';

const NAMES = ['', 'Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection'];

/** Decodes one WKB geometry starting at `offset`; M values are dropped, Z kept. Throws an Error on a malformed buffer. */
export function decodeWkb(bytes: Uint8Array, offset = 0): Geometry {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = offset;
  const need = (size: number) => {
    if (at + size > bytes.byteLength) throw new Error('the WKB geometry is cut short');
  };
  const read = (): Geometry => {
    need(5);
    const little = view.getUint8(at) === 1;
    let code = view.getUint32(at + 1, little);
    at += 5;
    let z = (code & 0x80000000) !== 0;
    let m = (code & 0x40000000) !== 0;
    if (code & 0x20000000) {
      need(4);
      at += 4; // EWKB SRID: the coordinates are taken as they are
    }
    code &= 0x0fffffff;
    const iso = Math.floor(code / 1000);
    if (iso === 1 || iso === 3) z = true;
    if (iso === 2 || iso === 3) m = true;
    const type = NAMES[code % 1000];
    if (!type) throw new Error(`unknown WKB geometry type ${code}`);
    const dims = 2 + (z ? 1 : 0) + (m ? 1 : 0);
    const position = (): number[] => {
      need(8 * dims);
      const values: number[] = [];
      for (let i = 0; i < dims; i++) values.push(view.getFloat64(at + 8 * i, little));
      at += 8 * dims;
      return z ? values.slice(0, 3) : values.slice(0, 2);
    };
    const count = (): number => {
      need(4);
      const n = view.getUint32(at, little);
      at += 4;
      return n;
    };
    const positions = () => Array.from({ length: count() }, position);
    switch (type) {
      case 'Point': {
        const point = position();
        return { type, coordinates: point.every(Number.isNaN) ? [] : point };
      }
      case 'LineString': return { type, coordinates: positions() };
      case 'Polygon': return { type, coordinates: Array.from({ length: count() }, positions) };
      case 'GeometryCollection': return { type, geometries: Array.from({ length: count() }, read) };
      default: return { type, coordinates: Array.from({ length: count() }, () => read().coordinates) };
    }
  };
  return read();
}
