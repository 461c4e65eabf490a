// The tiles whose content changed between two versions of a space (issue 24, docs/cache-and-changed-tiles.md): what a CDN purges.
import { hubError } from '../../core/errors.js';
import type { Geometry } from '../../geo/geometry.js';
import { candidateCount, tilesIntersecting } from '../../geo/tile-cover.js';
import { type HereTileEncoding, type TileScheme, tileIdOf } from '../../geo/tile-schemes.js';
import type { HistoryStore } from '../../storage/storage.js';
import type { FeatureSource } from '../feature-source.js';
import { storedFeatureId } from '../feature-text.js';
import { CHANGE_KINDS } from './changeset-stream.js';

/** Change rows, and so features, read and compared per step: the memory of a step stays flat over any number of changes. */
const PAGE = 1000;

/**
 * The most tiles one answer may test (about a second of work): a huge change at a fine level is refused with a 400
 * naming a coarser level, rather than run for minutes or held in memory. The answer never holds more tiles.
 */
export const MAX_TESTED_TILES = 250_000;

/** Tiles listed per chunk of the streamed answer. */
const CHUNK = 1000;

export interface TileGrid {
  scheme: TileScheme;
  minLevel: number;
  maxLevel: number;
  hereEncoding: HereTileEncoding;
}

/** What an answer is about: the space's versions `from` (exclusive) up to `to` (inclusive). */
export interface ChangedTilesRange {
  from: number;
  to: number;
}

const geometryOf = (json: string | undefined): Geometry | undefined =>
  json === undefined ? undefined : (JSON.parse(json) as { geometry?: Geometry | null }).geometry ?? undefined;

/** The stored states of `ids` right after `version`, by id; an id without one then is absent. */
async function statesAt(source: FeatureSource, ids: string[], version: number): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for await (const rows of source.query({ ids, limit: ids.length, version })) for (const row of rows) states.set(storedFeatureId(row.json), row.json);
  return states;
}

/**
 * Collects the tiles of every level of the grid that a changed feature's geometry intersects at `from` or at `to`. A
 * feature changed in between is compared in those two states only: one that came and went again, or whose text is the
 * same at both ends, changes no tile. An id found changed twice is looked at twice, which adds no tile.
 */
class TileCollector {
  readonly tiles: Array<Set<string>>;
  private tested = 0;

  constructor(private readonly grid: TileGrid, private readonly range: ChangedTilesRange) {
    this.tiles = Array.from({ length: grid.maxLevel - grid.minLevel + 1 }, () => new Set<string>());
  }

  private add(geometry: Geometry): void {
    const { scheme, minLevel, maxLevel, hereEncoding } = this.grid;
    for (let level = minLevel; level <= maxLevel; level++) {
      this.tested += candidateCount(geometry, scheme, level);
      if (this.tested > MAX_TESTED_TILES) {
        throw hubError('changedTilesTooMany', { from: this.range.from, to: this.range.to, levels: `${minLevel}..${maxLevel}`, limit: MAX_TESTED_TILES });
      }
      const tiles = this.tiles[level - minLevel];
      for (const { x, y } of tilesIntersecting(geometry, scheme, level)) tiles.add(tileIdOf(scheme, level, x, y, hereEncoding));
    }
  }

  async compare(source: FeatureSource, ids: string[]): Promise<void> {
    const [before, after] = await Promise.all([statesAt(source, ids, this.range.from), statesAt(source, ids, this.range.to)]);
    for (const id of ids) {
      const old = before.get(id);
      const now = after.get(id);
      if (old === now) continue;
      for (const geometry of [geometryOf(old), geometryOf(now)]) if (geometry) this.add(geometry);
    }
  }
}

/**
 * The changed tiles of a plain space keeping history, by level, each level's ids sorted as text. The whole set is
 * known (and any 400 thrown) before the answer starts; it is then streamed a chunk at a time.
 */
export async function changedTiles(history: HistoryStore, source: FeatureSource, range: ChangedTilesRange, grid: TileGrid): Promise<AsyncIterable<string>> {
  const collector = new TileCollector(grid, range);
  if (range.to > range.from) {
    for (const kind of CHANGE_KINDS) {
      let after = { version: range.from + 1, seq: 0 };
      for (let rows = await history.changes(source.space.key, kind, after, range.to, PAGE); rows.length > 0;
        rows = rows.length < PAGE ? [] : await history.changes(source.space.key, kind, after, range.to, PAGE)) {
        const last = rows[rows.length - 1];
        after = { version: last.version, seq: last.seq };
        await collector.compare(source, [...new Set(rows.map((row) => storedFeatureId(row.json)))]);
      }
    }
  }
  return render(grid, range, collector.tiles);
}

/** `{"type":"ChangedTiles","tileType":…,"startVersion":…,"endVersion":…,"levels":{"z":[ids…],…}}`. */
async function* render(grid: TileGrid, range: ChangedTilesRange, tiles: Array<Set<string>>): AsyncIterable<string> {
  yield `{"type":"ChangedTiles","tileType":"${grid.scheme}","startVersion":${range.from},"endVersion":${range.to},"levels":{`;
  for (let index = 0; index < tiles.length; index++) {
    const ids = [...tiles[index]].sort();
    yield `${index === 0 ? '' : ','}"${grid.minLevel + index}":[`;
    for (let start = 0; start < ids.length; start += CHUNK) {
      yield `${start === 0 ? '' : ','}${ids.slice(start, start + CHUNK).map((id) => JSON.stringify(id)).join(',')}`;
    }
    yield ']';
  }
  yield '}}';
}
