// The columns of a feature row as PostgreSQL gets them: texts made in Node, sent by COPY for new rows and as parameters for updates.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Geometry } from '../../geo/geometry.js';
import type { FeatureWrite, FeatureWriteParts } from '../storage.js';
import type { Client } from './database.js';
import { NS } from '../../core/namespace-key.js';
import { spanBytes } from '../../core/namespace-cut.js';
import { hexEwkb } from './ewkb.js';
import { jsonbStandIn } from './nul-stand-in.js';

/**
 * The texts the derived columns are read from: the user properties for jsonb, with the NUL stand-in applied (see
 * `jsonbStandIn`), and the geometry as hex EWKB. The namespace stays out of the jsonb column: its tags have their own
 * column, filters on its other members read the feature text, and leaving it out made each row's jsonb and its GIN
 * entries about half as many (docs/decisions.md, "PostgreSQL ingest").
 */
interface RowTexts {
  properties: string;
  geometry: string | null;
  /** The tags as a PostgreSQL array literal. */
  tags: string;
}

/** A writer that made no parts (a test, a hand-built feature) gets them from its text. */
function partsOf(feature: FeatureWrite): FeatureWriteParts {
  if (feature.parts) return feature.parts;
  const { properties, geometry } = JSON.parse(feature.json) as { properties: Record<string, unknown>; geometry: Geometry | null };
  const { [NS]: _namespace, ...userProperties } = properties;
  return { userProperties: JSON.stringify(userProperties), geometry };
}

const ARRAY_SPECIAL = /["\\]/g;

/** Array elements are quoted, so only quotes and backslashes need escaping; most tags have neither. */
function arrayLiteral(values: readonly string[]): string {
  let literal = '{';
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    const quoted = value.includes('"') || value.includes('\\') ? value.replace(ARRAY_SPECIAL, '\\$&') : value;
    literal += index === 0 ? `"${quoted}"` : `,"${quoted}"`;
  }
  return `${literal}}`;
}

function rowTexts(feature: FeatureWrite): RowTexts {
  const { userProperties, geometry } = partsOf(feature);
  return { properties: jsonbStandIn(userProperties) ?? userProperties, geometry: geometry && hexEwkb(geometry), tags: arrayLiteral(feature.tags) };
}

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A field of COPY's text format; JSON texts carry no raw tab or line break, so most need no change. */
function copyField(text: string | null): string {
  if (text === null) return '\\N';
  return text.search(COPY_SPECIAL) === -1 ? text : text.replace(COPY_SPECIAL, (special) => COPY_ESCAPES[special]);
}

/**
 * A JSON text as a field of COPY's text format: JSON.stringify escapes every control character, so only its
 * backslashes need doubling, and looking for one is cheaper than the regular expression over the whole text.
 */
const copyJsonField = (json: string): string => (json.includes('\\') ? json.replaceAll('\\', '\\\\') : json);

/**
 * COPY data is sent in pieces of at most about this many bytes, so a large write is never held twice whole. The
 * first piece is small and each next one twice as large, so a write of one feature does not take a megabyte.
 */
const COPY_PIECE = 1024 * 1024;
const FIRST_PIECE = 16 * 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit (a surrogate pair's 4 bytes are 2 units). */
const MAX_UTF8_PER_UNIT = 3;

const TAB = 0x09;

/**
 * Each row's fields are encoded into the piece's bytes one by one, with the tabs between them written as bytes. Appending
 * the rows to one string instead made Node flatten a rope of a megabyte of two-byte text before encoding it (6 ms per
 * 1,000 cities, against 1.5-2.5 ms); a line per row made as one template string still allocated its pieces and a flat
 * copy of it per row, about a third of what a bulk write allocates after the parse (docs/decisions.md, "PostgreSQL
 * ingest", seventh round).
 */
function* copyPieces(sid: number, features: readonly FeatureWrite[], version: number | null): Iterable<Buffer> {
  const head = `${sid}`;
  const versionField = version === null ? '\\N' : String(version);
  let piece = Buffer.allocUnsafe(FIRST_PIECE);
  let used = 0;
  for (const feature of features) {
    const texts = rowTexts(feature);
    const cut = spanBytes(feature.namespaceCut);
    // The row's fields before the last, each followed by a tab; the last carries the version, the cut and the line end.
    const fields = [head, copyField(feature.id), copyJsonField(feature.json), copyJsonField(texts.properties), texts.geometry ?? '\\N',
      copyField(feature.geometryType), copyField(texts.tags)];
    const tail = cut === null ? versionField + '\t\\N\n' : `${versionField}\t${cut}\n`;
    let units = tail.length + fields.length;
    for (const field of fields) units += field.length;
    const room = units * MAX_UTF8_PER_UNIT;
    if (used + room > piece.length) {
      if (used > 0) yield piece.subarray(0, used);
      piece = Buffer.allocUnsafe(Math.max(Math.min(2 * piece.length, COPY_PIECE), room));
      used = 0;
    }
    for (const field of fields) {
      used += piece.write(field, used);
      piece[used++] = TAB;
    }
    used += piece.write(tail, used);
  }
  if (used > 0) yield piece.subarray(0, used);
}

/** Inserts new features with one COPY, in their order, so that each gets the next `seq`; jsonb parses only the user properties. */
export async function copyNewRows(client: Client, sid: number, features: readonly FeatureWrite[], version: number | null): Promise<void> {
  await pipeline(Readable.from(copyPieces(sid, features, version)),
    client.query(copyFrom('COPY features (sid, id, feature, properties, geom, geometry_type, tags, version, ns_cut) FROM STDIN')));
}

/**
 * Inserts new features from parameters, in their order (each gets the next `seq`), as one statement that can be part of
 * another: a write of a few features into a space keeping history does it in the statement that records its version,
 * saving COPY's round trips under the version lock (docs/decisions.md, "Versions"). The parameters from `$first` on are
 * those of `insertParameters`; `version` is the SQL of the version that writes the rows.
 */
export function insertRowsSql(sid: string, first: number, version: string): string {
  const [ids, features, properties, geometries, types, tags, spans] = [0, 1, 2, 3, 4, 5, 6].map((offset) => `$${first + offset}`);
  return `INSERT INTO features (sid, id, feature, properties, geom, geometry_type, tags, version, ns_cut)
          SELECT ${sid}, u.id, u.feature::text, u.properties::text::jsonb, u.geometry::geometry, u.geometry_type, u.tags::text[], ${version}, u.ns_cut
            FROM ROWS FROM (unnest(${ids}::text[]), json_array_elements(${features}::json), json_array_elements(${properties}::json),
                            json_array_elements_text(${geometries}::json), unnest(${types}::text[]), unnest(${tags}::text[]), unnest(${spans}::int[]))
              WITH ORDINALITY AS u(id, feature, properties, geometry, geometry_type, tags, ns_cut, ord)
           ORDER BY u.ord`;
}

/** The parameters of `insertRowsSql`. */
export function insertParameters(features: readonly FeatureWrite[]): unknown[] {
  const texts = features.map(rowTexts);
  return [
    features.map((feature) => feature.id),
    `[${features.map((feature) => feature.json).join(',')}]`,
    `[${texts.map((row) => row.properties).join(',')}]`,
    `[${texts.map((row) => (row.geometry === null ? 'null' : `"${row.geometry}"`)).join(',')}]`,
    features.map((feature) => feature.geometryType),
    texts.map((row) => row.tags),
    features.map((feature) => spanBytes(feature.namespaceCut)),
  ];
}

/**
 * Replaces stored rows by `seq`. The texts travel as JSON arrays, which need no escaping in Node, and each
 * element's text comes back exactly as sent; a missing geometry is a JSON null there, read as SQL NULL.
 */
export const UPDATE_ROWS = `
  UPDATE features f
     SET feature = u.feature::text, properties = u.properties::text::jsonb,
         geom = u.geometry::geometry,
         geometry_type = u.geometry_type, tags = u.tags::text[], version = $8::bigint, ns_cut = u.ns_cut
    FROM ROWS FROM (unnest($2::bigint[]), json_array_elements($3::json), json_array_elements($4::json), json_array_elements_text($5::json),
                    unnest($6::text[]), unnest($7::text[]), unnest($9::int[]))
      AS u(seq, feature, properties, geometry, geometry_type, tags, ns_cut)
   WHERE f.sid = $1 AND f.seq = u.seq`;

/** The parameters $2… of UPDATE_ROWS; `version` is the one that changes the rows (null: written without history). */
export function updateParameters(rows: ReadonlyArray<{ seq: number; feature: FeatureWrite }>, version: number | null): unknown[] {
  const texts = rows.map((row) => rowTexts(row.feature));
  return [
    rows.map((row) => row.seq),
    `[${rows.map((row) => row.feature.json).join(',')}]`,
    `[${texts.map((row) => row.properties).join(',')}]`,
    `[${texts.map((row) => (row.geometry === null ? 'null' : `"${row.geometry}"`)).join(',')}]`,
    rows.map((row) => row.feature.geometryType),
    texts.map((row) => row.tags),
    version,
    rows.map((row) => spanBytes(row.feature.namespaceCut)),
  ];
}
