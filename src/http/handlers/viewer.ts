// The web viewer's static files (viewer/ at the repository root, MapLibre GL JS from its package) and the browser redirect of `GET /`.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { hubError } from '../../core/errors.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import type { HandlerContext } from '../request-context.js';
import { hubInfo } from './hub-info.js';

export const VIEWER_ROOT = join(PACKAGE_ROOT, 'viewer/');
/** Resolved through Node's own lookup, so the files come from the installed package wherever npm put it. */
const MAPLIBRE_DIR = dirname(createRequire(join(PACKAGE_ROOT, 'package.json')).resolve('maplibre-gl'));

export const VIEWER_PATH = '/viewer/';

/** Only these names are served: nothing else of either folder is reachable. */
const VIEWER_FILES = new Set(['index.html', 'viewer.js', 'viewer.css', 'world-110m.geojson']);
const LIBRARY_FILES = new Set(['maplibre-gl.js', 'maplibre-gl.css']);

const REVALIDATE = { cacheControl: false } as const;
const ONE_DAY = 24 * 60 * 60 * 1000;

/** Without `maxAge` (the viewer's own files, which change with the hub) `no-cache`: revalidated by ETag on every load. */
function sendFile(context: HandlerContext, name: string, root: string, maxAge?: number): unknown {
  if (maxAge === undefined) context.reply.header('cache-control', 'no-cache');
  return context.reply.sendFile(name, root, maxAge === undefined ? REVALIDATE : { maxAge });
}

export async function viewerPage(context: HandlerContext): Promise<unknown> {
  return sendFile(context, 'index.html', VIEWER_ROOT);
}

export async function viewerFile(context: HandlerContext): Promise<unknown> {
  const { file } = context.params;
  if (!VIEWER_FILES.has(file)) throw hubError('routeNotFound');
  return sendFile(context, file, VIEWER_ROOT, file.endsWith('.geojson') ? ONE_DAY : undefined);
}

export async function viewerLibrary(context: HandlerContext): Promise<unknown> {
  const { file } = context.params;
  if (!LIBRARY_FILES.has(file)) throw hubError('routeNotFound');
  return sendFile(context, file, MAPLIBRE_DIR, ONE_DAY);
}

/** A browser asks for HTML first: an `Accept` naming text/html (not through a wildcard) with a non-zero weight. */
function wantsHtml(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const weight = parameters.find((parameter) => parameter.startsWith('q='));
    return type === 'text/html' && (weight === undefined || Number(weight.slice(2)) > 0);
  });
}

/** `GET /`: browsers are sent to the viewer, API clients keep getting the service info (API.md 2). */
export async function rootPage(context: HandlerContext): Promise<unknown> {
  const vary = context.reply.getHeader('vary');
  context.reply.header('vary', vary ? `${String(vary)}, Accept` : 'Accept');
  if (!wantsHtml(context.request.headers.accept)) return hubInfo(context);
  return context.reply.header('cache-control', 'no-cache').redirect(VIEWER_PATH, 303);
}
