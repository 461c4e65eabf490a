// Where an iterate read continues, and at which version: both in one handle, which stays the decimal text of an integer (API.md 5.7).

/** The digits of a handle that hold the position: a HEAD handle has at most these, as before versions. */
const POSITION_DIGITS = 16;
const SCALE = 10n ** BigInt(POSITION_DIGITS);

export interface IteratePosition {
  afterSeq: number;
  /** The version the iteration started at; absent: HEAD. */
  version?: number;
}

/** A read at a version carries it above the position's digits (version + 1, so that version 0 counts), so the next page reads the same version. */
export function iterateHandle(position: IteratePosition): string {
  if (position.version === undefined) return String(position.afterSeq);
  return String(BigInt(position.version + 1) * SCALE + BigInt(position.afterSeq));
}

/** The position of a handle of decimal digits; undefined when it is not one iterateHandle makes. */
export function positionOf(handle: string): IteratePosition | undefined {
  if (!/^\d{1,31}$/.test(handle)) return undefined;
  const value = BigInt(handle);
  if (value < SCALE) return Number.isSafeInteger(Number(handle)) ? { afterSeq: Number(handle) } : undefined;
  const afterSeq = Number(value % SCALE);
  const version = Number(value / SCALE) - 1;
  return Number.isSafeInteger(afterSeq) && Number.isSafeInteger(version) ? { afterSeq, version } : undefined;
}
