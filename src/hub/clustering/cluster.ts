// Clustering of the features of a bbox or tile, read page by page, into cell features (API.md 6.4).
import type { FeatureRow } from '../../core/feature-query.js';
import type { BBox } from '../../geo/bbox.js';
import type { Tile } from '../../geo/tile-schemes.js';
import { checkClusterableTile, type ClusteringRequest } from './clustering-options.js';
import { readFeature } from './clustered-feature.js';
import { HexbinAggregator, hexbinZoom } from './hexbin.js';
import { QuadbinAggregator } from './quadbin.js';

export interface ClusterArea {
  /** The area the features were read for: the bbox, or the tile's (margin-enlarged) bounds. */
  bbox: BBox;
  /** The tile for tile reads: its level is the zoom and its children the quadbin cells. */
  tile?: Tile;
  /** Cut cell polygons to `bbox`. */
  clip: boolean;
}

/**
 * The cell features (JSON texts) of the features in `pages`. Memory grows with the number of
 * non-empty cells (plus the median sample of hexbin statistics), never with the number of features.
 */
export async function cluster(
  request: ClusteringRequest, area: ClusterArea, pages: AsyncIterable<readonly FeatureRow[]>,
): Promise<string[]> {
  if (area.tile !== undefined) checkClusterableTile(area.tile);
  const clipBox = area.clip ? area.bbox : undefined;
  const aggregator = request.kind === 'hexbin'
    ? new HexbinAggregator(request, area.tile?.level ?? hexbinZoom(area.bbox), clipBox)
    : new QuadbinAggregator(request, area, clipBox);
  for await (const page of pages) {
    for (const row of page) {
      const feature = readFeature(row.json);
      if (feature !== undefined) aggregator.add(feature);
    }
  }
  return aggregator.features();
}
