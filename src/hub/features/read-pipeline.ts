// Turns stored feature rows into response texts, transforming only when the request asks for it.
import { createHash } from 'node:crypto';
import { force2D } from '../../geo/coordinates.js';
import type { Geometry } from '../../geo/geometry.js';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { FeatureStore, StoredSpace } from '../../storage/storage.js';
import { applySelection, type Selection } from '../feature-selection.js';

export interface ReadOptions {
  force2D: boolean;
  selection?: Selection;
  /** Identifies the request (route and parameters) for the ETag. */
  etagKey: string;
}

/**
 * A FeatureCollection answer: feature texts stream lazily, a page at a time, each page the features'
 * JSON joined by commas; `trailer` is complete once they have been consumed.
 */
export interface FeatureCollectionStream {
  etag: string;
  cacheTTL?: number;
  features: AsyncIterable<string | Buffer>;
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

/**
 * The response pages of a query. Without a transformation the database's joined page texts go out as they
 * are; with one, each feature is transformed and the page joined here. `onPage` sees each page's size and
 * last insertion sequence.
 */
export async function* renderPages(
  features: FeatureStore,
  query: FeatureQuery,
  options: ReadOptions,
  onPage: (count: number, lastSeq: number) => void = () => {},
): AsyncIterable<string | Buffer> {
  if (!options.force2D && !options.selection) {
    for await (const page of features.queryText(query)) {
      onPage(page.count, page.lastSeq);
      yield page.text;
    }
    return;
  }
  for await (const rows of features.query(query)) {
    onPage(rows.length, rows[rows.length - 1].seq);
    yield rows.map((row) => transformText(row.json, options)).join(',');
  }
}
