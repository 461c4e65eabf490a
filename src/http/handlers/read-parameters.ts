// Query parameters shared by the feature read routes: filters, selection, force2D and the ETag key.
import type { ReadOptions } from '../../hub/features/read-pipeline.js';
import { parseSelection } from '../../hub/feature-selection.js';
import { planTransforms } from '../../hub/features/transform-plan.js';
import type { FeatureFilter } from '../../core/feature-query.js';
import { parsePropertyFilters } from '../query/property-filters.js';
import type { HandlerContext } from '../request-context.js';

export function featureFilter(context: HandlerContext): FeatureFilter {
  return { tags: context.query.tags(), properties: parsePropertyFilters(context.query) };
}

/** The request without its credentials identifies the answer for the ETag. */
export function etagKey(context: HandlerContext): string {
  const url = context.request.url.replace(/([?&])access_token=[^&]*/gi, '$1');
  return `${context.request.method} ${url}`;
}

export function readOptions(context: HandlerContext): ReadOptions {
  return {
    transforms: planTransforms({
      force2D: context.query.boolean('force2D', false),
      selection: parseSelection(context.query.values('selection')),
    }),
    etagKey: etagKey(context),
  };
}
