// Versioned schema of the PostgreSQL databases, applied at start-up under an advisory lock so that nodes starting together do not race.
import type { Client } from './database.js';

/** Each entry moves a component one version up; never edit a released entry, append a new one. */
type Migrations = readonly string[];

/**
 * The catalog lives in the first database only: every space with the location of its features, and the
 * access records. `location` is the identity of a database (its `hub_database.id`), so the list of
 * databases in HUB_STORAGE may be reordered or given other URLs without losing any space.
 */
const catalogMigrations: Migrations = [
  `CREATE TABLE spaces (
     sid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id text COLLATE "C" NOT NULL UNIQUE,
     definition text NOT NULL,
     location text NOT NULL
   );
   CREATE INDEX spaces_by_location ON spaces (location);
   CREATE TABLE accounts (
     id text PRIMARY KEY,
     username text COLLATE "C" NOT NULL UNIQUE,
     password_hash text NOT NULL,
     admin boolean NOT NULL,
     created_at bigint NOT NULL
   );
   CREATE TABLE tokens (
     secret_hash text PRIMARY KEY,
     tid text NOT NULL UNIQUE,
     aid text NOT NULL,
     claims text NOT NULL
   );`,
  // What the space list filters on (owner, indexed, and shared for the access rule) as columns. Generated from the
  // definition, so the rewrite fills every existing row and no write path has to keep them in step. The definition
  // may hold U+0000 (a \u0000 escape), which json cannot turn into text: it is read with U+FFFD in its place, as
  // the indexed copies of features are (nul-stand-in.ts).
  `CREATE FUNCTION hub_definition_json(definition text) RETURNS json LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
     SELECT (CASE WHEN strpos(definition, '\\u0000') = 0 THEN definition
                  ELSE regexp_replace(definition, '(?<!\\\\)((?:\\\\\\\\)*)\\\\u0000', '\\1\\\\ufffd', 'g') END)::json
   $$;
   ALTER TABLE spaces
     ADD COLUMN owner text COLLATE "C" GENERATED ALWAYS AS (hub_definition_json(definition) ->> 'owner') STORED,
     ADD COLUMN shared boolean NOT NULL GENERATED ALWAYS AS (coalesce((hub_definition_json(definition) -> 'shared')::text = 'true', false)) STORED;
   CREATE INDEX spaces_by_owner ON spaces (owner, sid);`,
];

/**
 * Every database holds features. The per-space counters live next to the features (not in the catalog)
 * so that a write updates both in one local transaction. seq is the insertion order: an identity never
 * hands out a number twice, so iterate handles stay valid.
 */
const contentMigrations: Migrations = [
  `CREATE EXTENSION IF NOT EXISTS postgis;
   CREATE TABLE hub_database (
     id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
     one boolean NOT NULL DEFAULT true UNIQUE CHECK (one)
   );
   INSERT INTO hub_database DEFAULT VALUES;
   CREATE TABLE space_contents (
     sid bigint PRIMARY KEY,
     content_updated_at bigint NOT NULL,
     revision bigint NOT NULL DEFAULT 0,
     feature_count bigint NOT NULL DEFAULT 0,
     data_size bigint NOT NULL DEFAULT 0
   );
   CREATE TABLE features (
     seq bigint GENERATED ALWAYS AS IDENTITY,
     sid bigint NOT NULL,
     id text COLLATE "C" NOT NULL,
     feature text NOT NULL,
     properties jsonb NOT NULL,
     geom geometry(Geometry, 4326),
     geometry_type text COLLATE "C",
     tags text[] COLLATE "C" NOT NULL,
     PRIMARY KEY (sid, seq)
   );
   CREATE UNIQUE INDEX features_by_id ON features (sid, id);
   CREATE INDEX features_by_properties ON features USING gin (properties jsonb_path_ops);
   CREATE INDEX features_by_tags ON features USING gin (tags);
   CREATE INDEX features_by_geometry ON features USING gist (geom);`,
];

export const CATALOG = { name: 'catalog', migrations: catalogMigrations };
export const CONTENT = { name: 'content', migrations: contentMigrations };
export type Component = typeof CATALOG;

/** An arbitrary constant naming the hub's migration lock among the advisory locks of the database. */
const MIGRATION_LOCK = 0x5d4b_0001;

export async function migrate(client: Client, components: readonly Component[]): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS hub_schema (component text PRIMARY KEY, version integer NOT NULL)');
    for (const component of components) {
      const { rows } = await client.query<{ version: number }>('SELECT version FROM hub_schema WHERE component = $1', [component.name]);
      const current = rows[0]?.version ?? 0;
      if (current > component.migrations.length) {
        throw new Error(`The ${component.name} schema is at version ${current}, newer than this hub knows (${component.migrations.length}): upgrade the hub.`);
      }
      for (let version = current; version < component.migrations.length; version++) {
        await client.query('BEGIN');
        try {
          await client.query(component.migrations[version]);
          await client.query(
            `INSERT INTO hub_schema (component, version) VALUES ($1, $2)
             ON CONFLICT (component) DO UPDATE SET version = excluded.version`, [component.name, version + 1]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
