// What the writers with a header (CSV, FlatGeobuf, GeoPackage, GeoParquet) learn from every feature before they can write it: the property columns and their kinds, the geometry types, whether any geometry is 3D, the count.
import type { Geometry, TransferFeature } from '../transfer-feature.js';
import { hasZ } from './wkt.js';
import type { StoredFeature } from './plain-feature-text.js';
import { firstPositionHasZ, geometryTypeToken, kindOfToken, TokenNames } from './stored-feature-values.js';

export type ValueKind = 'boolean' | 'integer' | 'number' | 'string' | 'json';

/**
 * Integer columns are 64-bit (FlatGeobuf Long, Parquet INT64): a whole number beyond the exact doubles (2^53) is
 * typed as a double, which holds it as well as the JSON number it was parsed from, instead of failing the export.
 */
const kindOf = (value: unknown): ValueKind =>
  typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? (Number.isSafeInteger(value) ? 'integer' : 'number') : typeof value === 'string' ? 'string' : 'json';

export class ColumnKinds {
  /** Every property name in first-seen order, with the kind its non-null values share ('json' when they differ, numbers widen). */
  readonly columns = new Map<string, ValueKind | undefined>();
  readonly geometryTypes = new Set<string>();
  /** Whether any geometry has a third coordinate. */
  hasZ = false;
  count = 0;
  /**
   * How often a column's kind changed after it had one, or hasZ turned true: what a writer that encodes features as they
   * arrive (FlatGeobuf) encoded before such a change is stale, and is encoded again.
   */
  changes = 0;
  /** How often a column was added or took a kind (its first non-null value, or a change): when the columns' types as they stand are to be read again. */
  typings = 0;
  private readonly names = new TokenNames();
  private readonly types = new TokenNames();

  note(feature: TransferFeature): void {
    for (const [key, value] of Object.entries(feature.properties)) this.noteValue(key, value === null || value === undefined ? undefined : kindOf(value));
    this.noteGeometry(feature.geometry);
    this.count++;
  }

  /** A feature's geometry (the count is the caller's to move). */
  noteGeometry(geometry: Geometry | null): void {
    this.geometryTypes.add(geometry?.type ?? 'null');
    if (geometry && !this.hasZ) this.noteZ(hasZ(geometry));
  }

  /** A point's geometry, read from its text (flatgeobuf-text-encoder.ts): the same as noteGeometry for it. */
  notePoint(z: boolean): void {
    this.geometryTypes.add('Point');
    if (z && !this.hasZ) this.noteZ(true);
  }

  /** The same as note() for the parsed feature, read from the text's bytes. */
  noteText(text: StoredFeature): void {
    const { bytes, members } = text;
    for (let i = 0; i < members.length; i += 4) {
      this.noteValue(this.names.of(bytes, members[i], members[i + 1], i / 4), kindOfToken(bytes, members[i + 2], members[i + 3]));
    }
    const type = geometryTypeToken(bytes, text.geometryStart);
    if (type === undefined) {
      const geometry = JSON.parse(bytes.toString('utf8', text.geometryStart, text.geometryEnd)) as Geometry | null;
      this.geometryTypes.add(geometry?.type ?? 'null');
      if (geometry && !this.hasZ) this.noteZ(hasZ(geometry));
    } else {
      this.geometryTypes.add(this.types.of(bytes, type[0], type[1], 0));
      if (!this.hasZ) {
        this.noteZ(firstPositionHasZ(bytes, type[1])
          ?? hasZ(JSON.parse(bytes.toString('utf8', text.geometryStart, text.geometryEnd)) as Geometry));
      }
    }
    this.count++;
  }

  private noteZ(z: boolean): void {
    if (!z || this.hasZ) return;
    this.hasZ = true;
    this.changes++;
  }

  /** A property's value of the given kind (undefined: null): the column keeps the kind all its values share ('json' when they differ, numbers widen). */
  noteValue(key: string, kind: ValueKind | undefined): void {
    const seen = this.columns.get(key);
    if (kind === undefined) {
      if (this.columns.has(key)) return;
      this.columns.set(key, undefined);
      this.typings++;
      return;
    }
    if (seen === kind) return;
    const merged = seen === undefined ? kind
      : (seen === 'integer' && kind === 'number') || (seen === 'number' && kind === 'integer') ? 'number' : 'json';
    if (merged === seen) return;
    if (seen !== undefined) this.changes++;
    this.columns.set(key, merged);
    this.typings++;
  }
}
