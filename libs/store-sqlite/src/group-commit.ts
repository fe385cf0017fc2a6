import type { SqliteDatabase } from './sqlite-database';

/** How long a batch waits for the write lock held by another process sharing the file before it fails (as busy_timeout did). */
export const LOCK_WAIT_MS = 5000;
/** Longest pause between two attempts at the lock: short, as another process's commit takes well under a millisecond. */
const MAX_RETRY_DELAY_MS = 4;

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
 * file stays locked by another process for LOCK_WAIT_MS, the disk is full), every caller is rejected
 * and nothing of the batch is kept.
 *
 * The write lock is taken without SQLite's busy handler, which would put the whole thread to sleep
 * while another process sharing the file commits: a batch that finds the lock taken tries again a
 * moment later, the event loop goes on meanwhile, and the writes asked for in between join the batch.
 *
 * A hold (see `hold`) defers the commits for a moment, without blocking anything: writes keep queueing
 * and commit together once it ends.
 */
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private holds = 0;
  /** Since when the pending writes wait for another process's write lock, and the next pause. */
  private lockWait: { since: number; delayMs: number } | null = null;
  private readonly statements;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly lockWaitMs = LOCK_WAIT_MS,
  ) {
    const busyTimeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
    this.statements = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      // busy_timeout is the connection's: off for the attempt at the lock, back to its value for every other statement.
      waitOff: db.prepare('PRAGMA busy_timeout = 0').pluck(),
      waitOn: db.prepare(`PRAGMA busy_timeout = ${busyTimeoutMs}`).pluck(),
    };
  }

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
    const run = () => {
      this.scheduled = false;
      if (this.holds === 0) this.commitPending(false);
    };
    if (this.lockWait) setTimeout(run, this.lockWait.delayMs);
    else setImmediate(run);
  }

  /** Commits whatever is pending now, held or not, waiting for the write lock if need be (before the database closes). */
  flush(): void {
    this.commitPending(true);
  }

  /**
   * Commits the pending writes. Without `wait`, when another process holds the write lock, they stay
   * pending and the commit is tried again shortly.
   */
  private commitPending(wait: boolean): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    const locked = this.tryBegin(wait);
    if (locked === 'busy') return this.waitForLock();
    this.lockWait = null;
    this.pending = [];
    if (locked !== 'begun') {
      for (const write of batch) write.reject(locked);
      return;
    }
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    for (const write of batch) {
      try {
        results.push({ ok: true, value: write.apply() });
      } catch (error) {
        results.push({ ok: false, error });
      }
    }
    try {
      this.statements.commit.run();
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

  /** BEGIN IMMEDIATE: 'begun', 'busy' when another connection holds the write lock (and `wait` is off), or the error. */
  private tryBegin(wait: boolean): 'begun' | 'busy' | unknown {
    const { begin, waitOff, waitOn } = this.statements;
    if (!wait) waitOff.get();
    try {
      begin.run();
      return 'begun';
    } catch (error) {
      return !wait && (error as { code?: string }).code === 'SQLITE_BUSY' ? 'busy' : error;
    } finally {
      if (!wait) waitOn.get();
    }
  }

  /** Tries again shortly, pausing a little longer each time; gives up after `lockWaitMs`. */
  private waitForLock(): void {
    const now = Date.now();
    this.lockWait = this.lockWait ? { since: this.lockWait.since, delayMs: Math.min(MAX_RETRY_DELAY_MS, this.lockWait.delayMs * 2) } : { since: now, delayMs: 1 };
    if (now - this.lockWait.since >= this.lockWaitMs) {
      this.lockWait = null;
      const batch = this.pending;
      this.pending = [];
      const error = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      for (const write of batch) write.reject(error);
      return;
    }
    this.schedule();
  }

  private rollback(): void {
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // SQLite already rolled back on its own (it does after some I/O errors).
    }
  }
}
