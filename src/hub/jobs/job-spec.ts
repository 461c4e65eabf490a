// The body of POST /hub/jobs (docs/jobs.md): a source and a target in the reference hub's shape, checked member by member.
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { BBox } from '../../geo/bbox.js';
import { formatNamed, type InputFormat, MAX_ROW_GROUP, type OutputFormat, WRITERS } from '../../transfer/formats/format-registry.js';
import { normalizeTagList } from '../tags.js';

export interface FilesSource {
  type: 'Files';
  /** Detected from the uploaded file's first bytes when absent. */
  format?: InputFormat;
  idProperty?: string;
  lon?: string;
  lat?: string;
  wkt?: string;
  layer?: string;
  /** A bad record stops the import (STOP, the default) or is counted as failed and passed over (SKIP). */
  onError: 'STOP' | 'SKIP';
}

export interface SpaceTarget {
  type: 'Space';
  id: string;
  addTags?: string[];
}

export interface SpaceSource {
  type: 'Space';
  id: string;
  bbox?: BBox;
  /** Features with any of these tags. */
  tags?: string[];
  /** The space as it was right after this version; HEAD when absent. */
  version?: number;
}

export interface FilesTarget {
  type: 'Files';
  format: OutputFormat;
  /** A partitioned export: files of at most this many features each, in insertion order. */
  maxFeaturesPerFile?: number;
  /** GeoParquet's rows per row group; the writer's default when absent. */
  rowGroupSize?: number;
}

export type JobSpec =
  | { kind: 'import'; description?: string; source: FilesSource; target: SpaceTarget }
  | { kind: 'export'; description?: string; source: SpaceSource; target: FilesTarget };

/** Every format is read and written. */
const WRITTEN = Object.keys(WRITERS).map((name) => name.toUpperCase()).join(', ');

const refuse = (problem: string): never => { throw hubError('invalidJob', { problem }); };

/** Names shown in messages: cut, and quoted as JSON so that control characters show as escapes. */
const shown = (value: unknown) => JSON.stringify(typeof value === 'string' ? value.slice(0, 40) : value)?.slice(0, 60) ?? 'undefined';

function onlyMembers(value: Record<string, unknown>, where: string, known: readonly string[]): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) refuse(`${where} has unknown members ${unknown.slice(0, 5).map(shown).join(', ')}; known: ${known.join(', ')}`);
}

/** A short text without U+0000, which PostgreSQL text cannot hold. */
function text(value: unknown, where: string, max = 256): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max || value.includes('\u0000')) {
    return refuse(`${where} must be a string of 1 to ${max} characters without U+0000`);
  }
  return value;
}

function formatOf(value: unknown, where: string): InputFormat | undefined {
  if (value === undefined) return undefined;
  const format = typeof value === 'string' ? formatNamed(value) : undefined;
  return format ?? refuse(`${where} is ${shown(value)}; known formats: ${WRITTEN}`);
}

function tagsOf(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > 100 || !value.every((tag) => typeof tag === 'string' && tag.length > 0 && tag.length <= 256 && !tag.includes('\u0000'))) {
    return refuse(`${where} must be a list of at most 100 tags, each a non-empty string`);
  }
  return normalizeTagList(value as string[]);
}

function bboxOf(value: unknown): BBox | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length !== 4 || !value.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    return refuse('source.bbox must be [west, south, east, north], four numbers');
  }
  const [west, south, east, north] = value as BBox;
  if (west < -180 || east > 180 || south < -90 || north > 90 || west > east || south > north) {
    return refuse('source.bbox must lie within [-180, -90, 180, 90] with west <= east and south <= north');
  }
  return [west, south, east, north];
}

function filesSource(source: Record<string, unknown>): FilesSource {
  onlyMembers(source, 'source', ['type', 'format', 'idProperty', 'lon', 'lat', 'wkt', 'layer', 'onError']);
  const onError = source.onError ?? 'STOP';
  if (onError !== 'STOP' && onError !== 'SKIP') refuse(`source.onError is ${shown(onError)}; expected STOP or SKIP`);
  const spec: FilesSource = { type: 'Files', onError: onError as 'STOP' | 'SKIP' };
  const format = formatOf(source.format, 'source.format');
  if (format !== undefined) spec.format = format;
  for (const key of ['idProperty', 'lon', 'lat', 'wkt', 'layer'] as const) {
    const value = text(source[key], `source.${key}`);
    if (value !== undefined) spec[key] = value;
  }
  return spec;
}

function spaceSource(source: Record<string, unknown>): SpaceSource {
  onlyMembers(source, 'source', ['type', 'id', 'bbox', 'tags', 'version']);
  const spec: SpaceSource = { type: 'Space', id: text(source.id, 'source.id') ?? refuse('source.id must name the space to export') };
  const bbox = bboxOf(source.bbox);
  if (bbox) spec.bbox = bbox;
  const tags = tagsOf(source.tags, 'source.tags');
  if (tags && tags.length > 0) spec.tags = tags;
  if (source.version !== undefined) {
    if (!Number.isSafeInteger(source.version) || (source.version as number) < 0) refuse('source.version must be a version number (an integer >= 0)');
    spec.version = source.version as number;
  }
  return spec;
}

/** The job a POST body asks for: an import (Files into a Space) or an export (a Space into Files); 400 naming the first thing wrong. */
export function jobSpecOf(body: Record<string, unknown>): JobSpec {
  onlyMembers(body, 'the job', ['description', 'source', 'target']);
  const description = text(body.description, 'description', 1024);
  const { source, target } = body;
  if (!isObject(source) || !isObject(target)) return refuse('source and target must both be objects with a type: Files or Space');
  if (source.type === 'Files' && target.type === 'Space') {
    onlyMembers(target, 'target', ['type', 'id', 'addTags']);
    const spaceTarget: SpaceTarget = { type: 'Space', id: text(target.id, 'target.id') ?? refuse('target.id must name the space to import into') };
    const addTags = tagsOf(target.addTags, 'target.addTags');
    if (addTags && addTags.length > 0) spaceTarget.addTags = addTags;
    return { kind: 'import', ...(description ? { description } : {}), source: filesSource(source), target: spaceTarget };
  }
  if (source.type === 'Space' && target.type === 'Files') {
    onlyMembers(target, 'target', ['type', 'format', 'maxFeaturesPerFile', 'rowGroupSize']);
    const format: OutputFormat = formatOf(target.format, 'target.format') ?? refuse(`target.format must name the format to write: ${WRITTEN}`);
    const filesTarget: FilesTarget = { type: 'Files', format };
    if (target.maxFeaturesPerFile !== undefined) {
      const max = target.maxFeaturesPerFile;
      if (!Number.isSafeInteger(max) || (max as number) < 1) refuse(`target.maxFeaturesPerFile is ${shown(max)}; expected a whole number of features, at least 1`);
      filesTarget.maxFeaturesPerFile = max as number;
    }
    if (target.rowGroupSize !== undefined) {
      const size = target.rowGroupSize;
      if (format !== 'geoparquet') refuse(`target.rowGroupSize is for GEOPARQUET; this export writes ${formatName(format)}`);
      if (!Number.isSafeInteger(size) || (size as number) < 1 || (size as number) > MAX_ROW_GROUP) {
        refuse(`target.rowGroupSize is ${shown(size)}; expected a whole number of rows from 1 to ${MAX_ROW_GROUP}`);
      }
      filesTarget.rowGroupSize = size as number;
    }
    return { kind: 'export', ...(description ? { description } : {}), source: spaceSource(source), target: filesTarget };
  }
  return refuse(`source.type ${shown(source.type)} and target.type ${shown(target.type)}: a job imports Files into a Space or exports a Space into Files`);
}

export const spaceOfJob = (spec: JobSpec): string => (spec.kind === 'import' ? spec.target.id : spec.source.id);

/** The format names as the API shows them. */
export const formatName = (format: InputFormat): string => format.toUpperCase();
