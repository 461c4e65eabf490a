// Tells whether anything committed to the SQLite file since the last look, from any connection: the space memo's validity (Storage.spacesStamp).
import type Database from 'better-sqlite3';

/**
 * `data_version` moves when another connection (another worker, node process or tool on the same file) has
 * committed since this connection last asked; `total_changes()` moves with every row this connection inserts,
 * updates or deletes, trigger programs included. The hub's writes all change rows, and each runs and commits
 * synchronously once begun (write-transactions.ts), so no read of this connection sees a write half done. A
 * rolled-back change moves the count too, which only makes the next lookup read again.
 */
export class CommitStamp {
  private readonly statement;

  constructor(db: Database.Database) {
    this.statement = db.prepare('SELECT data_version, total_changes() FROM pragma_data_version').raw();
  }

  /** One statement of two counters, without the row's lookup and the parse of its definition. */
  current(): string {
    const [dataVersion, changes] = this.statement.get() as [number, number];
    return `${dataVersion} ${changes}`;
  }
}
