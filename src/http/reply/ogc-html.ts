// Plain server-rendered HTML pages of the OGC API: every value escaped, no script, no external asset.
import type { Collection, Queryable } from '../../hub/ogc/ogc-service.js';

export interface Link {
  href: string;
  rel: string;
  type: string;
  title?: string;
  /** The href is a URI template (OGC API Tiles: `{tileMatrix}/{tileRow}/{tileCol}`). */
  templated?: boolean;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: unknown): string => String(value).replace(/[&<>"']/g, (char) => ESCAPES[char]);

const STYLE = 'body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}pre{margin:0;white-space:pre-wrap}';

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><link rel="icon" href="data:,"><style>${STYLE}</style></head>`
    + `<body><h1>${escapeHtml(title)}</h1>${body}</body></html>\n`;
}

const anchor = (href: string, text: string): string => `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;

export function linkList(links: Link[]): string {
  return `<ul>${links.map((link) => `<li>${anchor(link.href, link.title ?? link.rel)} (${escapeHtml(link.rel)}, ${escapeHtml(link.type)})</li>`).join('')}</ul>`;
}

export function collectionRows(collections: Array<{ collection: Collection; href: string; items: string }>): string {
  const rows = collections.map(({ collection, href, items }) => `<tr><td>${anchor(href, collection.id)}</td><td>${escapeHtml(collection.title)}</td>`
    + `<td>${escapeHtml(collection.description ?? '')}</td><td>${escapeHtml(collection.extent?.join(', ') ?? '')}</td><td>${anchor(items, 'items')}</td></tr>`);
  return `<table><tr><th>id</th><th>title</th><th>description</th><th>extent (CRS84)</th><th></th></tr>${rows.join('')}</table>`;
}

export function queryableRows(queryables: Queryable[]): string {
  return `<table><tr><th>property</th><th>type</th></tr>${queryables.map((q) => `<tr><td>${escapeHtml(q.name)}</td><td>${escapeHtml(q.type ?? '')}</td></tr>`).join('')}</table>`;
}

interface FeatureLike { id?: unknown; geometry?: { type?: unknown } | null; properties?: unknown }

export function featureRows(features: FeatureLike[], itemHref: (id: string) => string): string {
  const rows = features.map((feature) => `<tr><td>${anchor(itemHref(String(feature.id)), String(feature.id))}</td>`
    + `<td>${escapeHtml(feature.geometry?.type ?? '')}</td><td><pre>${escapeHtml(JSON.stringify(feature.properties ?? {}, null, 1))}</pre></td></tr>`);
  return `<table><tr><th>id</th><th>geometry</th><th>properties</th></tr>${rows.join('')}</table>`;
}

export function featureDetail(feature: FeatureLike & { geometry?: unknown }): string {
  return `<h2>properties</h2><pre>${escapeHtml(JSON.stringify(feature.properties ?? {}, null, 2))}</pre>`
    + `<h2>geometry</h2><pre>${escapeHtml(JSON.stringify(feature.geometry ?? null))}</pre>`;
}
