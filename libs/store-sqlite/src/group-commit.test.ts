import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;
  let writes: GroupCommit;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-group-commit-'));
    db = new Database(join(dir, 'db.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 0');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    other = new Database(join(dir, 'db.sqlite'));
    writes = new GroupCommit(db, 200);
  });

  afterEach(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (k: string) => () => db.prepare('INSERT INTO t (k) VALUES (?)').run(k).changes;
  const keysSeenByOtherConnection = () => (other.prepare('SELECT k FROM t ORDER BY k').all() as Array<{ k: string }>).map((row) => row.k);

  it('runs the writes of one turn in one transaction and resolves each once it is committed', async () => {
    const inTransaction: boolean[] = [];
    const first = writes.write(() => (inTransaction.push(db.inTransaction), insert('a')()));
    const second = writes.write(() => (inTransaction.push(db.inTransaction), insert('b')()));
    expect(keysSeenByOtherConnection()).toEqual([]);

    await expect(first).resolves.toBe(1);
    expect(keysSeenByOtherConnection()).toEqual(['a', 'b']);
    await expect(second).resolves.toBe(1);
    expect(inTransaction).toEqual([true, true]);
    expect(db.inTransaction).toBe(false);
  });

  it('rejects only the write whose statement fails; the rest of the batch is kept', async () => {
    await writes.write(insert('a'));
    const results = await Promise.allSettled([writes.write(insert('b')), writes.write(insert('a')), writes.write(insert('c'))]);

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(keysSeenByOtherConnection()).toEqual(['a', 'b', 'c']);
  });

  it('waits for the write lock of another connection without blocking the event loop, and commits once it is free', async () => {
    other.exec('BEGIN IMMEDIATE');
    const written = Promise.all([writes.write(insert('a')), writes.write(insert('b'))]);
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    // A loop blocked on the lock would tick once at most; a free one about 20 times (fewer on a loaded machine).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const late = writes.write(insert('c'));
    other.exec('ROLLBACK');
    await expect(Promise.all([written, late])).resolves.toEqual([[1, 1], 1]);
    clearInterval(ticking);
    expect(ticks).toBeGreaterThan(3);
    expect(keysSeenByOtherConnection()).toEqual(['a', 'b', 'c']);
  });

  it('rejects the whole batch when the database stays locked, keeps nothing of it, and works again once free', async () => {
    other.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([writes.write(insert('a')), writes.write(insert('b'))]);
    other.exec('ROLLBACK');

    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(keysSeenByOtherConnection()).toEqual([]);
    await expect(writes.write(insert('c'))).resolves.toBe(1);
    expect(keysSeenByOtherConnection()).toEqual(['c']);
  });

  it('commits pending writes at once on flush (before the database closes)', async () => {
    const pending = writes.write(insert('a'));
    writes.flush();
    expect(keysSeenByOtherConnection()).toEqual(['a']);
    await expect(pending).resolves.toBe(1);
  });

  it('defers commits while held: writes queue and commit together at release', async () => {
    const release = writes.hold(60_000);
    const first = writes.write(insert('a'));
    await new Promise((done) => setTimeout(done, 20));
    const second = writes.write(insert('b'));
    await new Promise((done) => setImmediate(done));
    expect(keysSeenByOtherConnection()).toEqual([]);

    release();
    await expect(Promise.all([first, second])).resolves.toEqual([1, 1]);
    expect(keysSeenByOtherConnection()).toEqual(['a', 'b']);
  });

  it('ends a hold by itself after its limit', async () => {
    writes.hold(30);
    await expect(writes.write(insert('a'))).resolves.toBe(1);
    expect(keysSeenByOtherConnection()).toEqual(['a']);
  });
});
