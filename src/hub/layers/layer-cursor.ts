// Read positions across the layers of a virtual or composite space, as one number: iterate handles stay decimal integers.

/**
 * A position is `layer × 2^44 + seq`: insertion sequences stay below 2^44 (1.7 × 10^13), and with at most 511
 * layers the position stays an exact integer (below 2^53). Layer 0 is a plain space's own position unchanged.
 */
const LAYER_UNIT = 2 ** 44;

export interface LayerPosition { layer: number; seq: number }

export function encodePosition(layer: number, seq: number): number {
  return layer * LAYER_UNIT + seq;
}

export function decodePosition(position: number): LayerPosition {
  const layer = Math.floor(position / LAYER_UNIT);
  return { layer, seq: position - layer * LAYER_UNIT };
}
