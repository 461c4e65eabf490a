// The plain SQLite floor: the R*Tree query on (id, geojson text) through better-sqlite3, the stored texts joined into the answer in SQL.
import Database from 'better-sqlite3';
import GeoJSONVT from 'geojson-vt';
import type { Feature } from 'geojson';
import vtpbf from 'vt-pbf';
import type { StorageSpec } from './engines.js';
import { rotation } from './measure.js';
import { type PlainAnswer, type PlainFloor, plainName, pageWalk, type PlainTile, timedReads } from './plain-floor.js';

const COLLECTION = `'{"type":"FeatureCollection","features":[' || coalesce(group_concat(geojson, ','), '') || ']}'`;

/** SQLite answers in this thread and one statement at a time: the reads run one after another, whatever the HTTP side's connections. */
const LANES = 1;

const databases = new Map<string, Database.Database>();

function database(spec: StorageSpec): Database.Database {
  if (spec.engine !== 'sqlite') throw new Error('the plain SQLite floor needs a SQLite file');
  let db = databases.get(spec.path);
  if (!db) {
    db = new Database(spec.path);
    databases.set(spec.path, db);
  }
  return db;
}

/** The first two columns of a statement's one row: a collection's text and its feature count. */
function collection(row: unknown[]): PlainAnswer & { row: unknown[] } {
  return { features: Number(row[1]), bytes: (row[0] as string).length, row };
}

/** The candidates of a box from the R*Tree, whose entries are the features' bounds. */
const boxRows = (table: string, columns: string) => `SELECT ${columns} FROM ${table}_box b JOIN ${table} p ON p.rowid = b.id
  WHERE b.min_x <= ? AND b.max_x >= ? AND b.min_y <= ? AND b.max_y >= ? LIMIT ?`;

/** geojson-vt cuts the features to the tile; vt-pbf encodes it, as an application serving tiles from SQLite would. */
function encodeTile(texts: string[], { z, x, y, layer }: PlainTile): Buffer {
  const features = texts.map((text) => JSON.parse(text) as Feature);
  const index = new GeoJSONVT({ type: 'FeatureCollection', features }, { maxZoom: z, indexMaxZoom: 0, tolerance: 0, extent: 4096, buffer: 0 });
  const tile = index.getTile(z, x, y);
  if (!tile || tile.features.length === 0) return Buffer.alloc(0);
  const bytes = vtpbf.fromGeojsonVt({ [layer]: tile }, { version: 2, extent: 4096 });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export const plainSqlite: PlainFloor = {
  async getById({ spec, table, ids, seconds }, meter) {
    const select = database(spec).prepare<[string], string>(`SELECT geojson FROM ${plainName(table)} WHERE id = ?`).pluck();
    const next = rotation(ids);
    return timedReads({ concurrency: LANES, seconds, meter, counting: 'requests' }, async () => {
      const text = select.get(next());
      if (text === undefined) throw new Error('plain floor GET by id missed a feature');
      return { features: 1, bytes: text.length };
    });
  },

  async iterate({ spec, table, limit, seconds, expected }, meter) {
    const select = database(spec).prepare<[number, number], unknown[]>(`SELECT ${COLLECTION}, count(*), max(k)
      FROM (SELECT rowid AS k, geojson FROM ${plainName(table)} WHERE rowid > ? ORDER BY rowid LIMIT ?)`).raw();
    const page = pageWalk(0, limit, expected, async (after) => {
      const answer = collection(select.get(after, limit)!);
      return { ...answer, last: Number(answer.row[2] ?? 0) };
    });
    return timedReads({ concurrency: LANES, seconds, meter, counting: 'features' }, page);
  },

  async search({ spec, table, property, above, limit, seconds }, meter) {
    const select = database(spec).prepare<[string, number, number], unknown[]>(`SELECT ${COLLECTION}, count(*)
      FROM (SELECT geojson FROM ${plainName(table)} WHERE json_extract(geojson, ?) > ? LIMIT ?)`).raw();
    const path = `$.properties.${property}`;
    return timedReads({ concurrency: LANES, seconds, meter, counting: 'features' }, async () => collection(select.get(path, above, limit)!));
  },

  async spatial({ spec, table, reads, seconds }, meter) {
    const db = database(spec);
    const name = plainName(table);
    const joined = db.prepare<number[], unknown[]>(`SELECT ${COLLECTION}, count(*) FROM (${boxRows(name, 'p.geojson')})`).raw();
    const texts = db.prepare<number[], string>(boxRows(name, 'p.geojson')).pluck();
    let next = 0;
    return timedReads({ concurrency: LANES, seconds, meter, counting: 'requests' }, async () => {
      const read = reads[next++ % reads.length];
      const [west, south, east, north] = read.box;
      const bounds = [east, west, north, south, read.limit];
      if (!read.tile) return collection(joined.get(...bounds)!);
      const found = texts.all(...bounds);
      return { features: found.length, bytes: encodeTile(found, read.tile).length };
    });
  },
};
