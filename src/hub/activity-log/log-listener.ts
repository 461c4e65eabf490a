// The activity-log listener of a space definition: how its configuration is read, checked and stored (docs/decisions.md, "Activity log").
import { hubError } from '../../core/errors.js';
import { MAX_ID_LENGTH } from '../../core/id-limits.js';
import { isObject } from '../../core/json.js';
import type { SpaceDefinition } from '../../core/space-definition.js';

/** The connector id clients send (API.md 3.7). */
export const LISTENER_INPUT = 'activity-log';
/** The connector id the hub stores and returns, as the reference later did. */
export const LISTENER = 'activity-log-writer';

export const STORAGE_MODES = ['DIFF_ONLY', 'FULL', 'FEATURE_ONLY'] as const;
export type StorageMode = typeof STORAGE_MODES[number];

export const DEFAULT_STATES = 5;
/** Every log state lists the states kept with it, so this bounds the size of one log feature too. */
export const MAX_STATES = 1000;

/** What the hub keeps of the listener: the log space it writes and how. */
export interface ActivityLogConfig {
  spaceId: string;
  states: number;
  storageMode: StorageMode;
  writeInvalidatedAt: boolean;
}

/** The log space of a source space: its id followed by this suffix. */
export const LOG_SPACE_SUFFIX = '-activity-log';

export const logSpaceId = (sourceId: string): string => `${sourceId}${LOG_SPACE_SUFFIX}`;

function invalid(where: string, expected: string): never {
  throw hubError('spaceValidation', { problem: `The property '${where}' must be ${expected}.` });
}

function readParams(params: unknown, where: string): Omit<ActivityLogConfig, 'spaceId'> {
  if (params !== undefined && params !== null && !isObject(params)) invalid(where, 'an object');
  const given = isObject(params) ? params : {};
  const states = given.states ?? DEFAULT_STATES;
  if (!Number.isSafeInteger(states) || (states as number) < 1 || (states as number) > MAX_STATES) {
    invalid(`${where}.states`, `an integer from 1 to ${MAX_STATES}`);
  }
  const storageMode = given.storageMode ?? 'FULL';
  if (!STORAGE_MODES.includes(storageMode as StorageMode)) invalid(`${where}.storageMode`, `one of ${STORAGE_MODES.join(', ')}`);
  // The Python client sends "true"; the hub keeps and returns a real boolean.
  const flag = given.writeInvalidatedAt ?? false;
  if (flag !== true && flag !== false && flag !== 'true' && flag !== 'false') invalid(`${where}.writeInvalidatedAt`, 'a boolean');
  return { states: states as number, storageMode: storageMode as StorageMode, writeInvalidatedAt: flag === true || flag === 'true' };
}

/**
 * Normalizes the listeners map (already in map form): an `activity-log` (or a returned `activity-log-writer`)
 * configuration becomes the one `activity-log-writer` entry, params checked and defaulted; the log space id
 * is filled in by `withLogSpace`, which knows the space. `null` (a PATCH removing it) removes both.
 */
export function normalizeLogListener(listeners: Record<string, unknown> | null): Record<string, unknown> | null {
  if (listeners === null || !(LISTENER_INPUT in listeners || LISTENER in listeners)) return listeners;
  const { [LISTENER_INPUT]: input, [LISTENER]: stored, ...others } = listeners;
  if (input !== undefined && stored !== undefined) {
    throw hubError('spaceValidation', { problem: `The listeners '${LISTENER_INPUT}' and '${LISTENER}' are the same listener; give one of them.` });
  }
  const [name, configs] = input !== undefined ? [LISTENER_INPUT, input] : [LISTENER, stored];
  if (configs === null) return { ...others, [LISTENER]: null };
  const list = configs as Record<string, unknown>[];
  if (list.length !== 1) invalid(`listeners.${name}`, 'an array of exactly one configuration');
  const { params, ...rest } = list[0];
  return { ...others, [LISTENER]: [{ ...rest, params: readParams(params, `listeners.${name}[0].params`) }] };
}

/** Whether a (normalized) listeners map sets the activity log. */
export const setsLogListener = (listeners: unknown): boolean => isObject(listeners) && Array.isArray(listeners[LISTENER]);

/** The listener configuration of a definition, undefined when it logs nothing. */
export function logListenerOf(definition: SpaceDefinition): ActivityLogConfig | undefined {
  const listeners = definition.listeners;
  if (!isObject(listeners)) return undefined;
  const configs = listeners[LISTENER];
  if (!Array.isArray(configs) || !isObject(configs[0]) || !isObject(configs[0].params)) return undefined;
  const params = configs[0].params;
  return typeof params.spaceId === 'string' ? params as unknown as ActivityLogConfig : undefined;
}

/**
 * Completes the listener of space `id`'s definition with its log space id, after checking what the log
 * needs: feature uuids (the log chains states by them) and room for the derived id. Changes `definition`.
 */
export function withLogSpace(id: string, definition: SpaceDefinition): void {
  const listeners = definition.listeners;
  if (!isObject(listeners) || !setsLogListener(listeners)) return;
  if (definition.enableUUID !== true) throw hubError('activityLogWithoutUUID', { listener: LISTENER_INPUT });
  const spaceId = logSpaceId(id);
  if (spaceId.length > MAX_ID_LENGTH) {
    invalid('id', `at most ${MAX_ID_LENGTH - LOG_SPACE_SUFFIX.length} characters long for a space with an activity log (its log space is '<id>${LOG_SPACE_SUFFIX}')`);
  }
  const [config] = listeners[LISTENER] as Array<{ params: Record<string, unknown> }>;
  config.params = { spaceId, ...config.params };
}
