import type { SqliteDatabase } from './sqlite-database';

interface PendingWrite {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the writes asked for in one turn of the event loop run in one transaction, and each
 * caller's promise settles once that transaction is committed. A commit costs a WAL append of every
 * page it touched, so under load many calls share the pages (and the commit) instead of each writing
 * its own; a lone call still commits in the same turn.
 *
 * Each write keeps its own outcome: a statement that fails (a constraint, say) rejects only its own
 * caller, as SQLite undoes only that statement. If the transaction itself cannot start or commit (the
 * file is locked by another process past busy_timeout, the disk is full), every caller is rejected
 * and nothing of the batch is kept.
 */
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private scheduled = false;

  constructor(private readonly db: SqliteDatabase) {}

  /** Runs `apply` inside the next batch; resolves with its result once the batch is durable. */
  write<T>(apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits whatever is pending now (also used before the database closes). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    for (const write of batch) {
      try {
        results.push({ ok: true, value: write.apply() });
      } catch (error) {
        results.push({ ok: false, error });
      }
    }
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.rollback();
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const result = results[i];
      if (result.ok) write.resolve(result.value);
      else write.reject(result.error);
    });
  }

  private rollback(): void {
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // SQLite already rolled back on its own (it does after some I/O errors).
    }
  }
}
