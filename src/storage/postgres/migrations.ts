// Versioned schema of the PostgreSQL databases, applied at start-up under an advisory lock so that nodes starting together do not race.
import { migrate as runMigrations, type SchemaComponent } from '../shared/migration-runner.js';
import type { Session } from './database.js';
import { foldFunctionSql } from './fold-sql.js';

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
  // Bootstrap tokens (the admin's, from HUB_ADMIN_TOKEN or generated) are marked so that a new HUB_ADMIN_TOKEN revokes the old one;
  // until now the hub made no other tokens, recognisable by their description.
  `ALTER TABLE tokens ADD COLUMN bootstrap boolean NOT NULL DEFAULT false;
   UPDATE tokens SET bootstrap = true WHERE claims::jsonb ->> 'description' = 'admin token created at first start';`,
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
  // Projects (API.md 10): the JSON text as clients get it, with owner and published as columns the hub writes with it.
  // seq is the insertion order and the pagination handle: an identity never hands out a number twice. One index
  // serves the list of one owner, a partial one the list of published projects.
  `CREATE TABLE projects (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id text COLLATE "C" NOT NULL UNIQUE,
     owner text COLLATE "C" NOT NULL,
     published boolean NOT NULL,
     json text NOT NULL
   );
   CREATE INDEX projects_by_owner ON projects (owner, seq);
   CREATE INDEX projects_published ON projects (seq) WHERE published;`,
  // Accounts and sessions (docs/decisions.md, "Accounts, sessions and the Token API"): rights an admin granted an
  // account, login sessions keyed by the sha256 of the cookie, failed logins per username, tokens by account.
  `ALTER TABLE accounts ADD COLUMN rights text;
   CREATE INDEX tokens_by_aid ON tokens (aid);
   CREATE TABLE sessions (
     id_hash text PRIMARY KEY,
     account_id text NOT NULL,
     expires_at bigint NOT NULL
   );
   CREATE INDEX sessions_by_account ON sessions (account_id);
   CREATE INDEX sessions_by_expiry ON sessions (expires_at);
   CREATE TABLE login_failures (
     username text COLLATE "C" PRIMARY KEY,
     failures integer NOT NULL,
     last_at bigint NOT NULL
   );
   CREATE INDEX login_failures_by_time ON login_failures (last_at);`,
  // Webhook subscriptions (docs/subscriptions.md), in the catalog so that every node finds them in one place: where
  // each one's delivery stands, and the lease (owner node, expiry) that lets one node at a time deliver it.
  `CREATE TABLE subscriptions (
     sid bigint NOT NULL REFERENCES spaces (sid) ON DELETE CASCADE,
     id text COLLATE "C" NOT NULL,
     space_id text NOT NULL,
     destination text NOT NULL,
     type text NOT NULL,
     filter text,
     secret text NOT NULL,
     state text NOT NULL,
     delivered bigint NOT NULL,
     attempts integer NOT NULL DEFAULT 0,
     retry_at bigint NOT NULL DEFAULT 0,
     last_error text,
     lease_owner text,
     lease_until bigint NOT NULL DEFAULT 0,
     created_at bigint NOT NULL,
     PRIMARY KEY (sid, id)
   );
   CREATE INDEX subscriptions_by_lease ON subscriptions (state, lease_until);`,
  // The token whose rights a subscription's delivery goes on with (docs/subscriptions.md, "Rights"); the ones made
  // before have none and are suspended at their next round until their owner PUTs them.
  'ALTER TABLE subscriptions ADD COLUMN token_id text;',
  // Jobs of the jobs API (docs/jobs.md), in the catalog so that every node finds them: each one's state, how far it got
  // (an import: the input items committed), and the lease (owner node, expiry) that lets one node at a time run it.
  `CREATE TABLE jobs (
     id text COLLATE "C" PRIMARY KEY,
     owner text NOT NULL,
     token_id text NOT NULL,
     kind text NOT NULL,
     space_id text NOT NULL,
     spec text NOT NULL,
     state text NOT NULL,
     input_bytes bigint,
     next_item bigint NOT NULL DEFAULT 0,
     written bigint NOT NULL DEFAULT 0,
     failed bigint NOT NULL DEFAULT 0,
     bytes_read bigint NOT NULL DEFAULT 0,
     total bigint NOT NULL DEFAULT 0,
     last_error text,
     created_at bigint NOT NULL,
     updated_at bigint NOT NULL,
     started_at bigint,
     lease_owner text,
     lease_until bigint NOT NULL DEFAULT 0
   );
   CREATE INDEX jobs_by_owner ON jobs (owner, created_at);
   CREATE INDEX jobs_by_state ON jobs (state, created_at);
   CREATE INDEX jobs_by_space ON jobs (space_id, state);`,
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
  // Writers record counter changes as rows of their own (see feature-store.ts): parallel writes to one space
  // no longer queue on the lock of its counters row. The view adds the change rows to the counters.
  `CREATE TABLE space_changes (
     sid bigint NOT NULL,
     change bigint GENERATED ALWAYS AS IDENTITY,
     feature_delta bigint NOT NULL,
     size_delta bigint NOT NULL,
     changed_at bigint NOT NULL,
     PRIMARY KEY (sid, change)
   );
   CREATE VIEW space_counters AS
   SELECT c.sid,
          c.revision + w.changes AS revision,
          (c.feature_count + w.features)::bigint AS feature_count,
          (c.data_size + w.size)::bigint AS data_size,
          greatest(c.content_updated_at, w.changed_at) AS content_updated_at
     FROM space_contents c
     CROSS JOIN LATERAL (SELECT count(*) AS changes, coalesce(sum(feature_delta), 0) AS features,
                                coalesce(sum(size_delta), 0) AS size, max(changed_at) AS changed_at
                           FROM space_changes s WHERE s.sid = c.sid) w;`,
  // Spatial reads always name one space: a GiST index on geom alone walks the entries of every space in the box,
  // one on (sid, geom) only those of the space (btree_gist gives GiST the bigint equality). See docs/decisions.md.
  `CREATE EXTENSION IF NOT EXISTS btree_gist;
   CREATE INDEX features_by_space_geometry ON features USING gist (sid, geom);
   DROP INDEX features_by_geometry;`,
  // Versions and history (docs/adr-002-history.md): the space's HEAD version and the oldest one its history can restore
  // next to its counters, the version that last changed each row (NULL: written without history), the superseded states
  // with the columns reads filter on (append-only, keyed by the version that ended them), and who wrote each version of a
  // space keeping history. A nullable column without default is added without rewriting the table.
  `ALTER TABLE space_contents ADD COLUMN version bigint NOT NULL DEFAULT -1, ADD COLUMN history_from bigint NOT NULL DEFAULT 0;
   ALTER TABLE features ADD COLUMN version bigint;
   CREATE TABLE feature_history (
     sid bigint NOT NULL,
     version_to bigint NOT NULL,
     seq bigint NOT NULL,
     id text COLLATE "C" NOT NULL,
     version_from bigint,
     feature text NOT NULL,
     properties jsonb NOT NULL,
     geom geometry(Geometry, 4326),
     geometry_type text COLLATE "C",
     tags text[] COLLATE "C" NOT NULL,
     PRIMARY KEY (sid, version_to, seq)
   );
   CREATE INDEX feature_history_by_id ON feature_history (sid, id, version_to);
   CREATE TABLE space_versions (
     sid bigint NOT NULL,
     version bigint NOT NULL,
     author text NOT NULL,
     created_at bigint NOT NULL,
     PRIMARY KEY (sid, version)
   );`,
  // Changesets, tags and pruning (docs/adr-002-history.md): the version before which DELETE /changesets removed the
  // history, the states written at a version found by it (current rows, partial: a space without history pays nothing;
  // superseded states by version_from), and the tags naming versions.
  `ALTER TABLE space_contents ADD COLUMN deleted_before bigint NOT NULL DEFAULT 0;
   CREATE INDEX features_by_version ON features (sid, version, seq) WHERE version IS NOT NULL;
   CREATE INDEX feature_history_by_from ON feature_history (sid, version_from, seq);
   CREATE TABLE space_tags (
     sid bigint NOT NULL,
     tag text COLLATE "C" NOT NULL,
     version bigint NOT NULL,
     author text NOT NULL,
     description text,
     created_at bigint NOT NULL,
     PRIMARY KEY (sid, tag)
   );`,
  // A small area at a version far back: the states superseded since then are found by place instead of reading every
  // one of them through (sid, version_to) (10,000 changes since: 3.5 ms, and the planner's cost estimate of that scan
  // started JIT compilation, 18 ms more). The planner chooses between the two (docs/adr-002-history.md).
  `CREATE INDEX feature_history_by_space_geometry ON feature_history USING gist (sid, geom);`,
  // Where the namespace member ends a stored text (core/namespace-cut.ts): its length in bytes of UTF-8, so that a GeoJSON
  // sequence page is cut as bytes (plain-texts.ts). NULL for rows written before, which are read as before; adding a
  // nullable column without a default rewrites no row.
  `ALTER TABLE features ADD COLUMN ns_cut integer;`,
  // CQL2 arithmetic, CASEI and ACCENTI (docs/ogc-filtering.md). Arithmetic: IEEE doubles, with NULL for a result that is no finite number, as the SQLite
  // engine's hub_cql2_arithmetic. PostgreSQL raises an error where IEEE overflows (NULL here) or underflows to zero
  // (0 here, as IEEE and SQLite give); the exception block that catches it costs a subtransaction, so operands far from
  // the ends of the double range skip it. div truncates toward zero; % is a - b * (a div b).
  `CREATE FUNCTION hub_cql2_arithmetic(op text, a float8, b float8) RETURNS float8 LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
   DECLARE quotient float8;
   BEGIN
     IF op = 'div' OR op = '%' THEN
       quotient := trunc(hub_cql2_arithmetic('/', a, b));
       IF op = 'div' OR quotient IS NULL THEN RETURN quotient; END IF;
       RETURN hub_cql2_arithmetic('-', a, hub_cql2_arithmetic('*', b, quotient));
     END IF;
     IF op = '/' AND b = 0 THEN RETURN NULL; END IF;
     IF (op IN ('+', '-') AND abs(a) < 1e300::float8 AND abs(b) < 1e300::float8)
       OR (op = '*' AND (a = 0 OR b = 0 OR (abs(a) BETWEEN 1e-150::float8 AND 1e150::float8 AND abs(b) BETWEEN 1e-150::float8 AND 1e150::float8)))
       OR (op = '/' AND (a = 0 OR (abs(a) BETWEEN 1e-150::float8 AND 1e150::float8 AND abs(b) BETWEEN 1e-150::float8 AND 1e150::float8)))
       OR (op = '^' AND abs(b) <= 16 AND abs(a) BETWEEN 1e-16::float8 AND 1e16::float8 AND (a > 0 OR b = floor(b))) THEN
       RETURN CASE op WHEN '+' THEN a + b WHEN '-' THEN a - b WHEN '*' THEN a * b WHEN '/' THEN a / b ELSE a ^ b END;
     END IF;
     BEGIN
       RETURN CASE op WHEN '+' THEN a + b WHEN '-' THEN a - b WHEN '*' THEN a * b WHEN '/' THEN a / b WHEN '^' THEN a ^ b END;
     EXCEPTION
       WHEN invalid_argument_for_power_function THEN RETURN NULL;
       WHEN numeric_value_out_of_range THEN
         RETURN CASE
           WHEN op = '*' AND (abs(a) < 1 OR abs(b) < 1) THEN 0
           WHEN op = '/' AND abs(a) < abs(b) THEN 0
           WHEN op = '^' AND (abs(a) < 1) = (b > 0) THEN 0
         END;
     END;
   END $$;
   ${foldFunctionSql('case')}
   ${foldFunctionSql('accent')}`,
];

export const CATALOG: SchemaComponent = { name: 'catalog', migrations: catalogMigrations };
export const CONTENT: SchemaComponent = { name: 'content', migrations: contentMigrations };

/** An arbitrary constant naming the hub's migration lock among the advisory locks of the database. */
const MIGRATION_LOCK = 0x5d4b_0001;

/** Versions live in `hub_schema`, one row per component; the advisory lock lets nodes that start together take turns. */
export async function migrate(client: Session, components: readonly SchemaComponent[]): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS hub_schema (component text PRIMARY KEY, version integer NOT NULL)');
    for (const component of components) {
      await runMigrations(component, {
        version: async () => {
          const { rows } = await client.query<{ version: number }>('SELECT version FROM hub_schema WHERE component = $1', [component.name]);
          return rows[0]?.version ?? 0;
        },
        apply: async (_component, sql, version) => {
          await client.query('BEGIN');
          try {
            await client.query(sql);
            await client.query(
              `INSERT INTO hub_schema (component, version) VALUES ($1, $2)
               ON CONFLICT (component) DO UPDATE SET version = excluded.version`, [component.name, version]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        },
      });
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
