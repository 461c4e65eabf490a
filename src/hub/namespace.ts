// The `@ns:com:here:xyz` namespace inside feature properties (API.md 4.1).
import { isObject } from '../core/json.js';
import { NS } from '../core/namespace-key.js';

export { NS };

/** The namespace members the server writes and returns; others from input are dropped. */
export interface Namespace {
  space: string;
  createdAt: number;
  updatedAt: number;
  uuid?: string;
  puuid?: string;
  tags: string[];
  /** A space keeping history only (API.md 4.1): the version that last changed the feature, and who wrote it. */
  version?: number;
  author?: string;
}

export function readNamespace(properties: unknown): Record<string, unknown> | undefined {
  if (typeof properties !== 'object' || properties === null) return undefined;
  const namespace = (properties as Record<string, unknown>)[NS];
  return isObject(namespace) ? namespace : undefined;
}
