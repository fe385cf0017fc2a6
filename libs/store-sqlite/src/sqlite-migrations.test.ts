import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONNECTOR_LIMITS, DEFAULT_JOURNAL_LIMITS, systemClock } from '@gi/domain';
import { MIGRATIONS } from './schema';
import { createSqliteStore } from './sqlite-store';

describe('SQLite store opening a database written before per-integration limits', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates it and reads the versions deployed then with the default limits', async () => {
    const path = join(dir, 'store.db');
    const old = new Database(path);
    old.exec(MIGRATIONS.slice(0, 2).join('\n'));
    old.pragma('user_version = 2');
    old.prepare(`INSERT INTO integrations (bot_id, integration_id, version, entity_name, code, pool, timeout_seconds, allowed_hosts, deployed_at)
      VALUES ('acme', 'ack', 1, 'Order', 'return 1', 'default', 60, '[]', 1)`).run();
    old.close();

    const store = createSqliteStore(path, systemClock);
    try {
      expect((await store.catalog.getIntegration('acme', 'ack'))?.limits).toEqual(DEFAULT_CONNECTOR_LIMITS);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite store opening a database written before raw bodies and live logs', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the invocations stored then without a raw body, their lines marked with the attempt that recorded them', async () => {
    const path = join(dir, 'store.db');
    const old = new Database(path);
    // The migration that added raw bodies and live logs, and the ones before it.
    const before = MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN raw_body'));
    old.exec(MIGRATIONS.slice(0, before).join('\n'));
    old.pragma(`user_version = ${before}`);
    const now = Date.now();
    old.prepare(`INSERT INTO invocations (id, bot_id, entity_name, integration_id, integration_version, pool, mode, endpoint, response_content_type,
        entity, status, attempt, created_at, started_at, finished_at, expire_at, outcome, logs)
      VALUES ('inv-1', 'acme', 'Order', 'ack', 1, 'default', 'async', 'GenericIntegration', 'application/json',
        '{"RequestParams":"","RequestHeaders":"","RequestBody":null,"ResponseBody":null}', 'Completed', 2, ?, ?, ?, ?,
        '{"status":"Completed","responseBody":1}', '[{"at":1,"level":"info","message":"hello"}]')`).run(now, now, now, now + 60_000);
    old.close();

    const store = createSqliteStore(path, systemClock);
    try {
      expect(await store.invocations.get({ botId: 'acme', id: 'inv-1' })).toMatchObject({
        rawBody: null,
        logs: [{ at: 1, level: 'info', message: 'hello', attempt: 2 }],
      });
    } finally {
      await store.close();
    }
  });
});

describe('SQLite store opening a database written before the catalog generation', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('caches the tokens stored then, and sees their revocation by another connection at the next read', async () => {
    const path = join(dir, 'store.db');
    const old = new Database(path);
    const before = MIGRATIONS.findIndex((m) => m.includes('catalog_generation'));
    old.exec(MIGRATIONS.slice(0, before).join('\n'));
    old.pragma(`user_version = ${before}`);
    old.prepare("INSERT INTO tokens (bot_id, token_id, created_at) VALUES ('acme', 't1', 1)").run();
    old.close();

    const store = createSqliteStore(path, systemClock);
    const other = new Database(path);
    try {
      expect(await store.tokens.get('acme', 't1')).toMatchObject({ revokedAt: null });
      other.prepare("UPDATE tokens SET revoked_at = 2 WHERE bot_id = 'acme' AND token_id = 't1'").run();
      expect(await store.tokens.get('acme', 't1')).toMatchObject({ revokedAt: 2 });
    } finally {
      other.close();
      await store.close();
    }
  });
});

describe('SQLite store opening a database written before payloads had a table of their own', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('moves each entity and raw body out of the invocation rows, runs and expires the invocations as before', async () => {
    const path = join(dir, 'store.db');
    const old = new Database(path);
    const before = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE invocation_payloads'));
    old.exec(MIGRATIONS.slice(0, before).join('\n'));
    old.pragma(`user_version = ${before}`);
    const now = Date.now();
    const entity = JSON.stringify({ RequestParams: '', RequestHeaders: '', RequestBody: { orderId: 42 }, ResponseBody: null });
    const insert = old.prepare(`INSERT INTO invocations (id, bot_id, entity_name, integration_id, integration_version, pool, mode, endpoint, response_content_type,
        entity, raw_body, status, created_at, expire_at)
      VALUES (?, 'acme', 'Order', 'ack', 1, 'default', 'async', 'GenericIntegration', 'application/json', ?, ?, 'Queued', ?, ?)`);
    insert.run('inv-kept', entity, '{"orderId":42}', now, now + 60_000);
    insert.run('inv-expired', entity, null, now, now + 1);
    old.close();

    const store = createSqliteStore(path, systemClock, { claimsWhatItCreates: false });
    const reader = new Database(path);
    try {
      // Updates of an invocation no longer rewrite what the call brought: it is not in the row.
      const columns = (reader.prepare("SELECT name FROM pragma_table_info('invocations')").pluck().all() as string[]);
      expect(columns).not.toContain('entity');
      expect(columns).not.toContain('raw_body');
      expect(await store.invocations.get({ botId: 'acme', id: 'inv-kept' })).toMatchObject({ entity: JSON.parse(entity), rawBody: '{"orderId":42}' });
      expect(await store.invocations.claim({ botId: 'acme', id: 'inv-kept' }, 'executor-1', 30_000, Date.now())).toMatchObject({
        entityJson: entity,
        rawBody: '{"orderId":42}',
        attempt: 1,
      });
      // An invocation deleted takes its payload with it.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.invocations.deleteExpired(Date.now());
      expect(reader.prepare('SELECT id FROM invocation_payloads ORDER BY id').pluck().all()).toEqual(['inv-kept']);
    } finally {
      reader.close();
      await store.close();
    }
  });
});

describe('SQLite store opening a database written before durable runs', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the invocations stored then as plain ones, which may journal and suspend from their next attempt on', async () => {
    const path = join(dir, 'store.db');
    const old = new Database(path);
    const before = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE invocation_journal'));
    old.exec(MIGRATIONS.slice(0, before).join('\n'));
    old.pragma(`user_version = ${before}`);
    const now = Date.now();
    old.prepare(`INSERT INTO invocations (id, bot_id, entity_name, integration_id, integration_version, pool, mode, endpoint, response_content_type, status, created_at, expire_at)
      VALUES ('inv-old', 'acme', 'Order', 'ack', 1, 'default', 'async', 'GenericIntegration', 'application/json', 'Queued', ?, ?)`).run(now, now + 60_000);
    old.prepare(`INSERT INTO invocation_payloads (id, entity) VALUES ('inv-old', '{"RequestBody":null}')`).run();
    old.close();

    const store = createSqliteStore(path, systemClock, { claimsWhatItCreates: false });
    try {
      const ref = { botId: 'acme', id: 'inv-old' };
      expect(await store.invocations.get(ref)).toMatchObject({ status: 'Queued', waiting: null, steps: 0, activeMs: 0, progressAttempt: 0 });
      expect(await store.invocations.claim(ref, 'w1', 30_000, now)).toMatchObject({ attempt: 1, steps: 0, waiting: null });
      expect(await store.journal.read(ref)).toEqual([]);
      const step = { name: 'send', occurrence: 1, attempts: 1, startedAt: now, status: 'done' as const, resultJson: '1', finishedAt: now };
      expect(await store.journal.record(ref, { owner: 'w1', attempt: 1 }, step, DEFAULT_JOURNAL_LIMITS)).toMatchObject({ status: 'done' });
      const suspension = { reason: { kind: 'sleep' as const, name: 'nap', until: now + 1000 }, activeMs: 5, keepUntil: now + 120_000 };
      expect(await store.invocations.suspend(ref, { owner: 'w1', attempt: 1 }, suspension, now)).toBe('waiting');
      expect(await store.invocations.get(ref)).toMatchObject({ status: 'Waiting', steps: 1, expireAt: now + 120_000 });
    } finally {
      await store.close();
    }
  });

  it('drops the second journal index an early build of its migration made', async () => {
    const path = join(dir, 'store.db');
    const early = new Database(path);
    const journal = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE invocation_journal'));
    early.exec(MIGRATIONS.slice(0, journal + 1).join('\n'));
    early.exec('CREATE INDEX invocation_journal_in_order ON invocation_journal (invocation_id)');
    early.pragma(`user_version = ${journal + 1}`);
    early.close();
    const store = createSqliteStore(path, systemClock);
    const reader = new Database(path, { readonly: true });
    try {
      const indexes = reader.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'invocation_journal' AND sql IS NOT NULL").pluck().all();
      expect(indexes).toEqual(['invocation_journal_by_step']);
    } finally {
      reader.close();
      await store.close();
    }
  });
});
