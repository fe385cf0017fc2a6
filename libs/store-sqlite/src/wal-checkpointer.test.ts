import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@gi/domain';
import type { InvocationStore, NewInvocation } from '@gi/domain';
import { GroupCommit } from './group-commit';
import { openSqliteDatabase } from './sqlite-database';
import { SqliteInvocationStore } from './sqlite-invocation.store';
import { createSqliteStore } from './sqlite-store';
import { WalCheckpointer } from './wal-checkpointer';

const PAGE = 4096;
/** Small bounds, so a second of writes crosses them many times over. */
const walCheckpoints = { intervalMs: 10, restartPages: 64 };
/** How many invocation lives the sustained writes are. */
const LIVES = 4000;

const invocation = (createdAt: number): NewInvocation => ({
  id: randomUUID(),
  botId: 'bot-a',
  tokenId: null,
  entityName: 'Order',
  integrationId: 'ack',
  integrationVersion: 1,
  pool: 'default',
  mode: 'sync',
  endpoint: 'GenericIntegration',
  responseContentType: 'application/json',
  entityJson: JSON.stringify({ RequestParams: '', RequestHeaders: 'Host=x', RequestBody: { orderId: 7, note: 'x'.repeat(300) }, ResponseBody: null }),
  rawBody: JSON.stringify({ orderId: 7, note: 'x'.repeat(300) }),
  createdAt,
  expireAt: createdAt + 3600_000,
  callbackUrl: null,
});

/** One invocation's life in the store: created, claimed, completed. */
async function runOne(invocations: InvocationStore, now: number): Promise<string> {
  const inv = invocation(now);
  await invocations.create(inv);
  await invocations.claim(inv, 'w1', 30_000, now);
  await invocations.complete(inv, 'w1', { status: 'Completed', responseBody: { ok: true } }, [], now);
  return inv.id;
}

/** `lives` invocation lives, eight at a time (their writes share commits, as under load), calling `sample` after each eight. */
async function runMany(invocations: InvocationStore, lives: number, sample: () => void): Promise<void> {
  for (let done = 0; done < lives; done += 8) {
    await Promise.all(Array.from({ length: 8 }, () => runOne(invocations, Date.now())));
    sample();
  }
}

/** A serving connection as the store opens it, once its checkpointer runs. */
async function openServing(path: string) {
  const db = openSqliteDatabase(path);
  const writes = new GroupCommit(db);
  const checkpointer = WalCheckpointer.start(db, writes, path, walCheckpoints);
  await untilCheckpointerRuns(db);
  return {
    invocations: new SqliteInvocationStore(db, systemClock, writes),
    async close() {
      writes.flush();
      db.close();
      await checkpointer?.stop();
    },
  };
}

const autocheckpoint = (db: Database.Database) => db.pragma('wal_autocheckpoint', { simple: true });

/** Waits until the worker answered its first checkpoint and the serving connection stopped checkpointing. */
async function untilCheckpointerRuns(db: Database.Database): Promise<void> {
  for (let waited = 0; autocheckpoint(db) !== 0 && waited < 10_000; waited += 10) await new Promise((done) => setTimeout(done, 10));
  expect(autocheckpoint(db)).toBe(0);
}

describe('WAL checkpoints off the serving thread', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-wal-'));
    path = join(dir, 'store.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const walBytes = () => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

  /** How far the WAL grows under LIVES invocation lives with nothing checkpointing it. */
  let uncheckedBytes: number;
  beforeAll(async () => {
    const uncheckedDir = mkdtempSync(join(tmpdir(), 'gi-wal-unchecked-'));
    const unchecked = openSqliteDatabase(join(uncheckedDir, 'store.db'));
    try {
      unchecked.pragma('wal_autocheckpoint = 0');
      await runMany(new SqliteInvocationStore(unchecked, systemClock, new GroupCommit(unchecked)), LIVES, () => undefined);
      uncheckedBytes = statSync(join(uncheckedDir, 'store.db-wal')).size;
    } finally {
      unchecked.close();
      rmSync(uncheckedDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('keeps the WAL bounded under sustained writes, with the serving connection never checkpointing', async () => {
    const serving = await openServing(path);
    try {
      let largest = 0;
      await runMany(serving.invocations, LIVES, () => (largest = Math.max(largest, walBytes())));
      // Bounded: a fraction of what the writes appended, which is many times the restart length (a
      // quarter leaves room for a checkpointer thread that gets a core late on a loaded machine).
      expect(uncheckedBytes).toBeGreaterThan(64 * walCheckpoints.restartPages * PAGE);
      expect(largest).toBeLessThan(uncheckedBytes / 4);
      expect(await serving.invocations.list('bot-a', { limit: LIVES + 1 })).toHaveLength(LIVES);
    } finally {
      await serving.close();
    }
  }, 60_000);

  it('keeps every write across close and reopen; the last connection to close removes the WAL', async () => {
    const first = createSqliteStore(path, undefined, { walCheckpoints });
    const ids = await Promise.all(Array.from({ length: 50 }, () => runOne(first.invocations, Date.now())));
    await first.close();
    expect(existsSync(`${path}-wal`)).toBe(false);

    const again = createSqliteStore(path, undefined, { walCheckpoints });
    try {
      for (const id of ids) expect(await again.invocations.get({ botId: 'bot-a', id })).toMatchObject({ id, status: 'Completed' });
    } finally {
      await again.close();
    }
  });

  it('keeps the WAL bounded for connections sharing one file, each with its checkpointer (as processes do)', async () => {
    const one = await openServing(path);
    const other = await openServing(path);
    try {
      let largest = 0;
      const ids: string[] = [];
      for (let round = 0; round < LIVES / 4; round++) {
        ids.push(...(await Promise.all([one, other, one, other].map((serving) => runOne(serving.invocations, Date.now())))));
        largest = Math.max(largest, walBytes());
      }
      for (const id of ids) expect(await other.invocations.get({ botId: 'bot-a', id })).toMatchObject({ status: 'Completed' });
      expect(largest).toBeLessThan(uncheckedBytes / 4);
    } finally {
      await one.close();
      await other.close();
    }
  }, 60_000);

  it('stops its thread on close: nothing is left running', async () => {
    const threads = () => readdirSync('/proc/self/task').length;
    const before = threads();
    const store = createSqliteStore(path, undefined, { walCheckpoints });
    await runOne(store.invocations, Date.now());
    expect(threads()).toBe(before + 1);
    await store.close();
    expect(threads()).toBe(before);
    // Every connection is closed: the file can be locked exclusively at once.
    const alone = new Database(path, { timeout: 0 });
    try {
      expect(() => alone.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT')).not.toThrow();
    } finally {
      alone.close();
    }
  });

  it('turns the serving connection\'s autocheckpoint off once its thread runs, and leaves it on when the thread cannot start', async () => {
    const db = openSqliteDatabase(path);
    const checkpointer = WalCheckpointer.start(db, new GroupCommit(db), path, walCheckpoints);
    await untilCheckpointerRuns(db);
    await checkpointer?.stop();
    db.close();

    const orphan = openSqliteDatabase(join(dir, 'orphan.db'));
    // The thread opens the file by its name and refuses a missing one.
    unlinkSync(join(dir, 'orphan.db'));
    const failing = WalCheckpointer.start(orphan, new GroupCommit(orphan), join(dir, 'orphan.db'), walCheckpoints);
    await failing?.stop();
    expect(autocheckpoint(orphan)).toBe(1000);
    orphan.close();
  });
});
