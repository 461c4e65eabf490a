// Turns a write plan into the row changes and counter deltas both engines apply: one implementation of the write diff.
import type { FeatureWrite, WritePlan } from '../storage.js';

/** A feature as a write finds it stored: its insertion sequence and its JSON text. */
export interface StoredRow {
  seq: number;
  json: string;
}

export interface WriteDiff {
  inserts: FeatureWrite[];
  updates: Array<{ seq: number; feature: FeatureWrite }>;
  /** The insertion sequences of the stored features to delete. */
  deletes: number[];
  /** Change of the space's feature count and of its data size (characters of feature text). */
  countDelta: number;
  sizeDelta: number;
  timestamp: number;
  /** False when the plan changes nothing: then neither rows nor counters are touched. */
  changed: boolean;
}

function diffWrite(plan: WritePlan, stored: ReadonlyMap<string, StoredRow>): WriteDiff {
  const diff: WriteDiff = { inserts: [], updates: [], deletes: [], countDelta: 0, sizeDelta: 0, timestamp: plan.timestamp, changed: false };
  for (const feature of plan.upserts) {
    const before = stored.get(feature.id);
    if (before) diff.updates.push({ seq: before.seq, feature });
    else diff.inserts.push(feature);
    diff.sizeDelta += feature.json.length - (before?.json.length ?? 0);
  }
  for (const id of plan.deletes) {
    const before = stored.get(id);
    if (!before) continue;
    diff.deletes.push(before.seq);
    diff.sizeDelta -= before.json.length;
  }
  diff.countDelta = diff.inserts.length - diff.deletes.length;
  diff.changed = plan.upserts.length > 0 || diff.deletes.length > 0;
  return diff;
}

/** Runs a planner (of a write or of a further step) on the stored rows it asked for and diffs its plan. */
export function planWrite<P extends { plan: WritePlan }>(stored: ReadonlyMap<string, StoredRow>, planner: (existing: ReadonlyMap<string, string>) => P): { diff: WriteDiff; planned: P } {
  const existing = new Map<string, string>();
  for (const [id, row] of stored) existing.set(id, row.json);
  const planned = planner(existing);
  return { diff: diffWrite(planned.plan, stored), planned };
}
