// Parsing and validation of `clustering` and its `clustering.*` options (API.md 6.4) into a typed request.
import { hubError, type HubError } from '../../core/errors.js';
import type { JsonScalar } from '../../core/feature-query.js';
import { typeScalar } from '../../core/typed-values.js';
import type { Tile } from '../../geo/tile-schemes.js';

export type HexbinSampling = 'off' | 'low' | 'lowmed' | 'med' | 'medhigh' | 'high';
export type QuadbinCountMode = 'real' | 'estimated' | 'mixed' | 'bool';

export interface HexbinRequest {
  kind: 'hexbin';
  absoluteResolution?: number;
  relativeResolution: number;
  /** Dotted path below `properties` whose numeric values get statistics. */
  property?: string;
  pointmode: boolean;
  singlecoord: boolean;
  sampling: HexbinSampling;
}

export interface QuadbinRequest {
  kind: 'quadbin';
  absoluteResolution?: number;
  relativeResolution: number;
  countmode: QuadbinCountMode;
  noBuffer: boolean;
}

export type ClusteringRequest = HexbinRequest | QuadbinRequest;

/** Kept to the numbers a request can sensibly ask for; larger resolutions are capped later (API.md 6.4). */
const MAX_ABSOLUTE_RESOLUTION = 31;
const HEXBIN_RELATIVE = { min: -2, max: 2 };
const QUADBIN_RELATIVE = { min: 0, max: 4 };
const SAMPLINGS: readonly HexbinSampling[] = ['off', 'low', 'lowmed', 'med', 'medhigh', 'high'];
const COUNT_MODES: readonly QuadbinCountMode[] = ['real', 'estimated', 'mixed', 'bool'];

const HEXBIN_OPTIONS = ['absoluteResolution', 'resolution', 'relativeResolution', 'property', 'pointmode', 'singlecoord', 'sampling'];
const QUADBIN_OPTIONS = ['absoluteResolution', 'resolution', 'relativeResolution', 'countmode', 'noBuffer'];

type OptionValue = JsonScalar;

/**
 * `clustering` (the parameter's value, undefined when absent) and the `clustering.*` options by
 * the name after the dot. Option names match case-insensitively, like the named parameters.
 * Returns undefined when no clustering is asked for; options without `clustering` are ignored.
 */
export function parseClustering(clustering: string | undefined, options: ReadonlyMap<string, string>): ClusteringRequest | undefined {
  if (clustering === undefined) return undefined;
  if (clustering !== 'hexbin' && clustering !== 'quadbin') {
    throw hubError('invalidClustering', { name: 'clustering', problem: `Use hexbin or quadbin; got ${JSON.stringify(clustering)}.` });
  }
  const known = clustering === 'hexbin' ? HEXBIN_OPTIONS : QUADBIN_OPTIONS;
  const values = new Map<string, { name: string; text: string; value: OptionValue }>();
  for (const [name, text] of options) {
    const canonical = known.find((option) => option.toLowerCase() === name.toLowerCase());
    if (canonical === undefined) {
      throw hubError('invalidClustering', { name, problem: `Unknown ${clustering} option; the options are ${known.join(', ')}.` });
    }
    values.set(canonical, { name, text, value: typeScalar(text) });
  }
  const read = new OptionReader(values);
  // `resolution` is the deprecated alias: of hexbin's absolute resolution, of quadbin's relative one.
  if (clustering === 'hexbin') {
    return {
      kind: 'hexbin',
      absoluteResolution: read.integer('absoluteResolution', 0, MAX_ABSOLUTE_RESOLUTION) ?? read.integer('resolution', 0, MAX_ABSOLUTE_RESOLUTION),
      relativeResolution: read.integer('relativeResolution', HEXBIN_RELATIVE.min, HEXBIN_RELATIVE.max) ?? 0,
      property: read.propertyPath('property'),
      pointmode: read.boolean('pointmode') ?? false,
      singlecoord: read.boolean('singlecoord') ?? false,
      sampling: read.oneOf('sampling', SAMPLINGS) ?? 'off',
    };
  }
  return {
    kind: 'quadbin',
    absoluteResolution: read.integer('absoluteResolution', 0, MAX_ABSOLUTE_RESOLUTION),
    relativeResolution: read.integer('relativeResolution', QUADBIN_RELATIVE.min, QUADBIN_RELATIVE.max)
      ?? read.integer('resolution', QUADBIN_RELATIVE.min, QUADBIN_RELATIVE.max) ?? 0,
    countmode: read.oneOf('countmode', COUNT_MODES) ?? 'mixed',
    noBuffer: read.boolean('noBuffer') ?? false,
  };
}

/** Clustering is for bbox and web/quadkey/tms tiles only (API.md 6.2): throws the 400 for a `here` tile. */
export function checkClusterableTile(tile: Tile): void {
  if (tile.scheme === 'here') throw hubError('clusteringOnHereTile');
}

class OptionReader {
  constructor(private readonly values: ReadonlyMap<string, { name: string; text: string; value: OptionValue }>) {}

  integer(option: string, min: number, max: number): number | undefined {
    const entry = this.values.get(option);
    if (entry === undefined) return undefined;
    if (typeof entry.value !== 'number' || !Number.isInteger(entry.value) || entry.value < min || entry.value > max) {
      throw this.fail(entry.name, `It must be an integer from ${min} to ${max}; got ${JSON.stringify(entry.text)}.`);
    }
    return entry.value;
  }

  boolean(option: string): boolean | undefined {
    const entry = this.values.get(option);
    if (entry === undefined) return undefined;
    if (typeof entry.value !== 'boolean') throw this.fail(entry.name, `It must be true or false; got ${JSON.stringify(entry.text)}.`);
    return entry.value;
  }

  oneOf<T extends string>(option: string, allowed: readonly T[]): T | undefined {
    const entry = this.values.get(option);
    if (entry === undefined) return undefined;
    const found = allowed.find((value) => value === entry.value);
    if (found === undefined) throw this.fail(entry.name, `It must be one of ${allowed.join(', ')}; got ${JSON.stringify(entry.text)}.`);
    return found;
  }

  /** A dotted path below `properties`; a number-looking name is still a name. */
  propertyPath(option: string): string | undefined {
    const entry = this.values.get(option);
    if (entry === undefined) return undefined;
    const path = typeof entry.value === 'string' ? entry.value : entry.text;
    if (path === '' || path.split('.').some((segment) => segment === '')) {
      throw this.fail(entry.name, `It must be a dotted property path below properties, such as population or address.zip; got ${JSON.stringify(entry.text)}.`);
    }
    return path;
  }

  private fail(name: string, problem: string): HubError {
    return hubError('invalidClustering', { name, problem });
  }
}
