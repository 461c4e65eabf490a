// Turns stored feature rows into response texts, transforming only when the request asks for it.
import { createHash } from 'node:crypto';
import { force2D } from '../../geo/coordinates.js';
import type { Geometry } from '../../geo/geometry.js';
import type { FeatureRow } from '../../storage/feature-query.js';
import type { StoredSpace } from '../../storage/storage.js';
import { applySelection, type Selection } from '../feature-selection.js';

export interface ReadOptions {
  force2D: boolean;
  selection?: Selection;
  /** Identifies the request (route and parameters) for the ETag. */
  etagKey: string;
}

/**
 * A FeatureCollection answer: feature texts stream lazily, a page at a time; `trailer` is complete once
 * they have been consumed.
 */
export interface FeatureCollectionStream {
  etag: string;
  cacheTTL?: number;
  features: AsyncIterable<string[]>;
  trailer(): Record<string, unknown>;
}

/**
 * The ETag names the content revision of the space and the request, so it is known before the body is
 * streamed and a matching If-None-Match costs no query. Same request and unchanged data give the same tag.
 * The creation time tells apart a space that was deleted and created again with the same id, whose
 * revision counts from 0 again.
 */
export function contentEtag(space: StoredSpace, key: string): string {
  const hash = createHash('sha1')
    .update(`${space.id}\n${String(space.definition.createdAt)}\n${space.revision}\n${key}`).digest('hex');
  return `"${hash.slice(0, 32)}"`;
}

export function transformText(json: string, options: ReadOptions): string {
  if (!options.force2D && !options.selection) return json;
  let feature = JSON.parse(json) as Record<string, unknown>;
  if (options.force2D && feature.geometry) feature.geometry = force2D(feature.geometry as Geometry);
  if (options.selection) feature = applySelection(feature, options.selection);
  return JSON.stringify(feature);
}

/** Pages of stored rows to pages of response texts; `onPage` sees each page of rows first. */
export async function* renderPages(
  pages: AsyncIterable<FeatureRow[]>,
  options: ReadOptions,
  onPage: (rows: FeatureRow[]) => void = () => {},
): AsyncIterable<string[]> {
  for await (const rows of pages) {
    onPage(rows);
    yield rows.map((row) => transformText(row.json, options));
  }
}
