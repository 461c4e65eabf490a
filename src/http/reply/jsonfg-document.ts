// JSON-FG (OGC Features and Geometries JSON, draft 0.2) answers: the media type and the members a document holds besides GeoJSON's.
import { CRS84 } from '../query/ogc-parameters.js';

export const JSON_FG_TYPE = 'application/vnd.ogc.fg+json';

/** The requirements class every answer meets; the only one, as `featureSchema` (types-schemas) is not given. */
export const JSON_FG_CORE = 'http://www.opengis.net/spec/json-fg-1/0.2/conf/core';

/**
 * The root's own members: its conformance, the feature type (the collection: every feature of a space is of one type)
 * and the CRS of `place`, which the hub leaves null as it serves CRS84 alone, the CRS of `geometry`.
 */
export const jsonFgRoot = (spaceId: string): Record<string, unknown> => ({ conformsTo: [JSON_FG_CORE], featureType: spaceId, coordRefSys: CRS84 });

/** One JSON-FG feature (as `jsonFgFeatureTexts` shaped it) as a document: the root members before its own. */
export function jsonFgItem(spaceId: string, feature: string): string {
  const root = JSON.stringify(jsonFgRoot(spaceId));
  return `${root.slice(0, -1)},${feature.slice(1)}`;
}
