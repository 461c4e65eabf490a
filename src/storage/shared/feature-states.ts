// Every kept state of some features (`version=*`, ADR 002), put in answer order from the engines' two lookups.
import type { FeatureRow } from '../../core/feature-query.js';

export interface StateRow extends FeatureRow { id: string }

/** Each id's superseded states (oldest first, as `history` lists them) and then its current one, the ids in the order asked. */
export function statesInOrder(ids: readonly string[], history: readonly StateRow[], current: readonly StateRow[]): FeatureRow[] {
  const byId = new Map<string, FeatureRow[]>();
  for (const row of [...history, ...current]) {
    const states = byId.get(row.id) ?? [];
    states.push({ seq: row.seq, json: row.json });
    byId.set(row.id, states);
  }
  return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
}
