// What every OGC API handler needs from the request: the format asked for, the links' origin, and the read options.
import { hubError } from '../../core/errors.js';
import type { ReadOptions } from '../../hub/features/read-pipeline.js';
import { ogcFeatureTexts } from '../../hub/ogc/ogc-feature-text.js';
import { OGC_ROOT } from '../api-document.js';
import { acceptedFileFormat, FILE_FORMAT_NAMES, type FileFormat, fileFormatNamed } from '../reply/feature-formats.js';
import { clientGone } from '../reply/read-reply.js';
import type { HandlerContext } from '../request-context.js';
import { etagKey } from './read-parameters.js';

export type OgcFormat = 'json' | 'html';

/** `f=json|html` wins; else HTML only when `Accept` names text/html before any JSON type (a browser), else JSON. */
export function ogcFormat(context: HandlerContext): OgcFormat {
  const format = ogcItemsFormat(context, false);
  return format === 'json' || format === 'html' ? format : 'json';
}

/**
 * The format of an answer that may also be a file (items): `f` wins (`jsonseq`, `csv`, `fgb` or their other names), else
 * a file format's media type in `Accept` before any JSON or HTML type, else as `ogcFormat`. A wrong `f` is a 400 listing
 * what the path serves.
 */
export function ogcItemsFormat(context: HandlerContext, files = true): OgcFormat | FileFormat {
  const f = context.query.first('f');
  if (f !== undefined) {
    const wanted = f.toLowerCase();
    if (wanted === 'json' || wanted === 'geojson') return 'json';
    if (wanted === 'html') return 'html';
    const file = files ? fileFormatNamed(wanted) : undefined;
    if (file) return file;
    throw hubError('ogcInvalidFormat', { formats: ['json', 'html', ...(files ? FILE_FORMAT_NAMES : [])].join(', ') });
  }
  const accept = (context.request.headers.accept ?? '').toLowerCase();
  const file = files ? acceptedFileFormat(accept) : undefined;
  if (file) return file;
  const html = accept.indexOf('text/html');
  if (html < 0) return 'json';
  const json = accept.search(/application\/(geo\+)?json/);
  return json >= 0 && json < html ? 'json' : 'html';
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
export function ogcReadOptions(context: HandlerContext, format: OgcFormat | FileFormat): ReadOptions {
  return { transforms: [], etagKey: `${etagKey(context)}\n${format}\n${linkBase(context).root}`, signal: clientGone(context.reply), shape: ogcFeatureTexts };
}
