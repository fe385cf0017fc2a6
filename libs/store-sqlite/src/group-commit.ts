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
 *
 * A hold (see `hold`) defers the commits for a moment, without blocking anything: writes keep queueing
 * and commit together once it ends.
 */
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private holds = 0;

  constructor(private readonly db: SqliteDatabase) {}

  /** Runs `apply` inside the next batch; resolves with its result once the batch is durable. */
  write<T>(apply: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * Defers commits until the returned release is called, or at most `limitMs`: the WAL checkpointer
   * restarts the WAL while no write of this connection is under way, instead of making one wait.
   */
  hold(limitMs: number): () => void {
    this.holds++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(limit);
      this.holds--;
      this.schedule();
    };
    // Not unref'd: writes waiting for the release are work in progress.
    const limit = setTimeout(release, limitMs);
    return release;
  }

  private schedule(): void {
    if (this.scheduled || this.holds > 0 || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.holds === 0) this.flush();
    });
  }

  /** Commits whatever is pending now, held or not (also used before the database closes). */
  flush(): void {
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
