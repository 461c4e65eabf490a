// Streams the features of a FlatGeobuf file with the `flatgeobuf` library; the id comes from a property (default `id`).
import { Readable } from 'node:stream';
import { deserialize } from 'flatgeobuf/lib/mjs/geojson.js';
import { type FormatReader, type Geometry, InputError, tableFeature } from '../transfer-feature.js';

export const readFlatGeobuf: FormatReader = async function* (source, options) {
  const stream = Readable.toWeb(source.open()) as ReadableStream;
  let index = 0;
  try {
    for await (const feature of deserialize(stream)) {
      const properties: Record<string, unknown> = { ...(feature.properties ?? {}) };
      yield { feature: tableFeature((feature.geometry ?? null) as Geometry | null, properties, options.idProperty), position: `feature ${index}` };
      index++;
    }
  } catch (error) {
    throw new InputError(`not a readable FlatGeobuf file (${(error as Error).message})`, `feature ${index}`);
  }
};
