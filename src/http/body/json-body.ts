// Reads a small JSON object body (a space definition, a project or a single feature), with the documented errors on bad, too deep or malformed-Unicode JSON.
import type { Readable } from 'node:stream';
import { withoutBom } from '../../core/json.js';
import { hubError } from '../../core/errors.js';
import { checkJsonText, checkJsonValue, MAX_JSON_DEPTH } from '../../core/json-limits.js';
import type { IncomingMessage } from 'node:http';
import { bodyStream, readWholeBody } from './body-stream.js';

/** What each kind of body is called in the messages of its errors. */
const BODY_NAMES = { invalidJsonSpace: 'space definition', invalidJsonProject: 'project', invalidJsonFeatures: 'feature', invalidJsonBody: 'request body' };

export async function readJsonObject(stream: Readable, onInvalid: keyof typeof BODY_NAMES): Promise<Record<string, unknown>> {
  const buffer = withoutBom(await readWholeBody(stream));
  const what = BODY_NAMES[onInvalid];
  checkJsonText(buffer, what, MAX_JSON_DEPTH);
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch (error) {
    throw hubError(onInvalid, { detail: (error as Error).message });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw hubError(onInvalid, { detail: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` });
  }
  checkJsonValue(value, what);
  return value as Record<string, unknown>;
}

/**
 * A small JSON object body (a tag, a subscription, an account, a project): read up to `cap` bytes, or the configured
 * limit when that is lower (`maxBody`, 0 for none); larger ones are cut off with 413.
 */
export function readSmallJsonObject(request: IncomingMessage, maxBody: number, cap: number, onInvalid: keyof typeof BODY_NAMES): Promise<Record<string, unknown>> {
  return readJsonObject(bodyStream(request, maxBody === 0 ? cap : Math.min(maxBody, cap)), onInvalid);
}
