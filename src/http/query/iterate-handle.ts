// The iterate handle (API.md 5.7) as a read position: the decimal text of an exact integer, as a previous page returned it.
import { hubError } from '../../core/errors.js';

/**
 * A handle is the position after the last feature of a page: an insertion sequence, or for a virtual or
 * composite space a layer and a sequence in one integer (hub/layers/layer-cursor.ts), hence up to 16 digits.
 * Empty or absent starts at the beginning.
 */
export function parseHandle(handle: string | undefined): number {
  if (handle === undefined || handle === '') return 0;
  if (!/^\d{1,16}$/.test(handle) || !Number.isSafeInteger(Number(handle))) throw hubError('invalidHandle', { handle: handle.slice(0, 40) });
  return Number(handle);
}
