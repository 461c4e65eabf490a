// The export's FlatGeobuf encoding against the flatgeobuf library's own buildFeature: the library-path encoder (flatgeobuf-feature.ts) byte for byte, and the writer with its one-pass text encoder (flatgeobuf-text-encoder.ts, its own valid layout) read back the same, feature by feature, for varied geometries and values, with columns changing kind and the third coordinate appearing late (features encoded before are encoded again).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as flatbuffers from 'flatbuffers';
import { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import type { ColumnMeta } from 'flatgeobuf/lib/mjs/column-meta.js';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { buildFeature, type IProperties } from 'flatgeobuf/lib/mjs/generic/feature.js';
import type { IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';
import type { HeaderMeta } from 'flatgeobuf/lib/mjs/header-meta.js';
import { parseGC, parseGeometry } from 'flatgeobuf/lib/mjs/geojson/geometry.js';
import type { Geometry } from 'geojson';
import { PassThrough } from 'node:stream';
import { magicbytes } from 'flatgeobuf/lib/mjs/constants.js';
import { pad3D } from '../../src/geo/coordinates.js';
import type { Geometry as HubGeometry } from '../../src/geo/geometry.js';
import { buildHeader } from '../../src/transfer/formats/flatgeobuf-header.js';
import { writeFlatGeobuf } from '../../src/transfer/formats/flatgeobuf-writer.js';
import type { TransferFeature } from '../../src/transfer/transfer-feature.js';
import { FlatGeobufFeatureEncoder } from '../../src/transfer/formats/flatgeobuf-feature.js';
import { scanStoredFeature } from '../../src/transfer/formats/plain-feature-text.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { assertSameFlatGeobuf } from '../helpers/flatgeobuf-read-back.js';
import { NS } from '../../src/core/namespace-key.js';
import type { FeatureText } from '../../src/transfer/transfer-feature.js';

const random = seededRandom(25);
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
const position = (z: boolean) => (z ? [random() * 360 - 180, random() * 180 - 90, random() * 100] : [random() * 360 - 180, random() * 180 - 90]);
const positions = (count: number, z: boolean) => Array.from({ length: count }, () => position(z));
const ring = (z: boolean) => {
  const open = positions(3 + Math.floor(random() * 5), z);
  return [...open, open[0]];
};

/** Every geometry type, 2D and 3D, with parts (multipolygons, collections: tables whose vtables the builder shares) and without. */
function geometry(zShare = 0.3): Geometry {
  const z = random() < zShare;
  switch (pick(['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection'] as const)) {
    case 'Point': return { type: 'Point', coordinates: position(z) };
    case 'LineString': return { type: 'LineString', coordinates: positions(2 + Math.floor(random() * 6), z) };
    case 'Polygon': return { type: 'Polygon', coordinates: Array.from({ length: 1 + Math.floor(random() * 3) }, () => ring(z)) };
    case 'MultiPoint': return { type: 'MultiPoint', coordinates: positions(1 + Math.floor(random() * 4), z) };
    case 'MultiLineString': return { type: 'MultiLineString', coordinates: Array.from({ length: 1 + Math.floor(random() * 3) }, () => positions(2 + Math.floor(random() * 3), z)) };
    case 'MultiPolygon': return { type: 'MultiPolygon', coordinates: Array.from({ length: 1 + Math.floor(random() * 3) }, () => Array.from({ length: 1 + Math.floor(random() * 2) }, () => ring(z))) };
    default: return { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: position(z) }, { type: 'LineString', coordinates: positions(2, z) }, { type: 'Point', coordinates: position(z) }] };
  }
}

const parsed = (value: Geometry | null): IParsedGeometry => value === null ? { xy: [], ends: [], parts: [], type: GeometryType.Unknown }
  : value.type === 'GeometryCollection' ? parseGC(value) : parseGeometry(value);

const meta = (name: string, type: ColumnType): ColumnMeta => ({
  name, type, title: null, description: null, width: -1, precision: -1, scale: -1, nullable: true, unique: false, primary_key: false,
});
const COLUMNS = [
  meta('id', ColumnType.String), meta('name', ColumnType.String), meta('count', ColumnType.Long), meta('share', ColumnType.Double),
  meta('flag', ColumnType.Bool), meta('extra', ColumnType.Json),
];
const HEADER: HeaderMeta = {
  geometryType: GeometryType.Unknown, columns: COLUMNS, envelope: null, featuresCount: 0, indexNodeSize: 0, crs: null, title: null, description: null, metadata: null,
};

/** Strings of every length up to 12 (so the properties vector takes each alignment), with escapes and characters of two, three and four UTF-8 bytes. */
const text = () => Array.from({ length: Math.floor(random() * 13) }, () => pick(['a', 'é', '€', '😀', '"', '\\', '\n', ' '])).join('');

function properties(): Record<string, unknown> {
  const values: Record<string, unknown> = {
    name: text(),
    count: pick([0, -1, 1, 255, -65536, 2 ** 31, -(2 ** 31) - 1, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Math.floor(random() * 1e12) - 5e11]),
    share: pick([0.5, -1e-7, 1e21, 3.141592653589793, random()]),
    flag: random() < 0.5,
    extra: pick([{ a: [1, 'x', null] }, [text()], { nested: { deep: true } }, 'a string']),
  };
  for (const key of Object.keys(values)) if (random() < 0.2) values[key] = null;
  return values;
}

/**
 * The library's bytes, but for a null geometry: the export writes no geometry table for it (GDAL fails on the library's
 * table without positions), and the properties as the library does.
 */
function assertEncoded(actual: Uint8Array, want: Buffer, nullGeometry: boolean, message: string): void {
  if (!nullGeometry) return assert.ok(Buffer.from(actual).equals(want), message);
  const [ours, library] = [actual, want].map((bytes) => Feature.getSizePrefixedRootAsFeature(new flatbuffers.ByteBuffer(new Uint8Array(bytes))));
  assert.equal(ours.geometry(), null, message);
  assert.ok(library.geometry() !== null, message);
  assert.deepEqual(ours.propertiesArray(), library.propertiesArray(), message);
}

test('features encoded by the export give the bytes of the library\'s buildFeature, from objects and from stored texts', () => {
  const encoder = new FlatGeobufFeatureEncoder();
  encoder.useColumns(COLUMNS.slice(1).map((column) => column.name), COLUMNS.map((column) => column.type));
  for (let i = 0; i < 3000; i++) {
    const shape = random() < 0.05 ? null : geometry();
    const values = properties();
    const id = `f${i}${text()}`;
    const want = Buffer.from(buildFeature(parsed(shape), { id, ...values }, HEADER));
    assertEncoded(encoder.encode(parsed(shape), id, values), want, shape === null, `feature ${i} from its object: ${JSON.stringify({ shape, values })}`);
    const stored = Buffer.from(JSON.stringify({ type: 'Feature', id, geometry: shape, properties: values }));
    const scanned = scanStoredFeature(stored, 0);
    assert.ok(scanned !== undefined);
    assertEncoded(encoder.encodeText(parsed(shape), scanned), want, shape === null, `feature ${i} from its text: ${stored.toString()}`);
  }
});

/** Every geometry type the hub stores (and none) in 2D, for the runs encoded before the first 3D position to be read back and padded. */
function shapes(i: number): Geometry | null {
  const square = [[i % 90, 1], [i % 90, 2], [i % 90 + 1, 2], [i % 90, 1]];
  switch (i % 7) {
    case 0: return null;
    case 1: return { type: 'Polygon', coordinates: [square, square] };
    case 2: return { type: 'MultiPolygon', coordinates: [[square], [square, square]] };
    case 3: return { type: 'MultiPolygon', coordinates: [] };
    case 4: return { type: 'MultiLineString', coordinates: [[[1, 2], [3, i % 80]], [[5, 6], [7, 8]]] };
    case 5: return { type: 'MultiPoint', coordinates: [[1, 2], [3, i % 80]] };
    default: return { type: 'LineString', coordinates: [[i % 90, 1], [2, i % 80]] };
  }
}

test('the writer gives every feature in the columns\' final kinds and in 3D when kinds change and a third coordinate comes late, over pages and single features', async () => {
  // `a` is whole until feature 500, `b` a string until 900, the first 3D position comes at 700; one in 50 is an object
  // (written parsed, not as text), the others stored texts written a page at a time.
  const features = Array.from({ length: 1200 }, (_, i): TransferFeature => ({
    type: 'Feature', id: `f${i}`,
    geometry: i === 700 ? { type: 'Point', coordinates: [1, 2, 3] } : i === 350 ? { type: 'LineString', coordinates: [[1, 2], [3, 4, 5], [6, 7]] }
      : i % 3 === 0 ? shapes(i) : { type: 'Point', coordinates: [i % 170, -(i % 80) - 0.5] },
    properties: { a: i >= 500 && i % 7 === 0 ? i + 0.5 : i, b: i >= 900 && i % 5 === 0 ? { n: i } : `t${i}"é`, c: i % 2 === 0 },
  }));
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = writeFlatGeobuf(out);
  for (let page = 0; page < features.length; page += 37) {
    const texts = [];
    for (const feature of features.slice(page, page + 37)) {
      if (Number((feature.id as string).slice(1)) % 50 === 25) {
        if (texts.length > 0) await writer.writeTexts?.(texts.splice(0));
        await writer.write(feature);
        continue;
      }
      const scanned = scanStoredFeature(Buffer.from(JSON.stringify(feature)), 0);
      assert.ok(scanned !== undefined);
      texts.push(scanned);
    }
    if (texts.length > 0) await writer.writeTexts?.(texts);
  }
  await writer.end();
  const columns = [meta('id', ColumnType.String), meta('a', ColumnType.Double), meta('b', ColumnType.Json), meta('c', ColumnType.Bool)];
  const header = { ...HEADER, columns };
  const want = Buffer.concat([
    magicbytes, buildHeader({ geometryType: GeometryType.Unknown, hasZ: true, columns, featuresCount: features.length }),
    ...features.map((feature) => buildFeature(parsed(feature.geometry && pad3D(feature.geometry as HubGeometry) as Geometry), { id: feature.id as string, ...feature.properties } as IProperties, header)),
  ]);
  assertSameFlatGeobuf(Buffer.concat(chunks), want);
});

test('a column whose first values are null takes the kind of its first value for the features after it, with no kind changing later', async () => {
  // `d` is null in the first feature and a fraction from then on; `e` has no value until feature 3 and is whole after.
  const features = Array.from({ length: 40 }, (_, i): TransferFeature => ({
    type: 'Feature', id: `f${i}`, geometry: { type: 'Point', coordinates: [i, 2 * i, 0] },
    properties: { d: i === 0 ? null : i + 0.25, e: i < 3 ? null : i, s: `s${i}` },
  }));
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = writeFlatGeobuf(out);
  await writer.writeTexts?.(features.map((feature) => scanStoredFeature(Buffer.from(JSON.stringify(feature)), 0) as NonNullable<ReturnType<typeof scanStoredFeature>>));
  await writer.end();
  const columns = [meta('id', ColumnType.String), meta('d', ColumnType.Double), meta('e', ColumnType.Long), meta('s', ColumnType.String)];
  const want = Buffer.concat([
    magicbytes, buildHeader({ geometryType: GeometryType.Point, hasZ: true, columns, featuresCount: features.length }),
    ...features.map((feature) => buildFeature(parsed(feature.geometry as Geometry), { id: feature.id as string, ...feature.properties } as IProperties, { ...HEADER, columns })),
  ]);
  assertSameFlatGeobuf(Buffer.concat(chunks), want);
});

/** A geometry of a type the hub stores (no collections). */
function hubGeometry(zShare: number): Geometry {
  for (;;) {
    const shape = geometry(zShare);
    if (shape.type !== 'GeometryCollection') return shape;
  }
}

/** The columns a file of these features has, found here without the export's code: first-seen order, the kind all non-null values share (numbers widen, else Json). */
function expectedColumns(features: readonly TransferFeature[]): ColumnMeta[] {
  const kinds = new Map<string, ColumnType | undefined>();
  for (const feature of features) {
    for (const [name, value] of Object.entries(feature.properties)) {
      if (name === 'id') continue;
      const seen = kinds.get(name);
      if (value === null) {
        if (!kinds.has(name)) kinds.set(name, undefined);
        continue;
      }
      const kind = typeof value === 'boolean' ? ColumnType.Bool : typeof value === 'string' ? ColumnType.String
        : typeof value === 'number' ? (Number.isSafeInteger(value) ? ColumnType.Long : ColumnType.Double) : ColumnType.Json;
      const numbers = (seen === ColumnType.Long || seen === ColumnType.Double) && (kind === ColumnType.Long || kind === ColumnType.Double);
      kinds.set(name, seen === undefined || seen === kind ? kind : numbers ? ColumnType.Double : ColumnType.Json);
    }
  }
  return [meta('id', ColumnType.String), ...[...kinds].map(([name, type]) => meta(name, type ?? ColumnType.String))];
}

test('the one-pass text encoder reads back as the library\'s buildFeature: every geometry type, nulls, escapes, unicode, big numbers, kinds changing, late 3D, plain and namespaced texts', async () => {
  // 2D only until feature 900; `late` is whole until 1500 and a string after; `fraction` whole until 300 and then fractional.
  // Each feature as its text says it (-0 is written 0).
  const features = Array.from({ length: 2000 }, (_, i): TransferFeature => JSON.parse(JSON.stringify(featureNumber(i))) as TransferFeature);
  function featureNumber(i: number): TransferFeature {
    const values: Record<string, unknown> = {
      ...properties(),
      'ké"y\\ \u2028': i % 4 === 0 ? text() : null,
      big: pick([2 ** 53, 2 ** 53 + 2, 12345678901234567890, -0, 1e-7, 1e21, -1e21, 123456789012345, 1234567890123456]),
      late: i < 1500 ? i : text(),
      fraction: i < 300 ? i : i + 0.125,
      nothing: null,
      emoji: `😀${i}\u0001\t`,
    };
    // A property named id has no column (the feature's id has it).
    if (i % 11 === 3) values.id = 'own id';
    return { type: 'Feature', id: `f${i}${text()}`, geometry: random() < 0.05 ? null : hubGeometry(i < 900 ? 0 : 0.3), properties: values };
  }
  const namespace = { tags: ['a', 'b\\"'], createdAt: 1, nested: { '@ns:com:here:xyz': { x: [1, { y: '}' }] } } };
  const asText = (feature: TransferFeature, i: number): FeatureText => {
    // Plain texts (a hub's sequence pages), texts with the namespace last or first (its GeoJSON pages, cut by the scan),
    // and now and then a foreign member, which the encoder leaves to the parser.
    if (i % 3 === 0) {
      const bytes = Buffer.from(JSON.stringify(i % 97 === 0 ? { ...feature, foreign: { a: 1 } } : feature));
      return { bytes, start: 0, cutFrom: bytes.length, cutTo: bytes.length, end: bytes.length };
    }
    const properties = i % 3 === 1 ? { ...feature.properties, [NS]: namespace } : { [NS]: namespace, ...feature.properties };
    const scanned = scanStoredFeature(Buffer.from(JSON.stringify({ ...feature, properties })), 0);
    assert.ok(scanned !== undefined && scanned.cutFrom < scanned.cutTo);
    return scanned;
  };
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = writeFlatGeobuf(out);
  for (let page = 0; page < features.length; page += 101) {
    await writer.writeTexts?.(features.slice(page, page + 101).map((feature, i) => asText(feature, page + i)));
  }
  await writer.end();
  const columns = expectedColumns(features);
  assert.deepStrictEqual(columns.filter((column) => ['big', 'late', 'fraction', 'nothing'].includes(column.name)).map((column) => column.type),
    [ColumnType.Double, ColumnType.Json, ColumnType.Double, ColumnType.String]);
  const want = Buffer.concat([
    magicbytes, buildHeader({ geometryType: GeometryType.Unknown, hasZ: true, columns, featuresCount: features.length }),
    ...features.map((feature) => buildFeature(parsed(feature.geometry && pad3D(feature.geometry as HubGeometry) as Geometry),
      { ...feature.properties, id: feature.id as string } as IProperties, { ...HEADER, columns })),
  ]);
  assertSameFlatGeobuf(Buffer.concat(chunks), want);
});
