// Query parameters shared by the feature read routes: filters (author included), selection, force2D and the request's part of the answer key.
import type { ReadOptions } from '../../hub/features/read-pipeline.js';
import { parseSelection } from '../../hub/feature-selection.js';
import { planTransforms } from '../../hub/features/transform-plan.js';
import { hubError } from '../../core/errors.js';
import type { FeatureFilter, PropertyCondition } from '../../core/feature-query.js';
import { parsePropertyFilters } from '../query/property-filters.js';
import type { HandlerContext } from '../request-context.js';

/** Where a feature names who last wrote it (API.md 4.1): spaces keeping one version store no author. */
const AUTHOR_PATH = ['properties', '@ns:com:here:xyz', 'author'];

/** `author=a,b`: the features last written by any of them, as one property condition, so every read path and version takes it. */
export function authorFilter(context: HandlerContext): PropertyCondition[] {
  const authors = context.query.values('author');
  if (authors.length === 0) return [];
  if (authors.some((author) => author === '')) throw hubError('invalidParameter', { name: 'author', problem: 'expected one or more authors, comma-separated' });
  return [{ path: AUTHOR_PATH, op: 'eq', values: [...new Set(authors)] }];
}

export function featureFilter(context: HandlerContext): FeatureFilter {
  return { tags: context.query.tags(), properties: [...parsePropertyFilters(context.query), ...authorFilter(context)] };
}

/** Parameters that never change an answer: the credentials, the client's name for itself, and skipCache (API.md 7). */
const NOT_IN_ANSWER = new Set(['access_token', 'clientid', 'skipcache']);

/**
 * The request as far as it decides the answer: method, path and the other parameters as sent, sorted by their
 * lower-cased names (a stable sort, so the values of one parameter keep their order, and so do `p.a` and `p.A`, which
 * differ). With the content version of the spaces read it names the answer (read-pipeline.ts answerKey), so requests
 * differing in nothing else share an entry of the node's ETag memory.
 */
export function etagKey(context: HandlerContext): string {
  const { method, url } = context.request;
  const start = url.indexOf('?');
  const path = start < 0 ? url : url.slice(0, start);
  const parameters = (start < 0 ? [] : url.slice(start + 1).split('&'))
    .filter((segment) => segment !== '')
    .map((segment) => ({ name: segment.split('=', 1)[0].toLowerCase(), segment }))
    .filter(({ name }) => !NOT_IN_ANSWER.has(name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return `${method} ${path}?${parameters.map(({ segment }) => segment).join('&')}`;
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
