// A test client for the Account and Token APIs: requests carrying the session cookie, and login as a given account.
import assert from 'node:assert/strict';
import type { HubProcess } from './hub-process.js';
import { request, textOf } from './http-request.js';

/** The password of the bootstrap admin in hubs started for these tests (HUB_ADMIN_PASSWORD). */
export const ADMIN_PASSWORD = 'admin-password-0123';

export interface SessionResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined when it is empty or not JSON. */
  json: unknown;
  /** The session cookie pair (`hub_session=…`) of a Set-Cookie header, if any. */
  cookie?: string;
}

export interface SessionRequest {
  /** The `hub_session=…` pair to send. */
  cookie?: string;
  body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function send(hub: HubProcess, method: string, path: string, options: SessionRequest = {}): Promise<SessionResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie !== undefined) headers.cookie = options.cookie;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/json';
  const response = await request(hub.url + path, method, headers, body);
  const text = textOf(response.body);
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  const setCookie = response.headers.getSetCookie().find((line) => line.startsWith('hub_session='));
  return { status: response.status, headers: response.headers, text, json, cookie: setCookie?.split(';')[0] };
}

/** Logs in and returns the session cookie pair. */
export async function login(hub: HubProcess, username: string, password: string): Promise<string> {
  const response = await send(hub, 'POST', '/account-api/login', { body: { username, password } });
  assert.equal(response.status, 200, response.text);
  assert.ok(response.cookie, 'a session cookie is set');
  return response.cookie;
}

/** The `code` member of an error body. */
export const codeOf = (response: SessionResponse): unknown => (response.json as { code?: unknown } | undefined)?.code;
