// FlatGeobuf features encoded in one pass over each feature text: every value is found, typed (ColumnKinds) and encoded as it is scanned, into one reused buffer per page.
// Hand-written on purpose: in the fifth round's profile no single part of the export was above a quarter of the CLI's CPU, and the parts were the page's
// scan, a members array walked twice (kinds, then the encoder), a string per number, the flatbuffers Builder and the library's buildGeometry. A point
// feature (what most exports hold) is laid out here by hand, table, vtables and vectors; any other geometry goes through the library's builder
// (FlatGeobufFeatureEncoder.build) with the properties encoded here.
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import type { IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, FALSE_START, NULL_START, OPEN_BRACE, OPEN_BRACKET, QUOTE, TRUE_START } from '../../core/json-bytes.js';
import { bytesAt, valueEnd } from '../../core/json-bytes-scan.js';
import { NS } from '../../core/namespace-key.js';
import type { FeatureText, Geometry } from '../transfer-feature.js';
import type { ColumnKinds, ValueKind } from './column-kinds.js';
import type { FlatGeobufFeatureEncoder } from './flatgeobuf-feature.js';
import { hasEscape, numberAt } from './stored-feature-values.js';

const FEATURE_START = Buffer.from('{"type":"Feature","id":"');
const GEOMETRY_KEY = Buffer.from(',"geometry":');
const NULL = Buffer.from('null');
const PROPERTIES_KEY = Buffer.from(',"properties":{');
const POINT_START = Buffer.from('{"type":"Point","coordinates":[');
const NAMESPACE_KEY = Buffer.from(JSON.stringify(NS));

const TWO_TO_32 = 2 ** 32;
/** A number token of at most 15 characters without a fraction or an exponent is a safe integer (kindOfToken's rule). */
const MAX_PLAIN_LENGTH = 15;
/** Values up to this many bytes are copied byte by byte: a loop costs less than Buffer.copy's call for them. */
const SHORT_COPY = 32;

/**
 * A point feature's bytes before its properties' vector, size-prefixed, offsets from the prefix (every vector of
 * doubles 8-aligned from there, as the library's builder aligns them):
 *   0 size · 4 root offset (12: the table at 16)
 *   8 Feature vtable [8 bytes, table 12 bytes, geometry at +4, properties at +8]
 *  16 Feature table [soffset 8 to its vtable, geometry (to 48), properties (to the properties' vector)]
 *  28 Geometry vtable [18 bytes, table size, ends -, xy +4, z +8 or -, m -, t -, tm -, type +12 or +8], 2 bytes padding
 *  48 Geometry table [soffset 20, xy, (z), type 1 (Point)], padding
 *  then the xy vector (length 2), (the z vector, length 1), the properties' byte vector.
 */
interface PointLayout {
  template: Buffer;
  xy: number;
  z: number;
  properties: number;
}

function pointLayout(hasZ: boolean): PointLayout {
  const xyLength = hasZ ? 68 : 60;
  const layout = hasZ ? { xy: 72, z: 96, properties: 104 } : { xy: 64, z: -1, properties: 80 };
  const template = Buffer.alloc(layout.properties + 4);
  template.writeUInt32LE(12, 4);
  template.writeUInt16LE(8, 8);
  template.writeUInt16LE(12, 10);
  template.writeUInt16LE(4, 12);
  template.writeUInt16LE(8, 14);
  template.writeInt32LE(16 - 8, 16);
  template.writeUInt32LE(48 - 20, 20);
  template.writeUInt32LE(layout.properties - 24, 24);
  template.writeUInt16LE(18, 28);
  template.writeUInt16LE(hasZ ? 13 : 9, 30);
  template.writeUInt16LE(4, 34);
  template.writeUInt16LE(hasZ ? 8 : 0, 36);
  template.writeUInt16LE(hasZ ? 12 : 8, 44);
  template.writeInt32LE(48 - 28, 48);
  template.writeUInt32LE(xyLength - 52, 52);
  if (hasZ) template.writeUInt32LE(92 - 56, 56);
  template[hasZ ? 60 : 56] = GeometryType.Point;
  template.writeUInt32LE(2, xyLength);
  if (hasZ) template.writeUInt32LE(1, 92);
  return { template, ...layout };
}

const POINT_2D = pointLayout(false);
const POINT_3D = pointLayout(true);

/** What the scan remembers of the member at one position of the texts: its key's bytes, its name, its column, the kind last noted for it. */
interface MemberSlot {
  key: Buffer;
  name: string;
  namespace: boolean;
  /** -1 until the columns hold the name; 0 (the id's) for a property named `id`, which has no column. */
  column: number;
  /** The kind noted for it last (null: a null value): noting the same kind again changes nothing (kinds only widen). */
  noted: ValueKind | null | undefined;
}

/** What the writer gives the encoder: the columns as they stand, taken again when the kinds moved, and a non-point geometry in the file's terms. */
export interface TextEncoderHost {
  kinds: ColumnKinds;
  /** Reads the columns' kinds again (they changed); calls useColumns. */
  syncColumns(): void;
  /** The geometry as the library's builder takes it (hasZ padding, mixed 2D/3D bookkeeping), for the feature at `offset` of this page. */
  parsedGeometry(geometry: Geometry | null, offset: number): IParsedGeometry;
  library: FlatGeobufFeatureEncoder;
}

export class FlatGeobufTextEncoder {
  /** This page's encoded features, back to back; `size` bytes are used. */
  private page = Buffer.allocUnsafe(1024 * 1024);
  size = 0;
  private types: readonly ColumnType[] = [ColumnType.String];
  private readonly columnOf = new Map<string, number>();
  private readonly slots: MemberSlot[] = [];
  private typings = -1;

  constructor(private readonly host: TextEncoderHost) {}

  /** The columns as they stand (names only grow at the end, so a column keeps its index; its type may change). */
  useColumns(names: readonly string[], types: readonly ColumnType[]): void {
    for (let i = this.columnOf.size; i < names.length; i++) this.columnOf.set(names[i], i + 1);
    this.types = types;
    this.typings = this.host.kinds.typings;
  }

  /** The page's bytes so far, handed over (the caller may keep them: the encoder goes on in other memory), and a new page. */
  take(): Buffer {
    const bytes = this.size > 64 * 1024 ? this.page.subarray(0, this.size) : Buffer.from(this.page.subarray(0, this.size));
    if (this.size > 64 * 1024) this.page = Buffer.allocUnsafe(this.page.length);
    this.size = 0;
    return bytes;
  }

  /** Bytes encoded elsewhere (the library's path), appended to the page. */
  append(bytes: Uint8Array): void {
    this.room(this.size + bytes.length);
    this.page.set(bytes, this.size);
    this.size += bytes.length;
  }

  /**
   * Notes the feature text's kinds and appends its encoding; false (nothing appended) when the text is not a stored
   * feature text's shape (the caller parses it then; kinds noted before that are its own values, noted again the same).
   */
  encode(text: FeatureText): boolean {
    const { bytes, start, cutFrom, cutTo, end } = text;
    const kinds = this.host.kinds;
    if (!bytesAt(bytes, start, FEATURE_START)) return false;
    const idStart = start + FEATURE_START.length - 1;
    const idEnd = boundedValueEnd(bytes, idStart, end);
    if (idEnd < 0 || !bytesAt(bytes, idEnd, GEOMETRY_KEY)) return false;
    const geometryStart = idEnd + GEOMETRY_KEY.length;
    const featureAt = this.size;
    // Encoded values take at most twice the text's bytes (a one-digit number: 5 bytes of text, 10 encoded).
    this.room(featureAt + 2 * (end - start) + 256);

    // The geometry: a point's coordinates read here; anything else parsed alone and built by the library.
    let x = 0;
    let y = 0;
    let z = 0;
    let dimensions = 0;
    let geometryEnd = -1;
    if (bytesAt(bytes, geometryStart, POINT_START)) {
      let at = geometryStart + POINT_START.length;
      for (; dimensions < 4; dimensions++) {
        const from = at;
        for (; at < end; at++) {
          const byte = bytes[at];
          if (!((byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45)) break;
        }
        if (at === from) break;
        const value = numberAt(bytes, from, at);
        if (dimensions === 0) x = value;
        else if (dimensions === 1) y = value;
        else z = value;
        if (bytes[at] !== COMMA) {
          dimensions++;
          break;
        }
        at++;
      }
      if ((dimensions === 2 || dimensions === 3) && bytes[at] === CLOSE_BRACKET && bytes[at + 1] === CLOSE_BRACE) geometryEnd = at + 2;
    }
    let parsed: IParsedGeometry | undefined;
    if (geometryEnd >= 0) {
      kinds.notePoint(dimensions === 3);
    } else {
      geometryEnd = bytesAt(bytes, geometryStart, NULL) ? geometryStart + NULL.length
        : bytes[geometryStart] === OPEN_BRACE ? boundedValueEnd(bytes, geometryStart, end) : -1;
      if (geometryEnd < 0) return false;
      const geometry = JSON.parse(bytes.toString('utf8', geometryStart, geometryEnd)) as Geometry | null;
      kinds.noteGeometry(geometry);
      parsed = this.host.parsedGeometry(geometry, featureAt);
    }
    if (!bytesAt(bytes, geometryEnd, PROPERTIES_KEY)) return false;

    // A point's properties go after its hand-laid tables; any other feature's go to the page as scratch, copied into the library's builder.
    const layout = parsed === undefined ? (kinds.hasZ ? POINT_3D : POINT_2D) : undefined;
    const propertiesAt = featureAt + (layout === undefined ? 0 : layout.properties + 4);
    let out = propertiesAt;
    const page = this.page;
    out = this.copied(page, out, 0, bytes, idStart + 1, idEnd - 1, idEnd, hasEscape(bytes, idStart, idEnd));
    if (out < 0) return false;

    let at = geometryEnd + PROPERTIES_KEY.length;
    if (at === cutFrom) at = cutTo;
    for (let slot = 0; bytes[at] !== CLOSE_BRACE; slot++) {
      if (bytes[at] !== QUOTE) return false;
      const keyEnd = boundedValueEnd(bytes, at, end);
      if (keyEnd < 0 || bytes[keyEnd] !== COLON) return false;
      const member = this.slot(slot, bytes, at, keyEnd);
      const valueStart = keyEnd + 1;
      const first = bytes[valueStart];
      let valueStop: number;
      if (member.namespace) {
        valueStop = boundedValueEnd(bytes, valueStart, end);
        if (valueStop < 0) return false;
      } else if (first === QUOTE) {
        let escaped = false;
        valueStop = -1;
        for (let scan = valueStart + 1; scan < end; scan++) {
          const byte = bytes[scan];
          if (byte === QUOTE) {
            valueStop = scan + 1;
            break;
          }
          if (byte === BACKSLASH) {
            escaped = true;
            scan++;
          }
        }
        if (valueStop < 0) return false;
        const column = this.noted(member, 'string');
        if (column > 0) {
          out = this.types[column] === ColumnType.Json ? this.copied(page, out, column, bytes, valueStart, valueStop, valueStop, false)
            : this.copied(page, out, column, bytes, valueStart + 1, valueStop - 1, valueStop, escaped);
        }
      } else if (first === TRUE_START || first === FALSE_START || first === NULL_START) {
        const word = first === FALSE_START ? 5 : 4;
        valueStop = valueStart + word;
        const column = this.noted(member, first === NULL_START ? null : 'boolean');
        if (column > 0 && first !== NULL_START) {
          if (this.types[column] === ColumnType.Json) out = this.copied(page, out, column, bytes, valueStart, valueStop, valueStop, false);
          else {
            out = page.writeUInt16LE(column, out);
            page[out++] = first === TRUE_START ? 1 : 0;
          }
        }
      } else if (first === OPEN_BRACE || first === OPEN_BRACKET) {
        valueStop = boundedValueEnd(bytes, valueStart, end);
        if (valueStop < 0) return false;
        const column = this.noted(member, 'json');
        if (column > 0) out = this.copied(page, out, column, bytes, valueStart, valueStop, valueStop, false);
      } else {
        let plain = true;
        valueStop = valueStart;
        for (; valueStop < end; valueStop++) {
          const byte = bytes[valueStop];
          if (byte >= 0x30 && byte <= 0x39) continue;
          if (byte === 0x2e || byte === 0x65 || byte === 0x45) plain = false;
          else if (byte !== 0x2d && byte !== 0x2b) break;
        }
        if (valueStop === valueStart) return false;
        const value = numberAt(bytes, valueStart, valueStop);
        if (Number.isNaN(value)) return false;
        const kind = (plain && valueStop - valueStart <= MAX_PLAIN_LENGTH) || Number.isSafeInteger(value) ? 'integer' : 'number';
        const column = this.noted(member, kind);
        if (column > 0) {
          const type = this.types[column];
          if (type === ColumnType.Json) out = this.copied(page, out, column, bytes, valueStart, valueStop, valueStop, false);
          else {
            out = page.writeUInt16LE(column, out);
            if (type === ColumnType.Double) out = page.writeDoubleLE(value, out);
            else {
              // A safe integer as two 32-bit halves: a BigInt per value costs more than the rest of the feature's properties.
              const high = Math.floor(value / TWO_TO_32);
              out = page.writeUInt32LE(value - high * TWO_TO_32, out);
              out = page.writeInt32LE(high, out);
            }
          }
        }
      }
      // The cut-out namespace (FeatureText) is either a member with the comma before it, which ends where this value does, or the first member with the comma after it.
      const next = valueStop === cutFrom ? cutTo : valueStop;
      const after = bytes[next];
      if (after !== COMMA && after !== CLOSE_BRACE) return false;
      at = after === COMMA ? next + 1 : next;
    }
    // The properties must be the last member: anything after them is a foreign member, which the export leaves out.
    if (bytes[at + 1] !== CLOSE_BRACE || at + 2 !== end) return false;

    if (layout === undefined) {
      const built = this.host.library.build(parsed as IParsedGeometry, page.subarray(propertiesAt, out));
      this.room(featureAt + built.length);
      this.page.set(built, featureAt);
      this.size = featureAt + built.length;
    } else {
      page.set(layout.template, featureAt);
      page.writeDoubleLE(x, featureAt + layout.xy);
      page.writeDoubleLE(y, featureAt + layout.xy + 8);
      if (layout.z >= 0) page.writeDoubleLE(dimensions === 3 ? z : 0, featureAt + layout.z);
      page.writeUInt32LE(out - propertiesAt, propertiesAt - 4);
      // Padded to 8 bytes, as the builder ends a feature: the next one's doubles stay aligned.
      while ((out - featureAt) % 8 !== 0) page[out++] = 0;
      page.writeUInt32LE(out - featureAt - 4, featureAt);
      this.size = out;
    }
    kinds.count++;
    return true;
  }

  /** The member at `slot` of the text: the slot's remembered one when the key's bytes are the same, else read anew. */
  private slot(slot: number, bytes: Buffer, start: number, end: number): MemberSlot {
    const seen = this.slots[slot];
    if (seen !== undefined && seen.key.length === end - start) {
      const key = seen.key;
      let same = true;
      for (let i = 0; same && i < key.length; i++) same = key[i] === bytes[start + i];
      if (same) return seen;
    }
    const key = Buffer.from(bytes.subarray(start, end));
    let escaped = false;
    for (let i = 1; i < key.length - 1; i++) if (key[i] === BACKSLASH) escaped = true;
    const name = escaped ? JSON.parse(key.toString('utf8')) as string : key.toString('utf8', 1, key.length - 1);
    const member: MemberSlot = { key, name, namespace: key.equals(NAMESPACE_KEY), column: -1, noted: undefined };
    this.slots[slot] = member;
    return member;
  }

  /** Notes a member's kind (null: a null value) and returns its column, the columns taken again where they moved; 0 for no value to write. */
  private noted(member: MemberSlot, kind: ValueKind | null): number {
    if (member.noted !== kind) {
      this.host.kinds.noteValue(member.name, kind ?? undefined);
      member.noted = kind;
      if (this.typings !== this.host.kinds.typings) this.host.syncColumns();
    }
    if (member.column < 0) member.column = this.columnOf.get(member.name) ?? -1;
    return kind === null || member.column < 0 ? 0 : member.column;
  }

  /**
   * Writes the column's index and the bytes [start, end) as a UTF-8 text value at `out` (decoded from JSON when
   * `escaped`); returns the end of what was written, -1 for an escape JSON does not read. `stop` is the token's end.
   */
  private copied(page: Buffer, out: number, column: number, bytes: Buffer, start: number, end: number, stop: number, escaped: boolean): number {
    out = page.writeUInt16LE(column, out);
    if (escaped) {
      let text: string;
      try {
        text = JSON.parse(bytes.toString('utf8', start - 1, stop)) as string;
      } catch {
        return -1;
      }
      // UTF-8 of a decoded JSON string is never longer than its escaped text: the room taken for the feature covers it.
      const length = page.write(text, out + 4, 'utf8');
      page.writeUInt32LE(length, out);
      return out + 4 + length;
    }
    out = page.writeUInt32LE(end - start, out);
    if (end - start > SHORT_COPY) return out + bytes.copy(page, out, start, end);
    for (let at = start; at < end; at++) page[out++] = bytes[at];
    return out;
  }

  private room(size: number): void {
    if (size <= this.page.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.page.length * 2, size));
    this.page.copy(bigger, 0, 0, this.size);
    this.page = bigger;
  }
}

/** valueEnd's end of the value (or string) at `start`, or -1 when it does not end by `to` (a malformed text is parsed instead). */
function boundedValueEnd(bytes: Buffer, start: number, to: number): number {
  try {
    const found = valueEnd(bytes, start);
    return found > start && found <= to ? found : -1;
  } catch {
    return -1;
  }
}
