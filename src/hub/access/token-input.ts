// Checks the body of a token creation (API.md 9): which fields it may hold, and their types and ranges.
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { RightsMatrix } from './claims.js';
import { parseRightsMatrix } from './rights-input.js';

interface TokenInput {
  cid?: string;
  /** Unix seconds; absent for a permanent token. */
  exp?: number;
  urm?: RightsMatrix;
  limits?: { maxSpaces?: number; maxFeaturesPerSpace?: number; maxRequestsPerMinute?: number };
  description?: string;
  metadata?: Record<string, unknown>;
  awsPlanId?: string;
}

const MAX_TEXT = 1_000;
/**
 * Each limit and its smallest value other than -1 (unlimited). A rate of 0 would be no limit at all where it is
 * enforced (access-service.ts), so it is refused rather than left to mean the opposite of what it says.
 */
const LIMIT_MINIMUM: Record<string, number> = { maxSpaces: 0, maxFeaturesPerSpace: 0, maxRequestsPerMinute: 1 };
const LIMIT_NAMES = Object.keys(LIMIT_MINIMUM);

const fail = (field: string, problem: string) => hubError('invalidTokenInput', { field, problem });

function text(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw fail(field, `a string of at most ${MAX_TEXT} characters is required`);
  return value;
}

function limits(value: unknown): TokenInput['limits'] {
  if (!isObject(value)) throw fail('limits', 'an object such as {"maxSpaces": 10} is required');
  for (const [name, limit] of Object.entries(value)) {
    if (!LIMIT_NAMES.includes(name)) throw fail('limits', `unknown limit ${JSON.stringify(name)}; known are ${LIMIT_NAMES.join(', ')}`);
    const minimum = LIMIT_MINIMUM[name];
    if (!Number.isSafeInteger(limit) || ((limit as number) < minimum && limit !== -1)) {
      throw fail('limits', `${name} must be a whole number of at least ${minimum}, or -1 for unlimited`);
    }
  }
  return value as TokenInput['limits'];
}

/** Unknown members are refused rather than dropped: a misspelt `exp` must not make a permanent token. */
export function parseTokenInput(body: Record<string, unknown>, nowSeconds: number): TokenInput {
  const known = new Set(['cid', 'exp', 'urm', 'limits', 'description', 'metadata', 'awsPlanId']);
  const unknown = Object.keys(body).find((key) => !known.has(key));
  if (unknown !== undefined) throw fail(JSON.stringify(unknown), `unknown member; a token takes ${[...known].join(', ')}`);
  const input: TokenInput = {};
  const cid = text(body, 'cid');
  if (cid !== undefined) input.cid = cid;
  if (body.exp !== undefined && body.exp !== null) {
    if (!Number.isSafeInteger(body.exp)) throw fail('exp', 'a whole number of Unix seconds is required');
    if ((body.exp as number) <= nowSeconds) throw fail('exp', `it must lie in the future (now is ${nowSeconds})`);
    input.exp = body.exp as number;
  }
  if (body.urm !== undefined) input.urm = parseRightsMatrix(body.urm, 'urm', 'invalidTokenInput');
  if (body.limits !== undefined) input.limits = limits(body.limits);
  const description = text(body, 'description');
  if (description !== undefined) input.description = description;
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) throw fail('metadata', 'an object is required');
    input.metadata = body.metadata;
  }
  const awsPlanId = text(body, 'awsPlanId');
  if (awsPlanId !== undefined) input.awsPlanId = awsPlanId;
  return input;
}
