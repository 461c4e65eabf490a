// Versioned schema of the embedded SQLite database, applied at start-up.
import type Database from 'better-sqlite3';
import { migrate as runMigrations, type SchemaComponent } from '../shared/migration-runner.js';

/** Each entry moves the schema one version up; never edit a released entry, append a new one. */
export const SCHEMA: SchemaComponent = { name: 'SQLite', migrations: [
  `CREATE TABLE spaces (
     sid INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     definition TEXT NOT NULL,
     content_updated_at INTEGER NOT NULL,
     revision INTEGER NOT NULL DEFAULT 0,
     feature_count INTEGER NOT NULL DEFAULT 0,
     data_size INTEGER NOT NULL DEFAULT 0
   );
   -- seq is the insertion order: AUTOINCREMENT never reuses a number, so iterate handles stay valid.
   CREATE TABLE features (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     sid INTEGER NOT NULL,
     id TEXT NOT NULL,
     json TEXT NOT NULL,
     geometry_type TEXT,
     min_x REAL, min_y REAL, max_x REAL, max_y REAL
   );
   CREATE UNIQUE INDEX features_by_id ON features (sid, id);
   CREATE INDEX features_by_space ON features (sid);
   CREATE TABLE feature_tags (
     sid INTEGER NOT NULL,
     tag TEXT NOT NULL,
     seq INTEGER NOT NULL,
     PRIMARY KEY (sid, tag, seq)
   ) WITHOUT ROWID;
   CREATE INDEX feature_tags_by_seq ON feature_tags (seq);
   CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     username TEXT NOT NULL UNIQUE,
     password_hash TEXT NOT NULL,
     admin INTEGER NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE tokens (
     secret_hash TEXT PRIMARY KEY,
     tid TEXT NOT NULL UNIQUE,
     aid TEXT NOT NULL,
     claims TEXT NOT NULL
   );`,
  // Bootstrap tokens (the admin's, from HUB_ADMIN_TOKEN or generated) are marked so that a new HUB_ADMIN_TOKEN revokes the old one;
  // until now the hub made no other tokens, recognisable by their description.
  `ALTER TABLE tokens ADD COLUMN bootstrap INTEGER NOT NULL DEFAULT 0;
   UPDATE tokens SET bootstrap = 1 WHERE json_extract(claims, '$.description') = 'admin token created at first start';`,

  // What the space list filters on (owner, indexed, and shared for the access rule) as columns. Generated from the
  // definition, so every existing row has them at once and no write path has to keep them in step.
  `ALTER TABLE spaces ADD COLUMN owner TEXT GENERATED ALWAYS AS (json_extract(definition, '$.owner')) VIRTUAL;
   ALTER TABLE spaces ADD COLUMN shared INTEGER GENERATED ALWAYS AS (json_type(definition, '$.shared') IS 'true') VIRTUAL;
   CREATE INDEX spaces_by_owner ON spaces (owner, sid);`,

  // The spatial index (spatial-sql.ts): each feature's bounds keyed by seq, one R*Tree for every space (the space
  // is checked on the feature row). It stores 32-bit floats rounded outward, so it over-matches and the exact
  // bounds columns decide. Triggers keep it in step with every write to features in the writing transaction,
  // whatever statement makes it (a feature write, a delete by filter, a space deletion); since the last step below,
  // the feature store inserts new features' entries itself.
  `CREATE VIRTUAL TABLE feature_bounds USING rtree(seq, min_x, max_x, min_y, max_y);
   INSERT INTO feature_bounds SELECT seq, min_x, max_x, min_y, max_y FROM features WHERE min_x IS NOT NULL;
   CREATE TRIGGER feature_bounds_insert AFTER INSERT ON features WHEN new.min_x IS NOT NULL BEGIN
     INSERT INTO feature_bounds VALUES (new.seq, new.min_x, new.max_x, new.min_y, new.max_y);
   END;
   CREATE TRIGGER feature_bounds_update AFTER UPDATE OF min_x, min_y, max_x, max_y ON features
   WHEN old.min_x IS NOT new.min_x OR old.min_y IS NOT new.min_y OR old.max_x IS NOT new.max_x OR old.max_y IS NOT new.max_y BEGIN
     DELETE FROM feature_bounds WHERE seq = old.seq;
     INSERT INTO feature_bounds SELECT new.seq, new.min_x, new.max_x, new.min_y, new.max_y WHERE new.min_x IS NOT NULL;
   END;
   CREATE TRIGGER feature_bounds_delete AFTER DELETE ON features WHEN old.min_x IS NOT NULL BEGIN
     DELETE FROM feature_bounds WHERE seq = old.seq;
   END;`,

  // Projects (API.md 10): the JSON text as clients get it, with owner and published as columns the hub writes with it.
  // seq is the insertion order and the pagination handle: AUTOINCREMENT never reuses a number. One index serves the list
  // of one owner, a partial one the list of published projects. Idempotent, as a test runs the steps after the spatial index again.
  `CREATE TABLE IF NOT EXISTS projects (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     owner TEXT NOT NULL,
     published INTEGER NOT NULL,
     json TEXT NOT NULL
   );
   CREATE INDEX IF NOT EXISTS projects_by_owner ON projects (owner, seq);
   CREATE INDEX IF NOT EXISTS projects_published ON projects (seq) WHERE published;`,
  // Accounts and sessions (docs/decisions.md, "Accounts, sessions and the Token API"): rights an admin granted an
  // account, login sessions keyed by the sha256 of the cookie, failed logins per username, tokens by account.
  `ALTER TABLE accounts ADD COLUMN rights TEXT;
   CREATE INDEX tokens_by_aid ON tokens (aid);
   CREATE TABLE sessions (
     id_hash TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX sessions_by_account ON sessions (account_id);
   CREATE INDEX sessions_by_expiry ON sessions (expires_at);
   CREATE TABLE login_failures (
     username TEXT PRIMARY KEY,
     failures INTEGER NOT NULL,
     last_at INTEGER NOT NULL
   );
   CREATE INDEX login_failures_by_time ON login_failures (last_at);`,
  // New features' R*Tree entries are inserted by the feature store (feature-store.ts, indexBounds) in the Hilbert order of
  // their places instead of by this trigger in the order of the request: a write of places in no order rewrote scattered
  // R*Tree pages, about three times as many per feature (docs/decisions.md, "SQLite ingest"). Updates and deletes keep
  // their triggers; the feature store is the only writer of new rows.
  `DROP TRIGGER feature_bounds_insert;`,
  // Versions and history (docs/adr-002-history.md): the space's HEAD version and the oldest one its history can restore,
  // the version that last changed each row (NULL: written without history), the superseded states (append-only, keyed
  // by the version that ended them), and who wrote each version of a space keeping history.
  `ALTER TABLE spaces ADD COLUMN version INTEGER NOT NULL DEFAULT -1;
   ALTER TABLE spaces ADD COLUMN history_from INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE features ADD COLUMN version INTEGER;
   CREATE TABLE feature_history (
     sid INTEGER NOT NULL,
     version_to INTEGER NOT NULL,
     seq INTEGER NOT NULL,
     id TEXT NOT NULL,
     version_from INTEGER,
     json TEXT NOT NULL,
     geometry_type TEXT,
     min_x REAL, min_y REAL, max_x REAL, max_y REAL,
     PRIMARY KEY (sid, version_to, seq)
   ) WITHOUT ROWID;
   CREATE INDEX feature_history_by_id ON feature_history (sid, id, version_to);
   CREATE TABLE space_versions (
     sid INTEGER NOT NULL,
     version INTEGER NOT NULL,
     author TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (sid, version)
   ) WITHOUT ROWID;`,
  // Changesets, tags and pruning (docs/adr-002-history.md): the version before which DELETE /changesets removed the
  // history, the states written at a version found by it (current rows, partial: a space without history pays nothing;
  // superseded states by version_from), and the tags naming versions.
  `ALTER TABLE spaces ADD COLUMN deleted_before INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX features_by_version ON features (sid, version, seq) WHERE version IS NOT NULL;
   CREATE INDEX feature_history_by_from ON feature_history (sid, version_from, seq);
   CREATE TABLE space_tags (
     sid INTEGER NOT NULL,
     tag TEXT NOT NULL,
     version INTEGER NOT NULL,
     author TEXT NOT NULL,
     description TEXT,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (sid, tag)
   ) WITHOUT ROWID;`,
  // A small area at a version far back finds the states superseded since then by place (an R*Tree like feature_bounds,
  // over every space's history) instead of reading each of them through (sid, version_to): 10,000 changes since cost
  // 4-5 ms per read. The entry's id is kept with the state, so whatever deletes a state (pruning) deletes its entry.
  `ALTER TABLE feature_history ADD COLUMN bounds_id INTEGER;
   UPDATE feature_history SET bounds_id = numbered.n
     FROM (SELECT sid, version_to, seq, row_number() OVER () AS n FROM feature_history WHERE min_x IS NOT NULL) AS numbered
    WHERE feature_history.sid = numbered.sid AND feature_history.version_to = numbered.version_to AND feature_history.seq = numbered.seq;
   CREATE VIRTUAL TABLE feature_history_bounds USING rtree(id, min_x, max_x, min_y, max_y, +sid INTEGER, +version_to INTEGER, +seq INTEGER);
   INSERT INTO feature_history_bounds SELECT bounds_id, min_x, max_x, min_y, max_y, sid, version_to, seq FROM feature_history WHERE bounds_id IS NOT NULL;
   CREATE TRIGGER feature_history_bounds_delete AFTER DELETE ON feature_history WHEN old.bounds_id IS NOT NULL BEGIN
     DELETE FROM feature_history_bounds WHERE id = old.bounds_id;
   END;`,
  // What each version wrote, as a list of (seq, id) in seq order on its version record, instead of two indexes by the
  // version that wrote a state (features_by_version, feature_history_by_from): their entries went in at scattered
  // pages, one or two random pages per feature a write replaced, where the list is appended with the record
  // (docs/decisions.md, "Versions"). The lists of versions written so far come from those indexes before they go.
  `ALTER TABLE space_versions ADD COLUMN written TEXT NOT NULL DEFAULT '[]';
   UPDATE space_versions SET written = coalesce((SELECT json_group_array(json_array(w.seq, w.id)) FROM (
       SELECT seq, id FROM features f WHERE f.sid = space_versions.sid AND f.version = space_versions.version
       UNION ALL SELECT seq, id FROM feature_history h WHERE h.sid = space_versions.sid AND h.version_from = space_versions.version
       ORDER BY 1) w), '[]');
   DROP INDEX features_by_version;
   DROP INDEX feature_history_by_from;`,
  // Webhook subscriptions (docs/subscriptions.md): where each one's delivery stands, and the lease (owner node, expiry)
  // that lets one process at a time deliver it.
  `CREATE TABLE subscriptions (
     sid INTEGER NOT NULL,
     id TEXT NOT NULL,
     space_id TEXT NOT NULL,
     destination TEXT NOT NULL,
     type TEXT NOT NULL,
     filter TEXT,
     secret TEXT NOT NULL,
     state TEXT NOT NULL,
     delivered INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     retry_at INTEGER NOT NULL DEFAULT 0,
     last_error TEXT,
     lease_owner TEXT,
     lease_until INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (sid, id)
   ) WITHOUT ROWID;
   CREATE INDEX subscriptions_by_lease ON subscriptions (state, lease_until);`,
  // The history's R*Tree entries go in after the write, in batches of the background pass (history-store.ts, `prune`):
  // each space records how far in (version_to, seq) order its states have entries; the states after that are read
  // through the primary key. Every state kept so far has its entry.
  `ALTER TABLE spaces ADD COLUMN history_indexed_version INTEGER NOT NULL DEFAULT -1;
   ALTER TABLE spaces ADD COLUMN history_indexed_seq INTEGER NOT NULL DEFAULT 0;
   UPDATE spaces SET history_indexed_version = version, history_indexed_seq = 9007199254740991;`,
  // The token whose rights a subscription's delivery goes on with (docs/subscriptions.md, "Rights"); the ones made
  // before have none and are suspended at their next round until their owner PUTs them.
  'ALTER TABLE subscriptions ADD COLUMN token_id TEXT;',
  // Jobs of the jobs API (docs/jobs.md): each one's state, how far it got (an import: the input items committed), and the
  // lease (owner node, expiry) that lets one process at a time run it.
  `CREATE TABLE jobs (
     id TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     token_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     space_id TEXT NOT NULL,
     spec TEXT NOT NULL,
     state TEXT NOT NULL,
     input_bytes INTEGER,
     next_item INTEGER NOT NULL DEFAULT 0,
     written INTEGER NOT NULL DEFAULT 0,
     failed INTEGER NOT NULL DEFAULT 0,
     bytes_read INTEGER NOT NULL DEFAULT 0,
     total INTEGER NOT NULL DEFAULT 0,
     last_error TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     started_at INTEGER,
     lease_owner TEXT,
     lease_until INTEGER NOT NULL DEFAULT 0
   ) WITHOUT ROWID;
   CREATE INDEX jobs_by_owner ON jobs (owner, created_at);
   CREATE INDEX jobs_by_state ON jobs (state, created_at);
   CREATE INDEX jobs_by_space ON jobs (space_id, state);`,
  // Where the hub's namespace is in the stored text (namespace-cut.ts): its member's length in bytes of UTF-8, ending two
  // bytes before the text's end. Rows written before, and rows whose namespace is elsewhere, keep NULL.
  'ALTER TABLE features ADD COLUMN ns_cut INTEGER;',
] };

/** The schema version is the database's `user_version`; each step commits with its new version. */
export async function migrate(db: Database.Database): Promise<void> {
  await runMigrations(SCHEMA, {
    version: async () => db.pragma('user_version', { simple: true }) as number,
    apply: async (_component, sql, version) => {
      db.transaction(() => {
        db.exec(sql);
        db.pragma(`user_version = ${version}`);
      }).immediate();
    },
  });
}
