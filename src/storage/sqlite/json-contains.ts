// JSON containment with PostgreSQL `jsonb @>` semantics, registered as a SQLite function for `=cs=` filters.

function contains(container: unknown, contained: unknown): boolean {
  if (Array.isArray(container)) {
    if (Array.isArray(contained)) {
      return contained.every((wanted) => container.some((element) => contains(element, wanted)));
    }
    // jsonb lets an array contain a bare scalar at its top level.
    return typeof contained !== 'object' || contained === null
      ? container.some((element) => element === contained)
      : false;
  }
  if (typeof container === 'object' && container !== null) {
    if (typeof contained !== 'object' || contained === null || Array.isArray(contained)) return false;
    const record = container as Record<string, unknown>;
    return Object.entries(contained).every(([key, value]) => key in record && contains(record[key], value));
  }
  return container === contained;
}

/** SQLite function body: both arguments are JSON texts; returns 1 when the first contains the second. */
export function jsonContains(containerJson: unknown, containedJson: unknown): number {
  if (typeof containerJson !== 'string' || typeof containedJson !== 'string') return 0;
  return contains(JSON.parse(containerJson), JSON.parse(containedJson)) ? 1 : 0;
}
