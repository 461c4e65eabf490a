// JSON containment with PostgreSQL `jsonb @>` semantics, for engines and matchers that test it outside PostgreSQL.

/** Whether `container` contains `contained` as `jsonb @>` decides it. */
export function jsonContainment(container: unknown, contained: unknown): boolean {
  if (Array.isArray(container)) {
    if (Array.isArray(contained)) {
      return contained.every((wanted) => container.some((element) => jsonContainment(element, wanted)));
    }
    // jsonb lets an array contain a bare scalar at its top level.
    return typeof contained !== 'object' || contained === null
      ? container.some((element) => element === contained)
      : false;
  }
  if (typeof container === 'object' && container !== null) {
    if (typeof contained !== 'object' || contained === null || Array.isArray(contained)) return false;
    const record = container as Record<string, unknown>;
    return Object.entries(contained).every(([key, value]) => key in record && jsonContainment(record[key], value));
  }
  return container === contained;
}
