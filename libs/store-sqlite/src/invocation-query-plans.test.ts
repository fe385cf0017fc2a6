import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INVOCATION_STATUSES, systemClock } from '@gi/domain';
import type { InvocationStatus } from '@gi/domain';
import { GroupCommit } from './group-commit';
import { openSqliteDatabase } from './sqlite-database';
import type { SqliteDatabase } from './sqlite-database';
import { SqliteInvocationStore } from './sqlite-invocation.store';

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
      expect({ sql, plan }).toEqual({ sql, plan: expect.not.arrayContaining([expect.stringMatching(/^SCAN invocations\b/)]) });
    }
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
