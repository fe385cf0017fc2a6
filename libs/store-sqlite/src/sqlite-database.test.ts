import Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from './schema';
import { migrate, openSqliteDatabase } from './sqlite-database';

describe('SQLite file migrations', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-migrate-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates a new file once when another process migrates it at the same moment', () => {
    const file = join(dir, 'gi.sqlite');
    const mine = new Database(file);
    const other = new Database(file);
    other.pragma('busy_timeout = 0');
    // The other process starts its migration right after this one has looked at the version: it
    // finishes first when it can, or finds the file locked and leaves the migration to this one.
    const pragma = mine.pragma.bind(mine);
    let raced = false;
    mine.pragma = ((source: string, options?: Database.PragmaOptions) => {
      const result = pragma(source, options);
      if (source === 'user_version' && !raced) {
        raced = true;
        try {
          migrate(other);
        } catch (error) {
          expect(String(error)).toMatch(/database is locked/);
        }
      }
      return result;
    }) as typeof mine.pragma;
    expect(() => migrate(mine)).not.toThrow();
    expect(raced).toBe(true);
    for (const db of [mine, other]) expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    mine.close();
    other.close();
  });

  it('opens a file already migrated without writing to it', () => {
    const file = join(dir, 'gi.sqlite');
    openSqliteDatabase(file).close();
    const again = openSqliteDatabase(file);
    expect(again.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    again.close();
  });

  it('syncs the WAL as asked: NORMAL unless FULL is asked for', () => {
    // PRAGMA synchronous reads back 1 for NORMAL, 2 for FULL.
    for (const [synchronous, level] of [[undefined, 1], ['normal', 1], ['full', 2]] as const) {
      const db = openSqliteDatabase(join(dir, `${synchronous ?? 'default'}.sqlite`), synchronous);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(level);
      db.close();
    }
  });
});

describe('SQLite file opened by processes starting together', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-open-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('turns a new file to WAL while another process holds its write lock, once that process is done', async () => {
    const file = join(dir, 'gi.sqlite');
    // Another process's first transaction on the new file, still in rollback-journal mode: SQLite
    // answers a second writer that already reads the file "database is locked" at once, without waiting.
    const other = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const db = new (require(workerData.driver))(workerData.file);
       db.exec('BEGIN IMMEDIATE; CREATE TABLE held (x)');
       parentPort.postMessage('locked');
       setTimeout(() => { db.exec('COMMIT'); db.close(); parentPort.postMessage('done'); }, 300);`,
      { eval: true, workerData: { driver: require.resolve('better-sqlite3'), file } },
    );
    try {
      await new Promise((resolve) => other.once('message', resolve));
      const db = openSqliteDatabase(file);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      db.close();
    } finally {
      await other.terminate();
    }
  });
});
