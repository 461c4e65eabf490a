// The iterate handle (API.md 5.7) as a read position: the decimal text of an exact integer, as a previous page returned it.
import { hubError } from '../../core/errors.js';
import { type IteratePosition, positionOf } from '../../hub/versions/iterate-position.js';

/**
 * A handle is the position after the last feature of a page: an insertion sequence, or for a virtual or
 * composite space a layer and a sequence in one integer (hub/layers/layer-cursor.ts), hence up to 16 digits;
 * a read at a version carries the version in the digits above (hub/versions/iterate-position.ts).
 * Empty or absent starts at the beginning.
 */
export function parseHandle(handle: string | undefined): IteratePosition {
  if (handle === undefined || handle === '') return { afterSeq: 0 };
  const position = positionOf(handle);
  if (!position) throw hubError('invalidHandle', { handle: handle.slice(0, 40) });
  return position;
}

/**
 * The handle of an OGC items page: its insertion sequence alone, the version staying in the page's `version` parameter
 * (the `next` link keeps it); a handle of a hub iterate at a version is not one of its.
 */
export function parseHeadHandle(handle: string | undefined): number {
  const position = parseHandle(handle);
  if (position.version !== undefined) throw hubError('invalidHandle', { handle: (handle ?? '').slice(0, 40) });
  return position.afterSeq;
}
