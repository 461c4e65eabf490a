// Turns a parsed write body (Feature, FeatureCollection or modification list) into validated write entries.
import { isObject } from '../../core/json.js';
import { checkJsonValue } from '../../core/json-limits.js';
import { hubError } from '../../core/errors.js';
import { normalizeFeature } from './feature-input.js';
import type { OnConflict, OnExists, OnNotExists, WriteEntry } from './write-plan.js';

export const ON_EXISTS: readonly OnExists[] = ['patch', 'replace', 'merge', 'delete', 'retain', 'error'];
export const ON_NOT_EXISTS: readonly OnNotExists[] = ['create', 'retain', 'error'];
export const ON_CONFLICT: readonly OnConflict[] = ['error', 'retain', 'replace'];

/**
 * A request body after its root type has been checked. `valuesChecked`: its text showed that every value in it passes
 * `checkJsonValue` (json-limits.ts), so the features are not walked again for it.
 */
export type WriteBody = (
  | { type: 'Feature'; feature: Record<string, unknown> }
  | { type: 'FeatureCollection'; features: unknown[] }
  | { type: 'FeatureModificationList'; modifications: unknown[] }
) & { valuesChecked?: boolean };

export interface EntryDefaults {
  onExists: OnExists;
  onNotExists: OnNotExists;
  onConflict: OnConflict;
  prefixId: string;
}

function pick<T extends string>(value: unknown, allowed: readonly T[], fallback: T, where: string): T {
  if (value === undefined || value === null) return fallback;
  if (allowed.includes(value as T)) return value as T;
  throw hubError('invalidModification', { problem: `${where} is ${JSON.stringify(value)}, expected one of ${allowed.join(', ')}` });
}

function modificationEntries(modifications: unknown[], defaults: EntryDefaults, valuesChecked: boolean): WriteEntry[] {
  const entries: WriteEntry[] = [];
  modifications.forEach((modification, index) => {
    const where = `modifications[${index}]`;
    if (!isObject(modification)) throw hubError('invalidModification', { problem: `${where} is not an object` });
    const rules = {
      onExists: pick(modification.onFeatureExists, ON_EXISTS, defaults.onExists, `${where}.onFeatureExists`),
      onNotExists: pick(modification.onFeatureNotExists, ON_NOT_EXISTS, defaults.onNotExists, `${where}.onFeatureNotExists`),
      onConflict: pick(modification.onMergeConflict, ON_CONFLICT, defaults.onConflict, `${where}.onMergeConflict`),
    };
    const { featureData, featureIds } = modification;
    if (featureData !== undefined && featureData !== null) {
      if (!isObject(featureData) || featureData.type !== 'FeatureCollection' || !Array.isArray(featureData.features)) {
        throw hubError('invalidModification', { problem: `${where}.featureData must be a FeatureCollection` });
      }
      for (const raw of featureData.features) {
        const feature = normalizeFeature(raw, entries.length, defaults.prefixId, undefined, valuesChecked);
        entries.push({ id: feature.id, position: entries.length, feature, ...rules });
      }
    }
    if (featureIds !== undefined && featureIds !== null) {
      if (!Array.isArray(featureIds) || !featureIds.every((id) => typeof id === 'string' && id !== '')) {
        throw hubError('invalidModification', { problem: `${where}.featureIds must be an array of non-empty strings` });
      }
      if (!valuesChecked) checkJsonValue(featureIds, `${where}.featureIds`);
      for (const id of featureIds as string[]) entries.push({ id: defaults.prefixId + id, position: entries.length, ...rules });
    }
  });
  return entries;
}

/** Validates every feature and rejects duplicate ids before anything is written (API.md 4.2). */
export function writeEntries(body: WriteBody, defaults: EntryDefaults): WriteEntry[] {
  let entries: WriteEntry[];
  if (body.type === 'FeatureModificationList') {
    entries = modificationEntries(body.modifications, defaults, body.valuesChecked === true);
  } else {
    const features = body.type === 'Feature' ? [body.feature] : body.features;
    entries = features.map((raw, position) => {
      const feature = normalizeFeature(raw, position, defaults.prefixId, undefined, body.valuesChecked === true);
      return { id: feature.id, position, feature, onExists: defaults.onExists, onNotExists: defaults.onNotExists, onConflict: defaults.onConflict };
    });
  }
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.id)) throw hubError('duplicateFeatureId', { id: entry.id });
    seen.add(entry.id);
  }
  return entries;
}
