// DELETE by tags (or of all features) in a logged space: the matching ids a page at a time, for the logging write path.
import type { FeatureFilter } from '../../core/feature-query.js';
import type { FeatureStore, SpaceKey } from '../../storage/storage.js';

/** Features deleted per write: each page is one transaction with its log, so a long delete holds no lock for long. */
export const LOGGED_DELETE_PAGE = 1000;

/**
 * The ids of the features matching `filter`, a page at a time in insertion order. The storage's own
 * deleteMatching removes rows without the write plan, so nothing would be logged; the caller deletes each
 * page through it instead (docs/decisions.md, "Activity log").
 */
export async function* matchingIdPages(features: FeatureStore, space: SpaceKey, filter: FeatureFilter): AsyncIterable<string[]> {
  let afterSeq = 0;
  for (;;) {
    const ids: string[] = [];
    for await (const rows of features.query(space, { ...filter, afterSeq, limit: LOGGED_DELETE_PAGE })) {
      for (const row of rows) {
        ids.push((JSON.parse(row.json) as { id: string }).id);
        afterSeq = row.seq;
      }
    }
    if (ids.length > 0) yield ids;
    if (ids.length < LOGGED_DELETE_PAGE) return;
  }
}
