// Reads CSV with csv-parse (quotes, BOM, CRLF): the geometry from a WKT column or from longitude/latitude columns, found by common names unless named by flags.
import { parse } from 'csv-parse';
import { type FormatReader, type Geometry, InputError, tableFeature } from '../transfer-feature.js';
import { parseWkt } from './wkt.js';

const LON_NAMES = ['lon', 'lng', 'long', 'longitude', 'x'];
const LAT_NAMES = ['lat', 'latitude', 'y'];
const WKT_NAMES = ['wkt', 'geometry', 'geom', 'the_geom'];

const find = (columns: string[], flag: string | undefined, names: string[]): string | undefined =>
  flag ?? columns.find((column) => names.includes(column.toLowerCase()));

export const readCsv: FormatReader = async function* (source, options) {
  const rows = source.open().pipe(parse({ bom: true, info: true, skip_empty_lines: true, relax_column_count: false }));
  let header: string[] | undefined;
  let wkt: string | undefined;
  let lon: string | undefined;
  let lat: string | undefined;
  try {
    for await (const { record, info } of rows as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const position = `line ${info.lines}`;
      if (!header) {
        header = record;
        wkt = find(header, options.wkt, WKT_NAMES);
        lon = find(header, options.lon, LON_NAMES);
        lat = find(header, options.lat, LAT_NAMES);
        for (const [flag, column] of [['--wkt', options.wkt], ['--lon', options.lon], ['--lat', options.lat]] as const) {
          if (column !== undefined && !header.includes(column)) throw new InputError(`${flag} names the column "${column}", which the header does not have`, position);
        }
        if (wkt === undefined && (lon === undefined || lat === undefined)) {
          throw new InputError('no geometry columns: name a WKT column (--wkt) or longitude and latitude columns (--lon, --lat)', position);
        }
        continue;
      }
      const properties: Record<string, unknown> = {};
      header.forEach((column, i) => { properties[column] = record[i]; });
      let geometry: Geometry | null;
      try {
        geometry = geometryOf(properties, wkt, lon, lat);
      } catch (error) {
        yield { error: (error as Error).message, position };
        continue;
      }
      yield { feature: tableFeature(geometry, properties, options.idProperty), position };
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    const line = (error as { lines?: number }).lines;
    throw new InputError(`not valid CSV (${(error as Error).message})`, line === undefined ? 'the CSV' : `line ${line}`);
  }
};

/** Takes the geometry columns out of the properties; an empty WKT or empty lon/lat is a feature without geometry. */
function geometryOf(properties: Record<string, unknown>, wkt?: string, lon?: string, lat?: string): Geometry | null {
  if (wkt !== undefined) {
    const text = String(properties[wkt]).trim();
    delete properties[wkt];
    return text === '' ? null : parseWkt(text);
  }
  const x = String(properties[lon as string]).trim();
  const y = String(properties[lat as string]).trim();
  delete properties[lon as string];
  delete properties[lat as string];
  if (x === '' && y === '') return null;
  const position = [Number(x), Number(y)];
  if (x === '' || y === '' || !position.every(Number.isFinite)) throw new Error(`the longitude "${x}" or latitude "${y}" is not a number`);
  if (Math.abs(position[0]) > 180 || Math.abs(position[1]) > 90) throw new Error(`the longitude ${x} or latitude ${y} is out of range`);
  return { type: 'Point', coordinates: position };
}
