// Streams the features of a FlatGeobuf file with the `flatgeobuf` library; the id comes from a property (default `id`).
import { Readable } from 'node:stream';
import type { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import { type IFeature, parseProperties } from 'flatgeobuf/lib/mjs/generic/feature.js';
import { deserializeStream } from 'flatgeobuf/lib/mjs/generic/featurecollection.js';
import { fromGeometry } from 'flatgeobuf/lib/mjs/geojson/geometry.js';
import type { HeaderMeta } from 'flatgeobuf/lib/mjs/header-meta.js';
import { type FormatReader, type Geometry, InputError, tableFeature } from '../transfer-feature.js';

/** The library's feature type declares only optional methods; this is what our fromFeature gives. */
interface ReadFeature extends IFeature {
  geometry: unknown;
  properties: Record<string, unknown>;
}

/**
 * The library's GeoJSON reader with one difference: a feature without a geometry table (the format's null geometry,
 * as our writer and GDAL's reader have it) is read as a null geometry; the library's own reader fails on it.
 */
const fromFeature = (_id: number, feature: Feature, header: HeaderMeta): ReadFeature => {
  const geometry = feature.geometry();
  return { geometry: geometry ? fromGeometry(geometry, header.geometryType) : null, properties: parseProperties(feature, header.columns) };
};

export const readFlatGeobuf: FormatReader = async function* (source, options) {
  const stream = Readable.toWeb(source.open()) as ReadableStream;
  let index = 0;
  try {
    for await (const feature of deserializeStream(stream, { fromFeature }) as AsyncGenerator<ReadFeature>) {
      const properties: Record<string, unknown> = { ...feature.properties };
      yield { feature: tableFeature(feature.geometry as Geometry | null, properties, options.idProperty), position: `feature ${index}` };
      index++;
    }
  } catch (error) {
    throw new InputError(`not a readable FlatGeobuf file (${(error as Error).message})`, `feature ${index}`);
  }
};
