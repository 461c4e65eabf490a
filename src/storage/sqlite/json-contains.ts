// JSON containment with PostgreSQL `jsonb @>` semantics, registered as a SQLite function for `=cs=` filters.
import { jsonContainment } from '../../core/json-containment.js';

/** SQLite function body: both arguments are JSON texts; returns 1 when the first contains the second. */
export function jsonContains(containerJson: unknown, containedJson: unknown): number {
  if (typeof containerJson !== 'string' || typeof containedJson !== 'string') return 0;
  return jsonContainment(JSON.parse(containerJson), JSON.parse(containedJson)) ? 1 : 0;
}
