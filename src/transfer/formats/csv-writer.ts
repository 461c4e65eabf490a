// Writes CSV: an id column, the properties (objects as JSON) and the geometry as WKT in a column named WKT, which GDAL and QGIS read as the geometry.
import type { WriterFactory } from '../transfer-feature.js';
import { OutputBatch, put } from './output-stream.js';
import { spooledWriter } from './spool.js';
import { formatWkt } from './wkt.js';

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
};

export const writeCsv: WriterFactory = (out) => spooledWriter(async (spool) => {
  const columns = [...spool.columns.keys()].filter((name) => name !== 'id' && name !== 'WKT');
  await put(out, ['id', ...columns, 'WKT'].map(cell).join(',') + '\r\n');
  const batch = new OutputBatch(out);
  for await (const feature of spool.replay()) {
    const row = [feature.id, ...columns.map((name) => feature.properties[name]), feature.geometry ? formatWkt(feature.geometry) : ''];
    batch.add(Buffer.from(row.map(cell).join(',') + '\r\n'));
    await batch.settle();
  }
  await batch.flush();
});
