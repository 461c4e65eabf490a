// Statistics of one numeric property over the features of a cell, with a bounded sample for the median.
import { featureHash } from './cell-ids.js';

/** Values kept per cell for the median: exact up to this many, a stable sample of this many beyond. */
export const MEDIAN_SAMPLE_SIZE = 4096;

export interface ValueSummary {
  qty: number;
  min: number | null;
  max: number | null;
  sum: number | null;
  avg: number | null;
  median: number | null;
}

export class ValueStats {
  private qty = 0;
  private min = Infinity;
  private max = -Infinity;
  private sum = 0;
  /**
   * Bottom-k sample by feature hash: the same features whatever the read order, so a median
   * over more than MEDIAN_SAMPLE_SIZE values is approximate but stable. Trimmed when twice full.
   */
  private sample: Array<{ hash: number; value: number }> = [];

  add(value: number, featureId: string): void {
    this.qty++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    this.sum += value;
    this.sample.push({ hash: featureHash(featureId), value });
    if (this.sample.length >= 2 * MEDIAN_SAMPLE_SIZE) this.trim();
  }

  summary(): ValueSummary {
    if (this.qty === 0) return { qty: 0, min: null, max: null, sum: null, avg: null, median: null };
    this.trim();
    const sorted = this.sample.map((entry) => entry.value).sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    const median = sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    return { qty: this.qty, min: this.min, max: this.max, sum: this.sum, avg: this.sum / this.qty, median };
  }

  private trim(): void {
    if (this.sample.length <= MEDIAN_SAMPLE_SIZE) return;
    this.sample.sort((a, b) => a.hash - b.hash);
    this.sample.length = MEDIAN_SAMPLE_SIZE;
  }
}
