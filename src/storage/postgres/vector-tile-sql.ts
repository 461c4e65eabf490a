// The SQL of a vector tile in PostgreSQL: ST_AsMVTGeom for the geometry and a jsonb of attributes that ST_AsMVT expands.
import type { VectorTileRequest } from '../../core/vector-tile-request.js';
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

/**
 * One statement around the filtered, ordered, limited feature SELECT (`where`, with `limit` as a parameter).
 * Geometries are first cut to the buffered tile in degrees, which also keeps Mercator clear of the poles,
 * then projected and fitted to the tile by ST_AsMVTGeom (clipped, snapped to the grid). `probed` makes it a probed
 * area read (probed-area.ts): a second column then says whether the area was dense, and the tile empty for it.
 */
export function vectorTileSql(request: VectorTileRequest, where: string, limit: string, params: SqlParams, probed: boolean): string {
  const { tile, clip } = tileFrame(request);
  const clipBox = `ST_MakeEnvelope(${clip.map((value) => `${params.add(value)}::float8`).join(', ')}, 4326)`;
  const tileBox = `ST_MakeBox2D(ST_Point(${params.add(tile[0])}::float8, ${params.add(tile[1])}::float8),
                                ST_Point(${params.add(tile[2])}::float8, ${params.add(tile[3])}::float8))`;
  const clipped = `ST_ClipByBox2D(f.geom, ${clipBox})`;
  const projected = request.projection === 'mercator' ? `ST_Transform(${clipped}, 3857)` : clipped;
  const extent = params.add(request.extent);
  const buffer = params.add(request.buffer);
  const attributes = request.flatten ? FLAT : PLAIN;
  const features = probed ? PROBED(limit) : `SELECT f.seq, f.id, f.geom, f.feature FROM features f WHERE ${where} ORDER BY f.seq LIMIT ${limit}`;
  const encoded = `SELECT ST_AsMVT(t, ${params.add(request.layer)}::text, ${extent}::int, 'geom')${probed ? `, ${DENSE(limit)}` : ''} FROM (
            SELECT ST_AsMVTGeom(${projected}, ${tileBox}, ${extent}::int, ${buffer}::int, true) AS geom, ${attributes} AS attributes
              FROM (${features}) f,
                   LATERAL (SELECT ${PROPERTIES} AS props) p
          ) t WHERE t.geom IS NOT NULL`;
  if (!probed) return encoded;
  return `WITH probe AS MATERIALIZED (SELECT f.seq, f.id, f.geom, f.feature FROM features f WHERE ${where} LIMIT ${PROBE(limit)})
          ${encoded}`;
}
