// The SQL of a vector tile in PostgreSQL: ST_AsMVTGeom for the geometry and a jsonb of attributes that ST_AsMVT expands.
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import type { BBox } from '../../geo/bbox.js';
import { tileFrame } from '../../geo/vector-tile.js';
import type { SqlParams } from './filter-sql.js';
import { DENSE, PROBE, PROBED } from './probed-area.js';

/**
 * The feature's properties as json, read from the stored text, so nested values keep their text as sent
 * (the jsonb column would reorder keys and add spaces). json cannot turn `\u0000` into text: such a feature
 * is read with U+FFFD in its place, as the indexed copies hold it (nul-stand-in.ts).
 */
const PROPERTIES = `(CASE WHEN strpos(f.feature, '\\u0000') = 0 THEN f.feature
                          ELSE regexp_replace(f.feature, '(?<!\\\\)((?:\\\\\\\\)*)\\\\u0000', '\\1\\\\ufffd', 'g') END)::json -> 'properties'`;

/** A json value as an attribute: objects and arrays as their JSON text, scalars as they are (ST_AsMVT drops null). */
const ATTRIBUTE = `CASE WHEN json_typeof(e.value) IN ('object', 'array') THEN to_jsonb(e.value::text) ELSE e.value::jsonb END`;

/** Top-level properties, then the feature id (which wins over a property named `id`). */
const PLAIN = `coalesce((SELECT jsonb_object_agg(e.key, ${ATTRIBUTE})
                  FROM json_each(CASE WHEN json_typeof(p.props) = 'object' THEN p.props ELSE '{}' END) e), '{}')
               || jsonb_build_object('id', f.id)`;

/** Every leaf under properties as `properties.<dotted.path>` (arrays are leaves), then `properties.id`. */
const FLAT = `coalesce((WITH RECURSIVE walk(key, value) AS (
                  SELECT 'properties.' || e.key, e.value
                    FROM json_each(CASE WHEN json_typeof(p.props) = 'object' THEN p.props ELSE '{}' END) e
                  UNION ALL
                  SELECT w.key || '.' || e.key, e.value
                    FROM walk w, json_each(CASE WHEN json_typeof(w.value) = 'object' THEN w.value ELSE '{}' END) e)
                SELECT jsonb_object_agg(e.key, ${ATTRIBUTE}) FROM walk e WHERE json_typeof(e.value) <> 'object'), '{}')
              || jsonb_build_object('properties.id', f.id)`;

/** SQL expressions of a tile's values: parameters of a single tile's statement, columns of a batch's row. */
interface TileValues {
  /** West, south, east, north of the buffered tile in degrees, to cut geometries to. */
  clip: string[];
  /** The tile's bounds in its projection's units. */
  tile: string[];
  extent: string;
  buffer: string;
  layer: string;
}

/** The tile's encoding (ST_AsMVT) of the features `features` selects, a second column `extra` when given. */
function encodedTile(request: Pick<VectorTileRequest, 'projection' | 'flatten'>, values: TileValues, features: string, extra?: string): string {
  const clipped = `ST_ClipByBox2D(f.geom, ST_MakeEnvelope(${values.clip.join(', ')}, 4326))`;
  const projected = request.projection === 'mercator' ? `ST_Transform(${clipped}, 3857)` : clipped;
  const tileBox = `ST_MakeBox2D(ST_Point(${values.tile[0]}, ${values.tile[1]}), ST_Point(${values.tile[2]}, ${values.tile[3]}))`;
  const attributes = request.flatten ? FLAT : PLAIN;
  return `SELECT ST_AsMVT(t, ${values.layer}, ${values.extent}, 'geom')${extra === undefined ? '' : `, ${extra}`} FROM (
            SELECT ST_AsMVTGeom(${projected}, ${tileBox}, ${values.extent}, ${values.buffer}, true) AS geom, ${attributes} AS attributes
              FROM (${features}) f,
                   LATERAL (SELECT ${PROPERTIES} AS props) p
          ) t WHERE t.geom IS NOT NULL`;
}

/**
 * One statement around the filtered, ordered, limited feature SELECT (`where` over `from`, with `limit` as a parameter).
 * Geometries are first cut to the buffered tile in degrees, which also keeps Mercator clear of the poles,
 * then projected and fitted to the tile by ST_AsMVTGeom (clipped, snapped to the grid).
 */
export function vectorTileSql(request: VectorTileRequest, where: string, limit: string, params: SqlParams, from = 'features'): string {
  const { tile, clip } = tileFrame(request);
  const float = (value: number) => `${params.add(value)}::float8`;
  const values: TileValues = {
    clip: clip.map(float), tile: tile.map(float),
    extent: `${params.add(request.extent)}::int`, buffer: `${params.add(request.buffer)}::int`, layer: `${params.add(request.layer)}::text`,
  };
  return encodedTile(request, values, `SELECT f.seq, f.id, f.geom, f.feature FROM ${from} f WHERE ${where} ORDER BY f.seq LIMIT ${limit}`);
}

/** The columns of a batch's row, one row per tile (`n` numbers them from 1), and their SQL types. */
export const TILE_BATCH_COLUMNS = {
  n: 'int', sid: 'bigint', after: 'bigint', lim: 'bigint',
  west: 'float8', south: 'float8', east: 'float8', north: 'float8',
  clip_west: 'float8', clip_south: 'float8', clip_east: 'float8', clip_north: 'float8',
  tile_west: 'float8', tile_south: 'float8', tile_east: 'float8', tile_north: 'float8',
  extent: 'int', buffer: 'int', layer: 'text',
} as const;

export type TileBatchRow = Record<keyof typeof TILE_BATCH_COLUMNS, number | string>;

/** A batch row's values for one unfiltered tile of a space: the features after `after` meeting `box`, at most `limit`. */
export function tileBatchRow(n: number, sid: number, after: number, limit: number, box: BBox, request: VectorTileRequest): TileBatchRow {
  const { tile, clip } = tileFrame(request);
  return {
    n, sid, after, lim: limit, west: box[0], south: box[1], east: box[2], north: box[3],
    clip_west: clip[0], clip_south: clip[1], clip_east: clip[2], clip_north: clip[3],
    tile_west: tile[0], tile_south: tile[1], tile_east: tile[2], tile_north: tile[3],
    extent: request.extent, buffer: request.buffer, layer: request.layer,
  };
}

/**
 * Many unfiltered tiles of one shape (projection, flattening) in one statement: `$1` is a JSON array of batch rows,
 * and each row's tile is a probed area read (probed-area.ts) of the tile `vectorTileSql` encodes, its values read from the row. Answers the rows'
 * `n`, tile and whether the tile's area was dense (then its tile is empty, and it must be read on its own).
 */
export function tileBatchSql(request: Pick<VectorTileRequest, 'projection' | 'flatten'>): string {
  const columns = Object.entries(TILE_BATCH_COLUMNS).map(([name, type]) => `${name} ${type}`).join(', ');
  const box = 'ST_MakeEnvelope(r.west, r.south, r.east, r.north, 4326)';
  const values: TileValues = {
    clip: ['r.clip_west', 'r.clip_south', 'r.clip_east', 'r.clip_north'],
    tile: ['r.tile_west', 'r.tile_south', 'r.tile_east', 'r.tile_north'],
    extent: 'r.extent', buffer: 'r.buffer', layer: 'r.layer',
  };
  return `SELECT r.n, m.* FROM json_to_recordset($1::json) AS r(${columns})
           CROSS JOIN LATERAL (
             WITH probe AS MATERIALIZED (SELECT f.seq, f.id, f.geom, f.feature FROM features f
                                          WHERE f.sid = r.sid AND f.seq > r.after AND f.geom && ${box} AND ST_Intersects(f.geom, ${box})
                                          LIMIT ${PROBE('r.lim')})
             ${encodedTile(request, values, PROBED('r.lim'), DENSE('r.lim'))}
           ) m`;
}
