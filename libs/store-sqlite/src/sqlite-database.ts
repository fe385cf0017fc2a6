import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './schema';

export type SqliteDatabase = Database.Database;

/**
 * When a commit is on disk. In WAL mode, `normal` syncs the WAL only at checkpoints: a commit survives
 * a crash of the process, but the last ones may be lost on a crash of the OS or a power loss. `full`
 * syncs the WAL at every commit: a commit survives a power loss too (given disks that honour fsync).
 */
export type SqliteSynchronous = 'normal' | 'full';

/**
 * Opens (and migrates) the SQLite file. WAL lets readers and one writer work at once, also across
 * processes on one host; `synchronous` says when a commit is on disk (default normal).
 */
export function openSqliteDatabase(path: string, synchronous: SqliteSynchronous = 'normal'): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // First: processes opening a new file together wait for each other from the first statement on.
  db.pragma(`busy_timeout = ${OPEN_WAIT_MS}`);
  toWal(db);
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // Pages read through a memory map: when another process sharing the file commits, SQLite drops this
  // connection's page cache, and reading the pages again is then a memory access, not a read() each
  // (two executors on one file: 730 -> 560 µs of CPU per job).
  db.pragma('mmap_size = 268435456');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

/** How long opening waits for other processes sharing the file: for their locks, and for a new file to turn to WAL. */
const OPEN_WAIT_MS = 5000;

/**
 * Turns the file to WAL mode (a no-op when it is already). On a new file this is a write in
 * rollback-journal mode, where SQLite answers "database is locked" at once, without its busy handler,
 * to a connection that reads the file while another process holds the write lock (two processes
 * starting together on a new file): tried again every few milliseconds for up to OPEN_WAIT_MS.
 */
function toWal(db: SqliteDatabase): void {
  const until = Date.now() + OPEN_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw error;
      // A pause of the opening thread before it serves anything.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}

/**
 * Applies the migrations the file lacks. The version is read inside the write transaction: processes
 * starting together on a new file (a gateway and an executor) migrate it one after the other, and the
 * second finds nothing left to do.
 */
export function migrate(db: SqliteDatabase): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() >= MIGRATIONS.length) return;
  db.transaction(() => {
    for (let i = version(); i < MIGRATIONS.length; i++) db.exec(MIGRATIONS[i]);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
