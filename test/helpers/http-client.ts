// A small HTTP client for tests: sends JSON with the admin token and returns status, headers and parsed body.
import assert from 'node:assert/strict';
import type { HubProcess } from './hub-process.js';
import { request, textOf } from './http-request.js';

export interface FeatureJson {
  type: string;
  id: string;
  geometry: { type: string; coordinates: unknown } | null;
  properties: Record<string, unknown> & { '@ns:com:here:xyz'?: Namespace };
  [member: string]: unknown;
}

export interface Namespace {
  space: string;
  createdAt: number;
  updatedAt: number;
  tags: string[];
  uuid?: string;
  puuid?: string;
}

/** The members tests read from hub answers; anything else is reachable through the index signature. */
export interface Body {
  type?: string;
  id?: string;
  features?: FeatureJson[];
  inserted?: string[];
  updated?: string[];
  deleted?: string[];
  failed?: Array<{ id: string; position: number; message: string }>;
  handle?: string;
  nextPageToken?: string;
  etag?: string;
  error?: string;
  errorMessage?: string;
  message?: string;
  code?: string;
  [member: string]: unknown;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; `{}` when it is empty or not JSON. */
  body: Body;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Send no Authorization header. */
  anonymous?: boolean;
}

export async function call(hub: HubProcess, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (!options.anonymous && !('authorization' in headers)) headers.authorization = `Bearer ${hub.token}`;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/geo+json';
  const response = await request(hub.url + path, method, headers, body);
  const text = textOf(response.body);
  let parsed: Body = {};
  try {
    if (text !== '') parsed = JSON.parse(text) as Body;
  } catch {
    parsed = {};
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/** Creates a space with a unique id and returns that id. */
export async function createSpace(hub: HubProcess, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await call(hub, 'POST', '/hub/spaces', { body: { title: 'test space', ...extra } });
  if (response.status !== 200) throw new Error(`space creation failed: ${response.status} ${response.text}`);
  return response.body.id as string;
}

/** A fresh space holding `features`, written with one PUT; returns its id. */
export async function createSpaceWith(hub: HubProcess, features: object[], extra: Record<string, unknown> = {}): Promise<string> {
  const id = await createSpace(hub, extra);
  const put = await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features } });
  assert.equal(put.status, 200, put.text);
  return id;
}

/** The ids of every feature of a space, in insertion order, read by following iterate's handles. */
export async function allIds(hub: HubProcess, space: string): Promise<string[]> {
  const ids: string[] = [];
  let handle: string | undefined;
  do {
    const page = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=10000&selection=p.none${handle ? `&handle=${handle}` : ''}`);
    ids.push(...(page.body.features ?? []).map((feature) => feature.id));
    handle = page.body.handle as string | undefined;
  } while (handle !== undefined);
  return ids;
}

/** An ErrorResponse with this status and code whose message holds every one of `parts`. */
export function assertError(response: TestResponse, status: number, code: string, ...parts: string[]): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
  for (const part of parts) assert.ok((response.body.errorMessage ?? '').includes(part), `${part} not in ${response.text}`);
}
