// Hexbin clustering (API.md 6.4): features counted per H3 cell, with optional statistics of one property.
import { cellToBoundary, cellToLatLng, isPentagon, latLngToCell } from 'h3-js';
import type { BBox } from '../../geo/bbox.js';
import type { HexbinRequest, HexbinSampling } from './clustering-options.js';
import { featureHash, hexCellId } from './cell-ids.js';
import { clipRing } from './clip-ring.js';
import { featureBBox, firstPosition, numericProperty, type ClusteredFeature } from './clustered-feature.js';
import { ValueStats } from './value-stats.js';

/** Default H3 resolution per zoom level 0..22 (API.md 6.4); deeper levels use the last. */
const DEFAULT_H3_RESOLUTIONS = [2, 2, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 11, 12, 13, 13, 13, 13, 13];
const MAX_H3_RESOLUTION = 13;

/** One in this many features is kept, chosen by the hash of its id. */
const SAMPLING_DENOMINATORS: Record<HexbinSampling, number> = { off: 1, low: 8, lowmed: 32, med: 128, medhigh: 1024, high: 4096 };

/** The zoom level of a bbox for hexbin: `round(log2(360 / width))`, within 0..22. */
export function hexbinZoom(bbox: BBox): number {
  const width = Math.abs(bbox[2] - bbox[0]);
  if (width === 0) return DEFAULT_H3_RESOLUTIONS.length - 1;
  return clamp(Math.round(Math.log2(360 / width)), 0, DEFAULT_H3_RESOLUTIONS.length - 1);
}

/**
 * The H3 resolution: the absolute one capped at default + 2 (or the default), plus the relative
 * one, within 0..13.
 */
export function hexbinResolution(request: HexbinRequest, zoom: number): number {
  const standard = DEFAULT_H3_RESOLUTIONS[clamp(zoom, 0, DEFAULT_H3_RESOLUTIONS.length - 1)];
  const start = request.absoluteResolution === undefined ? standard : Math.min(request.absoluteResolution, standard + 2);
  return clamp(start + request.relativeResolution, 0, MAX_H3_RESOLUTION);
}

interface Cell {
  qty: number;
  stats?: ValueStats;
}

/** Aggregates features one at a time; holds one entry per non-empty cell, never the features. */
export class HexbinAggregator {
  private readonly cells = new Map<string, Cell>();
  private readonly resolution: number;
  private readonly path: string[] | undefined;
  private readonly denominator: number;

  constructor(private readonly request: HexbinRequest, private readonly zoom: number, private readonly clipBox: BBox | undefined) {
    this.resolution = hexbinResolution(request, zoom);
    this.path = request.property?.split('.');
    this.denominator = SAMPLING_DENOMINATORS[request.sampling];
  }

  add(feature: ClusteredFeature): void {
    if (this.denominator > 1 && featureHash(feature.id) % this.denominator !== 0) return;
    const position = this.positionOf(feature);
    if (position === undefined) return;
    const index = latLngToCell(position[1], position[0], this.resolution);
    let cell = this.cells.get(index);
    if (cell === undefined) {
      cell = { qty: 0, stats: this.path === undefined ? undefined : new ValueStats() };
      this.cells.set(index, cell);
    }
    cell.qty++;
    if (cell.stats !== undefined && this.path !== undefined) {
      const value = numericProperty(feature, this.path);
      if (value !== undefined) cell.stats.add(value, feature.id);
    }
  }

  /** The output features as JSON texts, ordered by cell index. */
  features(): string[] {
    const result: string[] = [];
    for (const index of [...this.cells.keys()].sort()) {
      const text = this.cellFeature(index, this.cells.get(index) as Cell);
      if (text !== undefined) result.push(text);
    }
    return result;
  }

  /** singlecoord: the first coordinate; otherwise the centre of the feature's bounding box. */
  private positionOf(feature: ClusteredFeature): [number, number] | undefined {
    if (this.request.singlecoord) {
      const first = firstPosition(feature);
      return first === undefined ? undefined : [first[0], first[1]];
    }
    const box = featureBBox(feature);
    return box === null ? undefined : [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2];
  }

  private cellFeature(index: string, cell: Cell): string | undefined {
    let ring = cellToBoundary(index, true) as Array<[number, number]>;
    if (this.clipBox !== undefined) {
      const clipped = clipRing(ring, this.clipBox);
      if (clipped === undefined) return undefined;
      ring = clipped;
    }
    const [latitude, longitude] = cellToLatLng(index);
    const centroid = [longitude, latitude];
    const aggregation = cell.stats === undefined || this.request.property === undefined
      ? { qty: cell.qty }
      : { [this.request.property]: cell.stats.summary() };
    const idKey = this.clipBox === undefined ? index : `${index}/${this.clipBox.join(',')}`;
    const properties: Record<string, unknown> = {
      kind: 'H3', kind_detail: index, resolution: this.resolution, level: this.zoom, aggregation, pentagon: isPentagon(index),
    };
    if (this.request.pointmode) properties.hexagon = [ring];
    else properties.centroid = centroid;
    const geometry = this.request.pointmode ? { type: 'Point', coordinates: centroid } : { type: 'Polygon', coordinates: [ring] };
    return JSON.stringify({ type: 'Feature', id: hexCellId(idKey), geometry, properties });
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
