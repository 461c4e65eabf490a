// Shared checks of the hostile-input suites: a refusal in the documented shape, and a space that still answers every read.
import assert from 'node:assert/strict';
import { call, type TestResponse } from './http-client.js';
import type { HubProcess } from './hub-process.js';

/** The error shape of a route: the OGC API exception under `/ogc`, the hub's two shapes elsewhere. */
export function errorShapeOf(path: string): 'ogc' | 'hub' {
  return /^\/ogc(?:[/?]|$)/.test(path) ? 'ogc' : 'hub';
}

/** The body is in the error shape of its path: `{code, description}` under `/ogc`, else one of the hub's `types`. */
export function isErrorShape(body: Record<string, unknown>, path: string, types: string[] = ['error', 'ErrorResponse']): boolean {
  if (errorShapeOf(path) === 'ogc') return typeof body.code === 'string' && typeof body.description === 'string' && Object.keys(body).length === 2;
  return types.includes(body.type as string);
}

/**
 * A 4xx with `code` in one of the documented error shapes (API.md 1.6; the OGC API exception under `/ogc`,
 * whose stream id is in the header only), never a stack trace.
 */
export function assertRefused(response: TestResponse, status: number, code: string, label = ''): void {
  assert.equal(response.status, status, `${label}: ${response.text.slice(0, 500)}`);
  assert.equal(response.body.code, code, `${label}: ${response.text.slice(0, 500)}`);
  const { type } = response.body;
  if (type === undefined && 'description' in response.body) {
    assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description'], label);
    assert.equal(typeof response.body.description, 'string', label);
  } else if (type === 'ErrorResponse') {
    assert.equal(typeof response.body.errorMessage, 'string', label);
    assert.equal(typeof response.body.error, 'string', label);
  } else {
    assert.equal(type, 'error', `${label}: ${response.text.slice(0, 200)}`);
    assert.equal(response.body.statusCode, status, label);
    assert.equal(typeof response.body.message, 'string', label);
  }
  if (type !== undefined) assert.equal(typeof response.body.streamId, 'string', label);
  assert.doesNotMatch(response.text, /\bat .+\.js:\d+/, `${label}: no stack trace`);
}

/** The space still answers search, statistics, count and iterate with 200, and holds `count` features when given. */
export async function assertUsable(hub: HubProcess, space: string, count?: number): Promise<void> {
  for (const read of ['search', 'statistics', 'count', 'iterate']) {
    const response = await call(hub, 'GET', `/hub/spaces/${space}/${read}`);
    assert.equal(response.status, 200, `${read} after a hostile request: ${response.text.slice(0, 300)}`);
    if (read === 'count' && count !== undefined) assert.equal(response.body.count, count, 'nothing was written');
  }
}

/** `{"a":{"a":…1…}}` with `levels` objects, as text (no JSON.stringify of a deep value in the test either). */
export const deepText = (levels: number, leaf = '1'): string => `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;
