import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import type { Clock, InvocationState, NewInvocation } from '@gi/domain';
import { GroupCommit } from './group-commit';
import { RecentlyFinished } from './recently-finished';
import { migrate } from './sqlite-database';
import { SqliteInvocationStore } from './sqlite-invocation.store';

const state = (id: string, botId = 'bot-a') => ({ id, botId }) as InvocationState;

describe('RecentlyFinished', () => {
  it('hands a state out once, only to its own bot, and never once it expired', () => {
    const recent = new RecentlyFinished(10);
    const finished = state('a');
    recent.remember(finished, 1000);
    expect(recent.take({ botId: 'bot-b', id: 'a' }, 0)).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'a' }, 0)).toBe(finished);
    expect(recent.take({ botId: 'bot-a', id: 'a' }, 0)).toBeUndefined();
    recent.remember(state('b'), 1000);
    expect(recent.take({ botId: 'bot-a', id: 'b' }, 1000)).toBeUndefined();
  });

  it('forgets the oldest past its count', () => {
    const recent = new RecentlyFinished(2);
    for (const id of ['a', 'b', 'c']) recent.remember(state(id), 1000);
    expect(recent.take({ botId: 'bot-a', id: 'a' }, 0)).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'b' }, 0)).toBeDefined();
    expect(recent.take({ botId: 'bot-a', id: 'c' }, 0)).toBeDefined();
  });
});

describe('SQLite invocation store completing a sync invocation it will be asked about', () => {
  let db: Database.Database;
  let statements: string[];
  let now: number;
  const clock: Clock = { now: () => now };
  let store: SqliteInvocationStore;

  beforeEach(() => {
    statements = [];
    now = 1_000_000;
    db = new Database(':memory:', { verbose: (sql) => statements.push(String(sql)) });
    migrate(db);
    store = new SqliteInvocationStore(db, clock, new GroupCommit(db));
  });
  afterEach(() => db.close());

  const invocation = (mode: 'sync' | 'async'): NewInvocation => ({
    id: randomUUID(),
    botId: 'bot-a',
    tokenId: null,
    entityName: 'Order',
    integrationId: 'ack',
    integrationVersion: 1,
    pool: 'default',
    mode,
    endpoint: 'GenericIntegration',
    responseContentType: 'application/json',
    entity: { RequestParams: '', RequestHeaders: '', RequestBody: { orderId: 7 }, ResponseBody: null },
    rawBody: '{"orderId":7}',
    createdAt: now,
    expireAt: now + 60_000,
    callbackUrl: null,
  });
  const run = async (inv: NewInvocation) => {
    await store.create(inv);
    await store.claim(inv, 'w1', 30_000, now);
    expect(await store.complete(inv, 'w1', { status: 'Completed', responseBody: { ok: true } }, [], now + 5)).toBe(true);
  };
  const stateReads = () => statements.filter((sql) => sql.startsWith('SELECT') && sql.includes('FROM invocations')).length;

  it('answers the first read of its state with what the completion wrote, without reading the row again', async () => {
    const inv = invocation('sync');
    await run(inv);
    const served = await store.getState(inv);
    expect(stateReads()).toBe(0);
    // What the row holds, as a read finds it (the entry was taken: this one reads).
    const read = await store.getState(inv);
    expect(stateReads()).toBe(1);
    expect(served).toEqual(read);
    expect(served).toMatchObject({ status: 'Completed', attempt: 1, startedAt: now, finishedAt: now + 5, outcome: { status: 'Completed', responseBody: { ok: true } } });
  });

  it('reads the state of an async invocation, and of one that expired', async () => {
    const async = invocation('async');
    await run(async);
    expect(await store.getState(async)).toMatchObject({ status: 'Completed' });
    expect(stateReads()).toBe(1);

    const sync = invocation('sync');
    await run(sync);
    now = sync.expireAt;
    expect(await store.getState(sync)).toBeNull();
  });

  it('holds nothing when the completion changed nothing (the lease was lost)', async () => {
    const inv = invocation('sync');
    await store.create(inv);
    await store.claim(inv, 'w1', 30_000, now);
    expect(await store.complete(inv, 'w2', { status: 'Completed', responseBody: 1 }, [], now)).toBe(false);
    expect(await store.getState(inv)).toMatchObject({ status: 'Running' });
  });
});
