// What every OGC API handler needs from the request: the format asked for, the links' origin, and the read options.
import { hubError } from '../../core/errors.js';
import type { ReadOptions } from '../../hub/features/read-pipeline.js';
import { jsonFgFeatureTexts, ogcFeatureTexts } from '../../hub/ogc/ogc-feature-text.js';
import { OGC_ROOT } from '../api-document.js';
import { acceptedFileFormat, FILE_FORMAT_NAMES, type FileFormat, fileFormatNamed, fileFormatType } from '../reply/feature-formats.js';
import { JSON_FG_TYPE } from '../reply/jsonfg-document.js';
import { clientGone } from '../reply/read-reply.js';
import type { HandlerContext } from '../request-context.js';
import { etagKey } from './read-parameters.js';

export type OgcFormat = 'json' | 'html';

/** What a feature answer (items, one item) may be besides: JSON-FG (docs/jsonfg.md). */
export type FeatureFormat = OgcFormat | 'jsonfg';

/** What a path serves: documents (JSON, HTML), one item (also JSON-FG), items (also JSON-FG and the file formats). */
type Serves = 'document' | 'item' | 'items';

/** `f=json|html` wins; else HTML only when `Accept` names text/html before any JSON type (a browser), else JSON. */
export function ogcFormat(context: HandlerContext): OgcFormat {
  const format = ogcItemsFormat(context, 'document');
  return format === 'html' ? 'html' : 'json';
}

/** Where `Accept` names a media type first, -1 when it does not. */
const named = (accept: string, type: RegExp | string): number => (typeof type === 'string' ? accept.indexOf(type) : accept.search(type));

/**
 * The format of a feature answer: `f` wins (`jsonfg`, and on items `jsonseq`, `csv`, `fgb` or their other names), else
 * the format whose media type `Accept` names first (JSON-FG's, a file format's, GeoJSON or JSON, HTML), else JSON. A
 * wrong `f` is a 400 listing what the path serves.
 */
export function ogcItemsFormat(context: HandlerContext, serves: Serves = 'items'): FeatureFormat | FileFormat {
  const f = context.query.first('f');
  if (f !== undefined) {
    const wanted = f.toLowerCase();
    if (wanted === 'json' || wanted === 'geojson') return 'json';
    if (wanted === 'html') return 'html';
    if (wanted === 'jsonfg' && serves !== 'document') return 'jsonfg';
    const file = serves === 'items' ? fileFormatNamed(wanted) : undefined;
    if (file) return file;
    const formats = ['json', 'html', ...(serves === 'document' ? [] : ['jsonfg']), ...(serves === 'items' ? FILE_FORMAT_NAMES : [])];
    throw hubError('ogcInvalidFormat', { formats: formats.join(', ') });
  }
  const accept = (context.request.headers.accept ?? '').toLowerCase();
  const offered: Array<{ format: FeatureFormat | FileFormat; at: number }> = [
    { format: 'json', at: named(accept, /application\/(geo\+)?json(?!-seq)/) },
    { format: 'html', at: named(accept, 'text/html') },
  ];
  if (serves !== 'document') offered.push({ format: 'jsonfg', at: named(accept, JSON_FG_TYPE) });
  // A file format's type is offered only when no JSON or HTML type comes before it (feature-formats.ts).
  const file = serves === 'items' ? acceptedFileFormat(accept) : undefined;
  if (file) offered.push({ format: file, at: named(accept, fileFormatType(file).split(';')[0]) });
  const first = offered.filter(({ at }) => at >= 0).sort((a, b) => a.at - b.at)[0];
  return first?.format ?? 'json';
}

/** Host names and ports only: anything else in `Host` is not put into a link. */
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * Where links point: the request's own origin (the `Host` header; X-Forwarded-* are not honoured). Links never
 * carry the token, whether it came in a header or as `access_token=`: no answer holds a token, and GDAL adds the
 * query of the URL it was opened with (`OAPIF:…/ogc?access_token=…`) to every request it makes, `next` links too.
 */
export interface LinkBase {
  /** The hub's own origin, e.g. `http://host:8080`. */
  origin: string;
  /** The OGC API root below it. */
  root: string;
  href(path: string, parameters?: Record<string, string>): string;
}

export function linkBase(context: HandlerContext): LinkBase {
  const host = context.request.headers.host;
  const origin = `${context.request.protocol}://${host !== undefined && HOST.test(host) ? host : 'localhost'}`;
  const root = `${origin}${OGC_ROOT}`;
  return {
    origin,
    root,
    href: (path, parameters = {}) => {
      const search = new URLSearchParams(parameters).toString();
      return `${root}${path}${search === '' ? '' : `?${search}`}`;
    },
  };
}

/**
 * Read options without transforms, in the OGC form (flat properties, 2D where the hub padded z: ogc-feature-text.ts);
 * the ETag tells formats and origins apart, as their bodies differ.
 */
export function ogcReadOptions(context: HandlerContext, format: FeatureFormat | FileFormat): ReadOptions {
  const shape = format === 'jsonfg' ? jsonFgFeatureTexts : ogcFeatureTexts;
  return { transforms: [], etagKey: `${etagKey(context)}\n${format}\n${linkBase(context).root}`, signal: clientGone(context.reply), shape };
}
