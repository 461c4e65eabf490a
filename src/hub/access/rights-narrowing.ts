// Narrows a requested rights matrix to what an account may grant: its own spaces plus the rights an admin granted it.
import type { AttributeMap, RightsMatrix } from './claims.js';

const isWildcard = (value: unknown): value is string => typeof value === 'string' && value.endsWith('*');

/**
 * The value matching both `a` and `b`, or undefined when they cannot both hold: equal values, or a `*`-prefix and
 * a value it matches (the more specific one is kept; of two prefixes, the longer one when it extends the shorter).
 */
function intersectValue(a: unknown, b: unknown): { value: unknown } | undefined {
  if (JSON.stringify(a) === JSON.stringify(b)) return { value: a };
  if (isWildcard(a) && typeof b === 'string' && b.startsWith(a.slice(0, -1))) return { value: b };
  if (isWildcard(b) && typeof a === 'string' && a.startsWith(b.slice(0, -1))) return { value: a };
  return undefined;
}

/** The map matching exactly the resources both maps match (keys absent from a map are wildcards), or undefined. */
export function intersectMaps(a: AttributeMap, b: AttributeMap): AttributeMap | undefined {
  const result: AttributeMap = { ...a, ...b };
  for (const key of Object.keys(a)) {
    if (!Object.hasOwn(b, key)) continue;
    const both = intersectValue(a[key], b[key]);
    if (!both) return undefined;
    result[key] = both.value;
  }
  return result;
}

/**
 * Each requested attribute map intersected with each map the account holds for that action: `{"owner": aid}` for
 * its own spaces, plus the maps of `granted`. Actions (and services) left without a map are dropped.
 */
export function narrowRights(requested: RightsMatrix, aid: string, granted: RightsMatrix | undefined): RightsMatrix {
  const narrowed: RightsMatrix = {};
  for (const [service, actions] of Object.entries(requested)) {
    const kept: Record<string, AttributeMap[]> = {};
    for (const [action, maps] of Object.entries(actions)) {
      const held: AttributeMap[] = [{ owner: aid }, ...(granted?.[service]?.[action] ?? [])];
      const seen = new Set<string>();
      const result: AttributeMap[] = [];
      for (const map of maps) {
        for (const own of held) {
          const both = intersectMaps(map, own);
          if (!both) continue;
          const key = JSON.stringify(Object.entries(both).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
          if (seen.has(key)) continue;
          seen.add(key);
          result.push(both);
        }
      }
      if (result.length > 0) kept[action] = result;
    }
    if (Object.keys(kept).length > 0) narrowed[service] = kept;
  }
  return narrowed;
}
