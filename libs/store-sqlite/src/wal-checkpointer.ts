import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { GroupCommit } from './group-commit';
import type { SqliteDatabase } from './sqlite-database';
import { CHECKPOINTER_WORKER_SOURCE } from './wal-checkpointer.worker';
import type { CheckpointerRequest, CheckpointerWorkerData, CheckpointMode, CheckpointResult } from './wal-checkpointer.worker';

export interface WalCheckpointOptions {
  /** How often the WAL is copied back into the database file. */
  intervalMs: number;
  /** The WAL length, in pages, past which it is restarted from its beginning (and its file cut back to). */
  restartPages: number;
}

export const DEFAULT_WAL_CHECKPOINTS: WalCheckpointOptions = { intervalMs: 25, restartPages: 2048 };

/** SQLite's own autocheckpoint (pages): what the serving connection falls back to without a checkpointer. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/** How long a restart may wait for a write of another process, then for readers to leave the WAL. */
const RESTART_BUSY_TIMEOUT_MS = 50;
/** The longest this connection's commits are deferred for a restart (a slow disk then makes them wait instead). */
const RESTART_HOLD_LIMIT_MS = 100;

/**
 * Checkpoints of a WAL database on a thread of their own. SQLite's autocheckpoint runs on the
 * connection that commits, so the serving thread would copy pages and wait for two fsyncs every
 * thousand pages; here that connection only appends to the WAL, and a worker thread with its own
 * connection copies it back every `intervalMs` (PASSIVE: it never blocks readers or writers).
 *
 * A writer starts the WAL over from its beginning once all of it was copied. Under steady writes that
 * moment may never come, so once the WAL is longer than `restartPages` the checkpointer makes it: it
 * catches up, holds this connection's commits back (they queue, nothing blocks), and runs a RESTART,
 * which copies the little that is left and lets the next commit start the WAL over (cutting its file
 * back to `restartPages`). Processes sharing the file each run one; SQLite runs one checkpoint at a time
 * and a RESTART waits a moment for another process's write to end.
 *
 * The serving connection turns its autocheckpoint off once the worker answers, and back on if the
 * worker ends without being asked (it failed), so the WAL never grows unchecked.
 */
export class WalCheckpointer {
  private readonly exited: Promise<void>;
  private readonly answers: Array<{ resolve: (result: CheckpointResult) => void; reject: (error: Error) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private running = true;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly writes: GroupCommit,
    private readonly worker: Worker,
    private readonly options: WalCheckpointOptions,
  ) {
    worker.on('message', (result: CheckpointResult) => this.answers.shift()?.resolve(result));
    // An error ends the worker; 'exit' follows.
    worker.on('error', () => undefined);
    this.exited = new Promise((done) => worker.once('exit', done)).then(() => this.ended());
    // A store left open does not keep its process alive.
    worker.unref();
  }

  /** Starts checkpointing the WAL database at `path`, opened by the serving thread as `db`; null when it is not in WAL mode. */
  static start(db: SqliteDatabase, writes: GroupCommit, path: string, options: WalCheckpointOptions = DEFAULT_WAL_CHECKPOINTS): WalCheckpointer | null {
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') return null;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.pragma(`journal_size_limit = ${options.restartPages * pageSize}`);
    const workerData: CheckpointerWorkerData = { driver: require.resolve('better-sqlite3'), path: resolve(path), busyTimeoutMs: RESTART_BUSY_TIMEOUT_MS };
    const checkpointer = new WalCheckpointer(db, writes, new Worker(CHECKPOINTER_WORKER_SOURCE, { eval: true, workerData }), options);
    void checkpointer.firstPass();
    return checkpointer;
  }

  /**
   * Stops checkpointing and waits until the worker has closed its connection and ended. The worker
   * is referenced again meanwhile: unreferenced, it would let the process's event loop drain (and the
   * process exit) while this wait is still under way, with whatever follows it never run.
   */
  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      clearTimeout(this.timer);
      if (this.running) this.worker.ref();
      this.send('close');
    }
    await this.exited;
  }

  private async firstPass(): Promise<void> {
    if (!(await this.pass())) return;
    if (!this.stopping && this.db.open) this.db.pragma('wal_autocheckpoint = 0');
    this.next();
  }

  private next(): void {
    if (this.stopping || !this.running) return;
    this.timer = setTimeout(() => void this.pass().then((ok) => ok && this.next()), this.options.intervalMs);
    this.timer.unref();
  }

  /** One round; false once the worker is gone. */
  private async pass(): Promise<boolean> {
    try {
      const wal = await this.checkpoint('PASSIVE');
      if (wal.log >= this.options.restartPages && !this.stopping) await this.restart();
      return true;
    } catch {
      return false;
    }
  }

  private async restart(): Promise<void> {
    // Copies what came in during the first pass, so the hold below is short.
    await this.checkpoint('PASSIVE');
    if (this.stopping) return;
    const release = this.writes.hold(RESTART_HOLD_LIMIT_MS);
    try {
      await this.checkpoint('RESTART');
    } finally {
      release();
    }
  }

  private checkpoint(mode: CheckpointMode): Promise<CheckpointResult> {
    return new Promise((resolve, reject) => {
      if (!this.running) return reject(new Error('the WAL checkpointer has ended'));
      this.answers.push({ resolve, reject });
      this.send(mode);
    });
  }

  private send(request: CheckpointerRequest): void {
    this.worker.postMessage(request);
  }

  private ended(): void {
    this.running = false;
    clearTimeout(this.timer);
    for (const answer of this.answers.splice(0)) answer.reject(new Error('the WAL checkpointer has ended'));
    if (!this.stopping && this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }
}
