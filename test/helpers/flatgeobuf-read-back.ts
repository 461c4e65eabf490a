// FlatGeobuf files compared as the flatgeobuf library reads them, feature by feature: the export lays point features out by hand (flatgeobuf-text-encoder.ts), so its bytes differ from the library's builder where the features do not.
import assert from 'node:assert/strict';
import * as flatbuffers from 'flatbuffers';
import { magicbytes } from 'flatgeobuf/lib/mjs/constants.js';
import { Feature } from 'flatgeobuf/lib/mjs/flat-geobuf/feature.js';
import { parseProperties } from 'flatgeobuf/lib/mjs/generic/feature.js';
import { Header } from 'flatgeobuf/lib/mjs/flat-geobuf/header.js';
import { fromByteBuffer } from 'flatgeobuf/lib/mjs/header-meta.js';
import { encodedGeometry } from '../../src/transfer/formats/flatgeobuf-feature.js';

/**
 * A FlatGeobuf file (without an index) read back: the header's fields as read (a header padded to fill the room left
 * for it reads as one that is not), and per feature its geometry as encoded (type,
 * xy, z, ends, parts) and its properties in the header's columns. Each feature is copied first, as readers do: its
 * doubles are aligned from its size prefix on.
 */
export function readBackFlatGeobuf(file: Buffer): { header: object; features: unknown[] } {
  assert.ok(file.subarray(0, magicbytes.length).equals(magicbytes), 'the magic bytes');
  const headerEnd = magicbytes.length + 4 + file.readUInt32LE(magicbytes.length);
  const headerBytes = new Uint8Array(file.subarray(magicbytes.length, headerEnd));
  const meta = fromByteBuffer(new flatbuffers.ByteBuffer(headerBytes));
  const raw = Header.getSizePrefixedRootAsHeader(new flatbuffers.ByteBuffer(headerBytes));
  const { columns } = meta;
  const features: unknown[] = [];
  for (let at = headerEnd; at < file.length;) {
    const size = 4 + file.readUInt32LE(at);
    const feature = Feature.getSizePrefixedRootAsFeature(new flatbuffers.ByteBuffer(new Uint8Array(file.subarray(at, at + size))));
    // A null geometry is read as the library's builder writes one (a table without positions); ours has no table.
    features.push({ geometry: encodedGeometry(feature.geometry(), false), properties: parseProperties(feature, columns) });
    at += size;
  }
  return { header: { ...meta, hasZ: raw.hasZ(), name: raw.name() }, features };
}

/** The two files read back the same (the header byte for byte). */
export function assertSameFlatGeobuf(actual: Buffer, expected: Buffer): void {
  const [a, b] = [readBackFlatGeobuf(actual), readBackFlatGeobuf(expected)];
  assert.deepStrictEqual(a.header, b.header, 'the headers differ');
  assert.equal(a.features.length, b.features.length, 'the feature counts differ');
  for (let i = 0; i < a.features.length; i++) assert.deepStrictEqual(a.features[i], b.features[i], `feature ${i}`);
}
