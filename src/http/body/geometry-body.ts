// Reads the bare GeoJSON geometry body of POST /spatial (API.md 6.6), with the documented errors for anything else.
import type { Readable } from 'node:stream';
import { hubError } from '../../core/errors.js';
import { withoutBom } from '../../core/json.js';
import { checkJsonText, checkJsonValue, MAX_JSON_DEPTH } from '../../core/json-limits.js';
import { type Geometry, isGeometryType, positionLists } from '../../geo/geometry.js';
import { validateGeometry } from '../../geo/geometry-validation.js';
import { readWholeBody } from './body-stream.js';

/** The newest reference refuses larger search geometries (API.md 6.6). */
export const MAX_SEARCH_COORDINATES = 12_000;

/** What the body is, in the words of the error message: its GeoJSON type, or the JSON kind of value. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'object') {
    const type = (value as { type?: unknown }).type;
    return typeof type === 'string' ? type.slice(0, 40) : 'object';
  }
  return typeof value;
}

export async function readGeometry(stream: Readable): Promise<Geometry> {
  const buffer = withoutBom(await readWholeBody(stream));
  checkJsonText(buffer, 'geometry', MAX_JSON_DEPTH);
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch (error) {
    throw hubError('invalidJsonFeatures', { detail: (error as Error).message });
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof value !== 'object' || value === null || typeof type !== 'string' || !isGeometryType(type)) {
    throw hubError('notAGeometry', { type: kindOf(value) });
  }
  checkJsonValue(value, 'geometry');
  const problem = validateGeometry(value);
  if (problem !== null) throw hubError('invalidQueryGeometry', { problem });
  const geometry = value as Geometry;
  const count = positionLists(geometry).reduce((sum, positions) => sum + positions.length, 0);
  if (count > MAX_SEARCH_COORDINATES) throw hubError('tooManyCoordinates', { count, limit: MAX_SEARCH_COORDINATES });
  return geometry;
}
