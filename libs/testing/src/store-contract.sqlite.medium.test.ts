import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@gi/domain';
import { createSqliteStore } from '@gi/store-sqlite';
import { newInvocation } from './fixtures';
import { ManualClock } from './manual-clock';
import { describeStoreContract } from './store.contract';

describeStoreContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gi-store-'));
  const clock = new ManualClock();
  const store = createSqliteStore(join(dir, 'store.db'), clock);
  return {
    store,
    clock,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite quarantine', () => {
  it('is on disk when the call returns, before its promise is awaited: a process about to exit keeps it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-store-'));
    const clock = new ManualClock();
    const path = join(dir, 'store.db');
    const store = createSqliteStore(path, clock);
    const other = new Database(path, { readonly: true });
    try {
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 60_000, clock.now());
      const written = store.invocations.quarantine(inv, { code: 'connector_failed', title: 'Quarantined', detail: 'crashed' }, clock.now());
      // Read on another connection in the same turn: nothing of the store's own has run since the call.
      expect(other.prepare('SELECT status FROM invocations WHERE id = ?').get(inv.id)).toEqual({ status: 'Failed' });
      expect(await written).toBe(true);
    } finally {
      other.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite claim', () => {
  /** Two stores on one new file: an embedded one that claims what it creates, and an executor's that reads everything back. */
  async function withTwoStores(test: (stores: { clock: ManualClock; path: string; embedded: Store; executor: Store }) => Promise<void>): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'gi-store-'));
    const clock = new ManualClock();
    const path = join(dir, 'store.db');
    const embedded = createSqliteStore(path, clock);
    const executor = createSqliteStore(path, clock, { claimsWhatItCreates: false });
    try {
      await test({ clock, path, embedded, executor });
    } finally {
      await executor.close();
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("hands over the entity's JSON as stored, whether this store created the invocation or another process did", () =>
    withTwoStores(async ({ clock, embedded, executor }) => {
      for (const [creator, claimer] of [
        [embedded, embedded],
        [embedded, executor],
      ]) {
        // Spelled as a caller may send it: the text goes through as it is, never parsed and serialized again.
        const entityJson = '{"RequestParams":"","RequestHeaders":"","RequestBody":{ "orderId" : 42.0, "note": "\\u00fc \\"quoted\\"" },"ResponseBody":null}';
        const inv = newInvocation({ createdAt: clock.now(), entityJson });
        await creator.invocations.create(inv);
        const claimed = await claimer.invocations.claim(inv, 'w1', 60_000, clock.now());
        expect(claimed?.entityJson).toBe(entityJson);
        expect((await claimer.invocations.get(inv))?.entity.RequestBody).toEqual({ orderId: 42, note: 'ü "quoted"' });
      }
    }));

  it('keeps a JSON body kept as sent once, as the span of the entity it lies in, and hands it over whole', () =>
    withTwoStores(async ({ clock, path, embedded, executor }) => {
      const raw = new Database(path, { readonly: true });
      try {
        const body = '{ "orderId" : 42.0, "lines": [1, 2] }';
        const json = newInvocation({ createdAt: clock.now(), entityJson: `{"RequestParams":"","RequestHeaders":"","RequestBody":${body},"ResponseBody":null}`, rawBody: body });
        const form = newInvocation({ createdAt: clock.now(), entityJson: '{"RequestParams":"","RequestHeaders":"","RequestBody":{"a":"1"},"ResponseBody":null}', rawBody: 'a=1' });
        for (const inv of [json, form]) await embedded.invocations.create(inv);
        const payload = raw.prepare('SELECT raw_body, raw_body_start, raw_body_end FROM invocation_payloads WHERE id = ?');
        expect(payload.get(json.id)).toEqual({ raw_body: null, raw_body_start: json.entityJson.indexOf(body), raw_body_end: json.entityJson.indexOf(body) + body.length });
        expect(payload.get(form.id)).toEqual({ raw_body: 'a=1', raw_body_start: null, raw_body_end: null });
        for (const inv of [json, form]) {
          expect((await executor.invocations.claim(inv, 'w1', 60_000, clock.now()))?.rawBody).toBe(inv.rawBody);
          expect((await executor.invocations.get(inv))?.rawBody).toBe(inv.rawBody);
        }
      } finally {
        raw.close();
      }
    }));
});
