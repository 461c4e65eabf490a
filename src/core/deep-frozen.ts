// Freezes a value and everything it holds: a parse shared between requests cannot be changed by one of them.
export function deepFrozen<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const member of Object.values(value)) deepFrozen(member);
  return value;
}
