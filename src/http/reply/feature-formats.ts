// Feature answers as FlatGeobuf, CSV or GeoJSON text sequences (RFC 8142), written by the export's writers (transfer/formats/).
import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FastifyReply } from 'fastify';
import { writeCsv } from '../../transfer/formats/csv-writer.js';
import { writeFlatGeobuf } from '../../transfer/formats/flatgeobuf-writer.js';
import { writeGeoJsonTextSeq } from '../../transfer/formats/geojson-seq-writer.js';
import { featureList, plain, writePageFeatures, writePlainPage } from '../../transfer/formats/plain-feature-text.js';
import { isPlainPage } from '../../core/namespace-cut.js';
import { ownMember } from '../../core/json.js';
import type { TransferFeature, WriterFactory } from '../../transfer/transfer-feature.js';
import { AnswerSpool } from './answer-spool.js';
import { started } from './read-reply.js';

export type FileFormat = 'jsonseq' | 'csv' | 'fgb';

/** Each format's media type and writer; the `f` values that name it are its key and `FORMAT_NAMES`. */
const FORMATS: Record<FileFormat, { type: string; writer: WriterFactory }> = {
  jsonseq: { type: 'application/geo+json-seq', writer: writeGeoJsonTextSeq },
  csv: { type: 'text/csv; charset=utf-8', writer: writeCsv },
  fgb: { type: 'application/flatgeobuf', writer: writeFlatGeobuf },
};

/** `f` values beside the formats' own names. */
const FORMAT_NAMES: Record<string, FileFormat> = { jsonseq: 'jsonseq', geojsonseq: 'jsonseq', csv: 'csv', fgb: 'fgb', flatgeobuf: 'fgb' };

export const fileFormatNamed = (name: string): FileFormat | undefined => ownMember(FORMAT_NAMES, name.toLowerCase());

export const FILE_FORMAT_NAMES = Object.keys(FORMATS) as FileFormat[];

/** The media type an answer in the format has. */
export const fileFormatType = (format: FileFormat): string => FORMATS[format].type;

/** The file format an `Accept` header asks for by its media type, when it names one before any JSON or HTML type. */
export function acceptedFileFormat(accept: string | undefined): FileFormat | undefined {
  const wanted = (accept ?? '').toLowerCase();
  const found = FILE_FORMAT_NAMES
    .map((format) => ({ format, at: wanted.indexOf(FORMATS[format].type.split(';')[0]) }))
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at)[0];
  if (!found) return undefined;
  const other = wanted.search(/application\/(geo\+)?json(?!-seq)|text\/html/);
  return other >= 0 && other < found.at ? undefined : found.format;
}

/**
 * Writes the features of the answer's pages (texts of features joined by commas) without the hub's namespace, as the
 * export does: split, not parsed, where the writer copies texts. A plain page (the storage cut the namespace out of
 * every text: core/namespace-cut.ts) is only split at its line feeds.
 */
async function writeFeatures(pages: AsyncIterable<string | Buffer>, format: FileFormat, out: Writable): Promise<void> {
  const writer = FORMATS[format].writer(out);
  try {
    for await (const page of pages) {
      const bytes = typeof page === 'string' ? Buffer.from(page) : page;
      if (isPlainPage(bytes)) {
        await writePlainPage(writer, bytes);
        continue;
      }
      const features = featureList(bytes);
      if (features !== undefined) {
        await writePageFeatures(writer, bytes, features);
        continue;
      }
      const text = bytes.toString();
      for (const feature of JSON.parse(`[${text}]`) as TransferFeature[]) await writer.write(plain(feature));
    }
    await writer.end();
  } finally {
    writer.release();
  }
}

export interface FileAnswer {
  format: FileFormat;
  /** The answer's pages: the stored texts of its features joined by commas. */
  pages: AsyncIterable<string | Buffer>;
  /** The `Link` header's links (`next` and the like), known once the pages have been read. */
  links(): string[];
  /** Whether `links` is known before the pages are read: the answer then streams. */
  linksFirst: boolean;
}

/**
 * The answer in a file format. With its links known first it streams (FlatGeobuf and CSV still spool inside their
 * writers: their header needs every column). Otherwise it is written first, so that the `Link` header can precede it
 * (in memory up to answer-spool.ts's bound, else to a temporary file), and sent with its length; memory stays flat either way.
 */
export async function sendFeatureFile(reply: FastifyReply, answer: FileAnswer): Promise<FastifyReply> {
  const pages = await started(answer.pages);
  const linked = (links: string[]) => (links.length > 0 ? reply.header('link', links.join(', ')) : reply);
  reply.type(FORMATS[answer.format].type);
  if (answer.linksFirst) {
    const out = new PassThrough();
    writeFeatures(pages, answer.format, out).then(() => out.end(), (error: Error) => out.destroy(error));
    return linked(answer.links()).send(out);
  }
  const spool = new AnswerSpool();
  try {
    await writeFeatures(pages, answer.format, spool);
    spool.end();
    await finished(spool);
    const { body, size } = spool.body();
    return linked(answer.links()).header('content-length', size).send(body);
  } catch (error) {
    spool.destroy();
    throw error;
  }
}

/** A `Link` header value. */
export const linkHeader = (href: string, rel: string, type?: string): string => `<${href}>; rel="${rel}"${type ? `; type="${type}"` : ''}`;
