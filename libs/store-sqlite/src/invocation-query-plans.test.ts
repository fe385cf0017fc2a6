import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INVOCATION_STATUSES, systemClock } from '@gi/domain';
import type { InvocationStatus, NewInvocation } from '@gi/domain';
import { GroupCommit } from './group-commit';
import { openSqliteDatabase } from './sqlite-database';
import type { SqliteDatabase } from './sqlite-database';
import { SqliteInvocationStore } from './sqlite-invocation.store';
import { SqliteJournalStore } from './sqlite-journal.store';

/** Every statement the store prepares, recorded as it prepares it. */
function recordingStatements(db: SqliteDatabase): { db: SqliteDatabase; sql: Set<string> } {
  const sql = new Set<string>();
  const prepare = db.prepare.bind(db);
  return { db: Object.assign(Object.create(db), { prepare: (text: string) => (sql.add(text), prepare(text)) }), sql };
}

/** EXPLAIN QUERY PLAN of a statement, with every parameter bound to null. */
function planOf(db: SqliteDatabase, sql: string): string[] {
  const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((match) => [match[1], null]));
  const positional = (sql.match(/\?/g) ?? []).map(() => null);
  const explain = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const rows = (positional.length > 0 ? explain.all(...positional) : explain.all(named)) as Array<{ detail: string }>;
  return rows.map((row) => row.detail);
}

/** The tables and indexes a statement may write (its bytecode's OpenWrite cursors), with every parameter bound to null. */
function writtenBy(db: SqliteDatabase, sql: string): string[] {
  const names = new Map((db.prepare('SELECT rootpage, name FROM sqlite_schema').all() as Array<{ rootpage: number; name: string }>).map((row) => [row.rootpage, row.name]));
  const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((match) => [match[1], null]));
  const positional = (sql.match(/\?/g) ?? []).map(() => null);
  const explain = db.prepare(`EXPLAIN ${sql}`);
  const ops = (positional.length > 0 ? explain.all(...positional) : explain.all(named)) as Array<{ opcode: string; p2: number }>;
  return ops.filter((op) => op.opcode === 'OpenWrite').map((op) => names.get(op.p2) ?? String(op.p2));
}

const plain = (id: string, now: number): NewInvocation => ({
  id,
  botId: 'bot-a',
  tokenId: null,
  entityName: 'Order',
  integrationId: 'ack',
  integrationVersion: 1,
  pool: 'default',
  mode: 'async',
  endpoint: 'GenericIntegration',
  responseContentType: 'application/json',
  entityJson: '{"RequestBody":null}',
  rawBody: null,
  createdAt: now,
  expireAt: now + 3600_000,
  callbackUrl: null,
});

describe('SQLite invocation queries', () => {
  let dir: string;
  let db: SqliteDatabase;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-plans-'));
    db = openSqliteDatabase(join(dir, 'store.db'));
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each search an index: none reads the whole invocations table', async () => {
    const recording = recordingStatements(db);
    const store = new SqliteInvocationStore(recording.db, systemClock, new GroupCommit(db));
    for (const status of [undefined, ...INVOCATION_STATUSES]) {
      for (const integrationId of [undefined, 'ack']) {
        for (const after of [undefined, { createdAt: 1, id: 'x' }]) await store.list('bot-a', { status, integrationId, limit: 10, after });
      }
    }
    const invocationQueries = [...recording.sql].filter((sql) => /\binvocations\b/.test(sql) && !/^\s*INSERT/.test(sql));
    expect(invocationQueries.length).toBeGreaterThan(20);
    for (const sql of invocationQueries) {
      const plan = planOf(db, sql);
      // Counting the waiting ones reads the index that holds them alone.
      const whole = plan.filter((step) => /^SCAN invocations\b/.test(step) && step !== 'SCAN invocations USING COVERING INDEX invocations_waking');
      expect({ sql, whole }).toEqual({ sql, whole: [] });
    }
  });

  it('wake up the due Waiting invocations from the index that holds them alone, in the order of their wake time', () => {
    const recording = recordingStatements(db);
    new SqliteInvocationStore(recording.db, systemClock, new GroupCommit(db));
    const [wake] = [...recording.sql].filter((sql) => sql.includes("SET status = 'Queued', waiting = NULL, published_at = @now"));
    expect(planOf(db, wake)).toEqual([
      'SEARCH invocations USING INTEGER PRIMARY KEY (rowid=?)',
      expect.stringMatching(/^LIST SUBQUERY \d+$/),
      'SEARCH invocations USING COVERING INDEX invocations_waking (wake_at<?)',
    ]);
  });

  it('journal: each entry and kept event found by its key, an invocation\'s entries through the index by step and sorted by write order', () => {
    const recording = recordingStatements(db);
    new SqliteJournalStore(recording.db, new GroupCommit(db));
    new SqliteInvocationStore(recording.db, systemClock, new GroupCommit(db));
    const journalQueries = [...recording.sql].filter((sql) => /\binvocation_(journal|events)\b/.test(sql) && !/^\s*INSERT/.test(sql));
    expect(journalQueries.length).toBeGreaterThan(10);
    for (const sql of journalQueries) {
      const plan = planOf(db, sql);
      // Only the entries of one invocation are ever sorted: a read or a listing of its journal.
      const costly = plan.filter((step) => /^SCAN /.test(step) || (/TEMP B-TREE/.test(step) && !/ORDER BY seq( DESC)?\b/.test(sql)));
      expect({ sql, costly }).toEqual({ sql, costly: [] });
    }
    const read = journalQueries.find((sql) => /FROM invocation_journal WHERE invocation_id = \? AND bot_id = \? ORDER BY seq$/.test(sql)) ?? '';
    expect(planOf(db, read)).toEqual(['SEARCH invocation_journal USING INDEX invocation_journal_by_step (invocation_id=?)', 'USE TEMP B-TREE FOR ORDER BY']);
  });

  it('plain invocations write nothing new: no journal, no entry in the indexes of Waiting ones, their expiry index entry written once', async () => {
    const recording = recordingStatements(db);
    const store = new SqliteInvocationStore(recording.db, systemClock, new GroupCommit(db), false);
    const now = Date.now();
    for (const [i, end] of ['complete', 'cancel', 'giveUp'].entries()) {
      const ref = { botId: 'bot-a', id: `inv-${i}` };
      await store.create(plain(ref.id, now));
      await store.claim(ref, 'w1', 60_000, now);
      if (end === 'complete') await store.complete(ref, 'w1', { status: 'Completed', responseBody: 1 }, [], now);
      else if (end === 'cancel') await store.cancel(ref, { code: 'cancelled', title: 'Cancelled', detail: 'x' }, now);
      else await store.giveUp(ref, { code: 'connector_failed', title: 'Gave up', detail: 'x' }, now);
    }
    const cells = Object.fromEntries((db.prepare('SELECT name, SUM(ncell) AS n FROM dbstat GROUP BY name').all() as Array<{ name: string; n: number }>).map((row) => [row.name, row.n]));
    for (const name of ['invocations_waking', 'invocations_waiting', 'invocation_journal', 'invocation_journal_by_step', 'invocation_events', 'invocation_events_by_name']) {
      expect({ name, cells: cells[name] }).toEqual({ name, cells: 0 });
    }
    expect(cells.invocations_by_expiry).toBe(3);
    // Only a suspension, and the end of an invocation that suspended, move an expiry.
    const movers = [...recording.sql].filter((sql) => /^\s*UPDATE invocations\b/.test(sql) && writtenBy(db, sql).includes('invocations_by_expiry'));
    expect(movers.map((sql) => sql.replace(/\s+/g, ' ')).sort()).toEqual([
      expect.stringMatching(/^UPDATE invocations SET expire_at = finished_at \+ retain_ms /),
      expect.stringMatching(/^UPDATE invocations SET status = CASE WHEN @requeue /),
    ]);
  });

  it('list by status from the index holding that status', async () => {
    const recording = recordingStatements(db);
    const store = new SqliteInvocationStore(recording.db, systemClock, new GroupCommit(db));
    const planOfListing = async (status: InvocationStatus) => {
      recording.sql.clear();
      await store.list('bot-a', { status, limit: 10 });
      return planOf(db, [...recording.sql][0]).join(' | ');
    };
    expect(await planOfListing('Running')).toMatch(/^SEARCH invocations USING INDEX invocations_in_flight \(status=\? AND bot_id=\?\)/);
    expect(await planOfListing('Failed')).toMatch(/^SEARCH invocations USING INDEX invocations_failures \(bot_id=\?\)/);
    expect(await planOfListing('Completed')).toMatch(/^SEARCH invocations USING INDEX invocations_by_bot \(bot_id=\?\)/);
  });

  it('log batches: appended after a search of the invocation by its key, read in order by their key, deleted by expiry unless their invocation is kept, and by their bot\'s key with the bot', () => {
    const recording = recordingStatements(db);
    new SqliteInvocationStore(recording.db, systemClock, new GroupCommit(db));
    const plans = [...recording.sql].filter((sql) => /\binvocation_logs\b/.test(sql)).map((sql) => planOf(db, sql).join(' | '));
    expect(plans).toEqual([
      expect.stringMatching(/^SEARCH invocation_logs USING PRIMARY KEY \(bot_id=\? AND invocation_id=\?\)$/),
      expect.stringMatching(/^SEARCH invocations USING INDEX sqlite_autoindex_invocations_1 \(id=\?\)$/),
      // Expired lines of an invocation still kept (its run holds the lease) stay: one key lookup each.
      expect.stringMatching(
        /^SEARCH invocation_logs USING INDEX invocation_logs_by_expiry \(expire_at<\?\) \| CORRELATED SCALAR SUBQUERY \d+ \| SEARCH i USING INDEX sqlite_autoindex_invocations_1 \(id=\?\)$/,
      ),
      // A deleted bot's lines: the front of the primary key.
      expect.stringMatching(/^SEARCH invocation_logs USING PRIMARY KEY \(bot_id=\?\)$/),
    ]);
  });
});
