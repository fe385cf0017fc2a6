import { GiError, MAX_RECORDED_RESULT_BYTES, MAX_STORED_ENTITY_BYTES, UnrecordableOutcome, unrecordableOutcome } from '@gi/domain';
import { newInvocation } from './fixtures';
import type { ClaimedInvocation, LogLine, NewInvocation } from '@gi/domain';
import type { StoreUnderTest } from './store-under-test';

/** The invocation store: create, claim, leases, outcomes, logs, progress, callbacks, sweeps, and the recent run times. Part of the store contract (store.contract.ts). */
export function describeInvocationStoreContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('invocations', () => {
    it('stores a new invocation as Queued and reads it back only for its own bot', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const read = await store.invocations.get({ botId: 'bot-a', id: inv.id });
      const { callbackUrl: _none, entityJson, ...stored } = inv;
      expect(read).toMatchObject({ ...stored, entity: JSON.parse(entityJson), status: 'Queued', attempt: 0, outcome: null, logs: [], progress: null, callback: null });
      expect(await store.invocations.get({ botId: 'bot-b', id: inv.id })).toBeNull();
      expect(await store.invocations.get({ botId: 'bot-a', id: 'nope' })).toBeNull();
    });

    it('keeps what the gateway verified of a call with it (none for a bearer call) and hands it to the claim', async () => {
      const { store, clock } = subject;
      const signed = newInvocation({ createdAt: clock.now(), inbound: { scheme: 'github', deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958' } });
      const plain = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(signed);
      await store.invocations.create(plain);
      expect((await store.invocations.get(signed))?.inbound).toEqual({ scheme: 'github', deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
      expect((await store.invocations.get(plain))?.inbound ?? null).toBeNull();
      expect((await store.invocations.claim(signed, 'w1', 10_000, clock.now()))?.inbound).toEqual({ scheme: 'github', deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
      expect((await store.invocations.claim(plain, 'w1', 10_000, clock.now()))?.inbound ?? null).toBeNull();
    });

    it('reads an invocation\'s state alone, as get has it, without its entity or logs, only for its own bot', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 60_000 });
      await store.invocations.create(inv);
      const stateOf = async () => {
        const full = await store.invocations.get(inv);
        if (!full) return null;
        const { id, botId, integrationId, mode, status, attempt, startedAt, finishedAt, progress, outcome, responseContentType, waiting, steps } = full;
        return { id, botId, integrationId, mode, status, attempt, startedAt, finishedAt, progress, outcome, responseContentType, waiting, steps };
      };
      expect(await store.invocations.getState(inv)).toEqual(await stateOf());
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      await store.invocations.setProgress(inv, 'w1', { percent: 30, message: 'half way' });
      expect(await store.invocations.getState(inv)).toEqual(await stateOf());
      clock.advance(5);
      const logs = [{ at: clock.now(), level: 'info' as const, message: 'done' }];
      await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: { ok: 1 } }, logs, clock.now());
      const done = await store.invocations.getState(inv);
      expect(done).toEqual(await stateOf());
      expect(done).toMatchObject({ status: 'Completed', outcome: { status: 'Completed', responseBody: { ok: 1 } }, finishedAt: clock.now() });
      expect(done).not.toHaveProperty('entity');
      expect(done).not.toHaveProperty('rawBody');
      expect(done).not.toHaveProperty('logs');
      expect(await store.invocations.getState({ botId: 'bot-b', id: inv.id })).toBeNull();
      clock.advance(60_000);
      expect(await store.invocations.getState(inv)).toBeNull();
    });

    it('marks an invocation watched for good, returning its state as of the mark; its completion says so', async () => {
      const { store, clock } = subject;
      const plain = newInvocation({ createdAt: clock.now(), mode: 'sync' });
      const watched = newInvocation({ createdAt: clock.now(), mode: 'sync' });
      for (const inv of [plain, watched]) {
        await store.invocations.create(inv);
        await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      }
      const marked = await store.invocations.watch(watched);
      expect(marked).toEqual(await store.invocations.getState(watched));
      expect(marked).toMatchObject({ id: watched.id, mode: 'sync', status: 'Running', attempt: 1 });
      expect(await store.invocations.watch(watched)).toEqual(marked);
      const done = { status: 'Completed' as const, responseBody: 1 };
      expect(await store.invocations.complete(plain, 'w1', done, [], clock.now())).toEqual({ watched: false });
      expect(await store.invocations.complete(watched, 'w1', done, [], clock.now())).toEqual({ watched: true });
      // A mark after the completion finds it finished: its waiter answers from it, needing no event.
      expect(await store.invocations.watch(plain)).toMatchObject({ status: 'Completed', outcome: done });
      expect(await store.invocations.watch({ botId: 'bot-b', id: plain.id })).toBeNull();
      expect(await store.invocations.watch({ botId: 'bot-a', id: 'nope' })).toBeNull();
    });

    it('orders marks with the completion: of a mark and a completion racing, the completion sees the mark or the mark sees it finished', async () => {
      const { store, clock } = subject;
      for (let round = 0; round < 20; round++) {
        const inv = newInvocation({ createdAt: clock.now(), mode: 'sync' });
        await store.invocations.create(inv);
        await store.invocations.claim(inv, 'w1', 10_000, clock.now());
        const [completion, mark] = await Promise.all([
          store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: round }, [], clock.now()),
          store.invocations.watch(inv),
        ]);
        expect(completion?.watched === true || mark?.status === 'Completed').toBe(true);
      }
    });

    it('refuses a second invocation with the same id', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      // Not toThrow(): a native addon's error can come from another test file's realm in the same worker.
      await expect(store.invocations.create(inv)).rejects.toMatchObject({ message: expect.any(String) });
    });

    it('lets exactly one owner claim a queued invocation', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const claims = await Promise.all(
        ['w1', 'w2', 'w3'].map((owner) => store.invocations.claim(inv, owner, 30_000, clock.now())),
      );
      const won = claims.filter((c) => c !== null);
      expect(won).toHaveLength(1);
      expect(won[0]).toMatchObject({ status: 'Running', attempt: 1, startedAt: clock.now() });
      expect(await store.invocations.claim({ botId: 'bot-b', id: inv.id }, 'w4', 30_000, clock.now() + 60_000)).toBeNull();
    });

    it('hands the claimer the invocation as stored, running under its lease, on every attempt', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now(), tokenId: 't1', callbackUrl: 'https://hooks.example.com/gi' });
      await store.invocations.create(inv);
      // The claim hands over the entity as the JSON text stored, exactly as created; `get` parses it.
      const asStored = (claimed: ClaimedInvocation | null) => {
        expect(claimed?.entityJson).toBe(inv.entityJson);
        const { entityJson, ...invocation } = claimed ?? ({ entityJson: 'null' } as ClaimedInvocation);
        return claimed && { ...invocation, entity: JSON.parse(entityJson) };
      };
      const first = asStored(await store.invocations.claim(inv, 'w1', 10_000, clock.now()));
      expect(first).toEqual(await store.invocations.get(inv));
      expect(first).toMatchObject({ entity: JSON.parse(inv.entityJson), status: 'Running', attempt: 1, leaseOwner: 'w1', leaseUntil: clock.now() + 10_000, logs: [], outcome: null });
      await store.invocations.setProgress(inv, 'w1', { percent: 50 });
      clock.advance(10_001);
      const second = asStored(await store.invocations.claim(inv, 'w2', 10_000, clock.now()));
      expect(second).toEqual(await store.invocations.get(inv));
      expect(second).toMatchObject({ entity: JSON.parse(inv.entityJson), attempt: 2, leaseOwner: 'w2', startedAt: clock.now(), progress: null });
    });

    it('hands an expired lease to a new owner with the next attempt, and keeps a renewed one', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      clock.advance(5_000);
      expect(await store.invocations.renewLease(inv, 'w1', 10_000, clock.now())).toBe(true);
      clock.advance(9_000);
      expect(await store.invocations.claim(inv, 'w2', 10_000, clock.now())).toBeNull();
      clock.advance(2_000);
      const second = await store.invocations.claim(inv, 'w2', 10_000, clock.now());
      expect(second).toMatchObject({ attempt: 2, leaseOwner: 'w2' });
      expect(await store.invocations.renewLease(inv, 'w1', 10_000, clock.now())).toBe(false);
    });

    it('records exactly one outcome, only from the lease owner', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      const logs = [{ at: clock.now(), level: 'info' as const, message: 'hello' }];
      expect(await store.invocations.complete(inv, 'w2', { status: 'Completed', responseBody: 'no' }, [], clock.now())).toBeNull();
      expect(await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: { ok: 1 } }, logs, clock.now())).toEqual({ watched: false });
      expect(await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: { ok: 2 } }, [], clock.now())).toBeNull();
      const done = await store.invocations.get(inv);
      expect(done).toMatchObject({ status: 'Completed', outcome: { status: 'Completed', responseBody: { ok: 1 } }, logs, leaseOwner: null });
      expect(await store.invocations.claim(inv, 'w3', 10_000, clock.now() + 3600_000 - 1)).toBeNull();
    });

    it('records failures with their error', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      const error = { code: 'connector_error' as const, title: 'Missing entity', detail: 'null' };
      await store.invocations.complete(inv, 'w1', { status: 'Failed', error }, [], clock.now());
      expect((await store.invocations.get(inv))?.outcome).toEqual({ status: 'Failed', error });
      const [summary] = await store.invocations.list('bot-a', { limit: 10 });
      expect(summary).toMatchObject({ id: inv.id, status: 'Failed', error });
    });

    it('gives up on an invocation whatever its lease, once', async () => {
      const { store, clock } = subject;
      const queued = newInvocation({ createdAt: clock.now() });
      const running = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(queued);
      await store.invocations.create(running);
      await store.invocations.claim(running, 'w1', 60_000, clock.now());
      const error = { code: 'connector_failed' as const, title: 'Gave up', detail: 'poison' };
      expect(await store.invocations.giveUp(queued, error, clock.now())).toBe(true);
      expect(await store.invocations.giveUp(running, error, clock.now())).toBe(true);
      expect(await store.invocations.giveUp(running, error, clock.now())).toBe(false);
      expect(await store.invocations.giveUp({ botId: 'bot-b', id: queued.id }, error, clock.now())).toBe(false);
      expect(await store.invocations.get(running)).toMatchObject({ status: 'Failed', outcome: { status: 'Failed', error }, leaseOwner: null });
      expect(await store.invocations.complete(running, 'w1', { status: 'Completed', responseBody: 1 }, [], clock.now())).toBeNull();
    });

    it('refuses an outcome it cannot serialise without writing anything, and then records another', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 60_000, clock.now());
      const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
      await expect(store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: deep }, [], clock.now())).rejects.toBeInstanceOf(UnrecordableOutcome);
      await expect(store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: { n: 1n } }, [], clock.now())).rejects.toBeInstanceOf(UnrecordableOutcome);
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Running', leaseOwner: 'w1' });
      expect(await store.invocations.complete(inv, 'w1', unrecordableOutcome, [], clock.now())).toEqual({ watched: false });
      expect((await store.invocations.get(inv))?.outcome).toEqual(unrecordableOutcome);
    });

    it('quarantines an unfinished invocation whatever its lease, once, before the call settles where it can', async () => {
      const { store, clock } = subject;
      const running = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(running);
      await store.invocations.claim(running, 'w1', 60_000, clock.now());
      const error = { code: 'connector_failed' as const, title: 'Quarantined', detail: 'crashed' };
      expect(await store.invocations.quarantine(running, error, clock.now())).toBe(true);
      expect(await store.invocations.quarantine(running, error, clock.now())).toBe(false);
      expect(await store.invocations.get(running)).toMatchObject({ status: 'Failed', outcome: { status: 'Failed', error }, leaseOwner: null });
      expect(await store.invocations.claim(running, 'w2', 60_000, clock.now() + 120_000)).toBeNull();
    });

    it('cancels a queued or running invocation once; then nobody claims, renews or completes it', async () => {
      const { store, clock } = subject;
      const queued = newInvocation({ createdAt: clock.now() });
      const running = newInvocation({ createdAt: clock.now() });
      const done = newInvocation({ createdAt: clock.now() });
      for (const inv of [queued, running, done]) await store.invocations.create(inv);
      await store.invocations.claim(running, 'w1', 60_000, clock.now());
      await store.invocations.claim(done, 'w1', 60_000, clock.now());
      await store.invocations.complete(done, 'w1', { status: 'Completed', responseBody: 1 }, [], clock.now());
      const error = { code: 'cancelled' as const, title: 'Invocation cancelled', detail: 'by the test' };
      clock.advance(10);
      expect(await store.invocations.cancel({ botId: 'bot-b', id: queued.id }, error, clock.now())).toBe(false);
      expect(await store.invocations.cancel(queued, error, clock.now())).toBe(true);
      expect(await store.invocations.cancel(running, error, clock.now())).toBe(true);
      expect(await store.invocations.cancel(running, error, clock.now())).toBe(false);
      expect(await store.invocations.cancel(done, error, clock.now())).toBe(false);
      expect(await store.invocations.get(queued)).toMatchObject({ status: 'Cancelled', outcome: { status: 'Cancelled', error }, finishedAt: clock.now() });
      expect(await store.invocations.claim(queued, 'w2', 60_000, clock.now())).toBeNull();
      expect(await store.invocations.renewLease(running, 'w1', 60_000, clock.now())).toBe(false);
      expect(await store.invocations.complete(running, 'w1', { status: 'Completed', responseBody: 2 }, [], clock.now())).toBeNull();
      expect(await store.invocations.requeueExpiredLeases(clock.now() + 3600_000)).toEqual([]);
      expect((await store.invocations.get(done))?.status).toBe('Completed');
      const cancelled = await store.invocations.list('bot-a', { status: 'Cancelled', limit: 10 });
      expect(cancelled.map((s) => s.id).sort()).toEqual([queued.id, running.id].sort());
      expect(cancelled[0].error).toEqual(error);
    });

    it('keeps progress of the running attempt', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      await store.invocations.setProgress(inv, 'w1', { percent: 40, message: 'page 2' });
      await store.invocations.setProgress(inv, 'other', { percent: 99 });
      expect((await store.invocations.get(inv))?.progress).toEqual({ percent: 40, message: 'page 2' });
    });

    it('keeps the raw body as sent, apart from the entity, and gives it to every claim', async () => {
      const { store, clock } = subject;
      const raw = '\uFEFF{ "orderId" : 7, "note": "caf\u00e9 \u{1F600}" }\r\n';
      const inv = newInvocation({ createdAt: clock.now(), rawBody: raw });
      const upload = newInvocation({ createdAt: clock.now(), rawBody: null, endpoint: 'GenericIntegrationFileTransfer' });
      await store.invocations.create(inv);
      await store.invocations.create(upload);
      expect(await store.invocations.get(inv)).toMatchObject({ rawBody: raw, entity: JSON.parse(inv.entityJson) });
      expect((await store.invocations.get(upload))?.rawBody).toBeNull();
      expect((await store.invocations.claim(inv, 'w1', 10_000, clock.now()))?.rawBody).toBe(raw);
      clock.advance(10_001);
      expect((await store.invocations.claim(inv, 'w2', 10_000, clock.now()))?.rawBody).toBe(raw);
      expect((await store.invocations.claim(upload, 'w2', 10_000, clock.now()))?.rawBody).toBeNull();
      expect(await store.invocations.getState(inv)).not.toHaveProperty('rawBody');
    });

    it('gives back whole a JSON body that lies in its entity as sent (a store may keep it once)', async () => {
      const { store, clock } = subject;
      const raw = ' { "orderId" : 7.0, "RequestBody": "caf\u00e9 \u{1F600}" }\n';
      const inv = newInvocation({ createdAt: clock.now(), entityJson: `{"RequestParams":"RequestBody=1","RequestHeaders":"","RequestBody":${raw},"ResponseBody":null}`, rawBody: raw });
      await store.invocations.create(inv);
      expect(await store.invocations.get(inv)).toMatchObject({ rawBody: raw, entity: JSON.parse(inv.entityJson) });
      const claimed = await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      expect([claimed?.rawBody, claimed?.entityJson]).toEqual([raw, inv.entityJson]);
      clock.advance(10_001);
      expect((await store.invocations.claim(inv, 'w2', 10_000, clock.now()))?.rawBody).toBe(raw);
    });

    it("appends the running attempt's lines for its lease owner alone, readable while it runs and in order after it ends", async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const line = (message: string) => ({ at: clock.now(), level: 'info' as const, message });
      const batch = (seq: number, ...messages: string[]) => ({ attempt: 1, seq, lines: messages.map(line) });
      expect(await store.invocations.appendLogs(inv, 'w1', batch(0, 'too early'))).toBe(false);
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      expect(await store.invocations.appendLogs(inv, 'w1', batch(0, 'one', 'two'))).toBe(true);
      expect(await store.invocations.appendLogs(inv, 'w2', batch(1, 'not the owner'))).toBe(false);
      expect(await store.invocations.appendLogs(inv, 'w1', { ...batch(1, 'another attempt'), attempt: 2 })).toBe(false);
      expect(await store.invocations.appendLogs({ botId: 'bot-b', id: inv.id }, 'w1', batch(1, 'another bot'))).toBe(false);
      const running = await store.invocations.get(inv);
      expect(running).toMatchObject({ status: 'Running', logs: [{ message: 'one', attempt: 1 }, { message: 'two', attempt: 1 }] });
      expect(running?.logs[0]).toEqual({ ...line('one'), attempt: 1 });
      // A batch sent again (its first write's answer lost) is stored once.
      expect(await store.invocations.appendLogs(inv, 'w1', batch(0, 'one', 'two'))).toBe(true);
      expect(await store.invocations.appendLogs(inv, 'w1', batch(1, 'three'))).toBe(true);
      expect(await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: 1 }, [line('four')], clock.now())).toEqual({ watched: false });
      expect(await store.invocations.appendLogs(inv, 'w1', batch(2, 'after the end'))).toBe(false);
      const done = await store.invocations.get(inv);
      expect(done?.logs.map((l) => [l.attempt, l.message])).toEqual([
        [1, 'one'],
        [1, 'two'],
        [1, 'three'],
        [1, 'four'],
      ]);
    });

    it('keeps the lines of an attempt whose executor died before those of the attempt that finished', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const lines = (...messages: string[]) => messages.map((message) => ({ at: clock.now(), level: 'info' as const, message }));
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      expect(await store.invocations.appendLogs(inv, 'w1', { attempt: 1, seq: 0, lines: lines('first try') })).toBe(true);
      clock.advance(10_001);
      // The same executor claims it again after its lease ran out: a late batch of its first attempt is refused.
      expect(await store.invocations.claim(inv, 'w1', 10_000, clock.now())).toMatchObject({ attempt: 2, logs: [] });
      expect(await store.invocations.appendLogs(inv, 'w1', { attempt: 1, seq: 1, lines: lines('late') })).toBe(false);
      expect(await store.invocations.appendLogs(inv, 'w1', { attempt: 2, seq: 0, lines: lines('second try') })).toBe(true);
      await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: 1 }, lines('done'), clock.now());
      expect((await store.invocations.get(inv))?.logs.map((l) => [l.attempt, l.message])).toEqual([
        [1, 'first try'],
        [2, 'second try'],
        [2, 'done'],
      ]);
    });

    it('keeps the lines a cancelled run appended, and takes no more', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const lines = (...messages: string[]) => messages.map((message) => ({ at: clock.now(), level: 'error' as const, message }));
      await store.invocations.claim(inv, 'w1', 10_000, clock.now());
      await store.invocations.appendLogs(inv, 'w1', { attempt: 1, seq: 0, lines: lines('working') });
      await store.invocations.cancel(inv, { code: 'cancelled', title: 'Invocation cancelled', detail: 'by the test' }, clock.now());
      expect(await store.invocations.appendLogs(inv, 'w1', { attempt: 1, seq: 1, lines: lines('still working') })).toBe(false);
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Cancelled', logs: [{ level: 'error', message: 'working', attempt: 1 }] });
    });

    it('requeues running invocations whose lease expired and hands out stale queued ones once per round', async () => {
      const { store, clock } = subject;
      const running = newInvocation({ createdAt: clock.now() });
      const queued = newInvocation({ createdAt: clock.now(), pool: 'bulk' });
      await store.invocations.create(running);
      await store.invocations.create(queued);
      await store.invocations.claim(running, 'w1', 10_000, clock.now());
      expect(await store.invocations.requeueExpiredLeases(clock.now() + 5_000)).toEqual([]);
      expect(await store.invocations.requeueExpiredLeases(clock.now() + 20_000)).toEqual([{ botId: 'bot-a', id: running.id }]);
      expect((await store.invocations.get(running))?.status).toBe('Queued');
      // Published at creation: not stale yet. The requeued one counts as never published.
      const first = await store.invocations.takeUnpublished(clock.now(), clock.now(), 10);
      expect(first.map((r) => r.id)).toEqual([running.id]);
      clock.advance(60_000);
      expect(await store.invocations.takeUnpublished(clock.now() - 90_000, clock.now(), 10)).toEqual([]);
      const stale = await store.invocations.takeUnpublished(clock.now() - 30_000, clock.now(), 10);
      expect(stale).toHaveLength(2);
      expect(stale).toContainEqual({ botId: 'bot-a', id: queued.id, pool: 'bulk' });
      // Taken once per round: a second sweeper in the same round gets nothing.
      expect(await store.invocations.takeUnpublished(clock.now() - 30_000, clock.now(), 10)).toEqual([]);
    });

    it('hands a run back: its lease owner alone releases it, Queued again and claimable at once by another', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'stopping', 60_000, clock.now());
      expect(await store.invocations.releaseLease(inv, 'someone-else')).toBe(false);
      expect((await store.invocations.get(inv))?.status).toBe('Running');
      expect(await store.invocations.releaseLease({ botId: 'bot-b', id: inv.id }, 'stopping')).toBe(false);
      expect(await store.invocations.releaseLease(inv, 'stopping')).toBe(true);
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Queued', leaseOwner: null, leaseUntil: null, attempt: 1 });
      // Long before the lease would have ended, the next claim takes it: a new attempt.
      expect(await store.invocations.claim(inv, 'next', 60_000, clock.now())).toMatchObject({ attempt: 2 });
      expect(await store.invocations.releaseLease(inv, 'stopping')).toBe(false);
      expect(await store.invocations.renewLease(inv, 'stopping', 60_000, clock.now())).toBe(false);
      await store.invocations.complete(inv, 'next', { status: 'Completed', responseBody: 2 }, [], clock.now());
      expect(await store.invocations.releaseLease(inv, 'next')).toBe(false);
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Completed', attempt: 2 });
    });

    it('releases the leases of a dead owner at once, and no one else\'s', async () => {
      const { store, clock } = subject;
      const dead = newInvocation({ createdAt: clock.now() });
      const alive = newInvocation({ createdAt: clock.now() });
      const done = newInvocation({ createdAt: clock.now() });
      for (const inv of [dead, alive, done]) await store.invocations.create(inv);
      await store.invocations.claim(dead, 'gone', 60_000, clock.now());
      await store.invocations.claim(alive, 'alive', 60_000, clock.now());
      await store.invocations.claim(done, 'gone', 60_000, clock.now());
      await store.invocations.complete(done, 'gone', { status: 'Completed', responseBody: 1 }, [], clock.now());
      expect(await store.invocations.releaseLeasesOf('gone')).toEqual([{ botId: 'bot-a', id: dead.id }]);
      expect(await store.invocations.get(dead)).toMatchObject({ status: 'Queued', leaseOwner: null });
      expect((await store.invocations.get(alive))?.status).toBe('Running');
      expect((await store.invocations.get(done))?.status).toBe('Completed');
      // Counted as never published: the next sweep's publish takes it.
      expect((await store.invocations.takeUnpublished(1, clock.now(), 10)).map((r) => r.id)).toEqual([dead.id]);
      expect(await store.invocations.releaseLeasesOf('gone')).toEqual([]);
    });

    it('lists a bot\'s invocations newest first, filtered by status and integration', async () => {
      const { store, clock } = subject;
      const first = newInvocation({ createdAt: clock.now(), integrationId: 'x' });
      clock.advance(1);
      const second = newInvocation({ createdAt: clock.now(), integrationId: 'y' });
      const other = newInvocation({ createdAt: clock.now(), botId: 'bot-b' });
      for (const inv of [first, second, other]) await store.invocations.create(inv);
      await store.invocations.claim(second, 'w', 1000, clock.now());
      expect((await store.invocations.list('bot-a', { limit: 10 })).map((s) => s.id)).toEqual([second.id, first.id]);
      expect((await store.invocations.list('bot-a', { limit: 1 })).map((s) => s.id)).toEqual([second.id]);
      expect((await store.invocations.list('bot-a', { status: 'Queued', limit: 10 })).map((s) => s.id)).toEqual([first.id]);
      expect((await store.invocations.list('bot-a', { integrationId: 'y', limit: 10 })).map((s) => s.id)).toEqual([second.id]);
    });

    it('lists the page after a position, ties in time broken by id', async () => {
      const { store, clock } = subject;
      const created: ReturnType<typeof newInvocation>[] = [];
      for (let i = 0; i < 5; i++) {
        // Two at each time, so a page can end between two invocations of the same millisecond.
        if (i % 2 === 0) clock.advance(1);
        created.push(newInvocation({ createdAt: clock.now() }));
      }
      for (const inv of created) await store.invocations.create(inv);
      const all = (await store.invocations.list('bot-a', { limit: 10 })).map((s) => s.id);
      expect(all).toHaveLength(5);
      const pages: string[] = [];
      let after: { createdAt: number; id: string } | undefined;
      for (;;) {
        const page = await store.invocations.list('bot-a', { limit: 2, after });
        if (page.length === 0) break;
        pages.push(...page.map((s) => s.id));
        const last = page[page.length - 1];
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(pages).toEqual(all);
    });

    it('counts a bot\'s invocations in flight, in total and per token', async () => {
      const { store, clock } = subject;
      const t1 = [newInvocation({ createdAt: clock.now(), tokenId: 't1' }), newInvocation({ createdAt: clock.now(), tokenId: 't1' })];
      const t2 = newInvocation({ createdAt: clock.now(), tokenId: 't2' });
      const none = newInvocation({ createdAt: clock.now() });
      const done = newInvocation({ createdAt: clock.now(), tokenId: 't2' });
      const expiring = newInvocation({ createdAt: clock.now(), tokenId: 't1', expireAt: clock.now() + 10 });
      const other = newInvocation({ createdAt: clock.now(), botId: 'bot-b', tokenId: 't1' });
      for (const inv of [...t1, t2, none, done, expiring, other]) await store.invocations.create(inv);
      await store.invocations.claim(t1[0], 'w', 60_000, clock.now());
      await store.invocations.claim(done, 'w', 60_000, clock.now());
      await store.invocations.complete(done, 'w', { status: 'Completed', responseBody: null }, [], clock.now());
      clock.advance(10);
      expect(await store.invocations.countActive('bot-a', clock.now())).toEqual({ total: 4, byToken: { t1: 2, t2: 1 } });
      expect((await store.invocations.get(t1[0]))?.tokenId).toBe('t1');
      await store.invocations.cancel(t2, { code: 'cancelled', title: 'Invocation cancelled', detail: 'x' }, clock.now());
      expect(await store.invocations.countActive('bot-a', clock.now())).toEqual({ total: 3, byToken: { t1: 2 } });
      expect(await store.invocations.countActive('bot-c', clock.now())).toEqual({ total: 0, byToken: {} });
    });

    it('hands out due callbacks in the order they fell due: a retry due earlier before a later first attempt', async () => {
      const { store, clock } = subject;
      const url = 'https://hooks.example.com/gi';
      const early = newInvocation({ createdAt: clock.now(), callbackUrl: url });
      const retried = newInvocation({ createdAt: clock.now() + 1, callbackUrl: url });
      for (const inv of [early, retried]) await store.invocations.create(inv);
      await store.invocations.claim(retried, 'w', 60_000, clock.now());
      await store.invocations.complete(retried, 'w', { status: 'Completed', responseBody: 1 }, [], clock.now());
      expect(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10)).toEqual([{ botId: 'bot-a', id: retried.id }]);
      await store.invocations.recordCallbackAttempt(retried, { at: clock.now(), error: 'The receiver answered 503.', nextAttemptAt: clock.now() + 100 });
      clock.advance(1000);
      // Finishes after the retry fell due: its first attempt is due at its finish.
      await store.invocations.claim(early, 'w', 60_000, clock.now());
      await store.invocations.complete(early, 'w', { status: 'Completed', responseBody: 1 }, [], clock.now());
      clock.advance(1000);
      expect(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 1)).toEqual([{ botId: 'bot-a', id: retried.id }]);
      expect(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 1)).toEqual([{ botId: 'bot-a', id: early.id }]);
    });

    it("hands out due callbacks in turns between bots when asked to share, none of a bot past its share", async () => {
      const { store, clock } = subject;
      const url = 'https://hooks.example.com/gi';
      // Bot A's six fell due first, then B's two, then C's one.
      const finishedWithCallback = async (botId: string) => {
        const inv = newInvocation({ botId, createdAt: clock.now(), callbackUrl: url });
        await store.invocations.create(inv);
        await store.invocations.claim(inv, 'w', 60_000, clock.now());
        await store.invocations.complete(inv, 'w', { status: 'Completed', responseBody: 1 }, [], clock.now());
        clock.advance(1);
        return inv;
      };
      const a = [];
      for (let i = 0; i < 6; i++) a.push(await finishedWithCallback('bot-a'));
      const b = [await finishedWithCallback('bot-b'), await finishedWithCallback('bot-b')];
      const c = await finishedWithCallback('bot-c');
      const ids = (refs: Array<{ id: string }>) => refs.map((ref) => ref.id).sort();
      // Two of a bot at most, and A has one in flight already: one of A's; within the limit of three,
      // every bot's first turn before anyone's second (B's second waits).
      const share = { perBot: 2, inFlight: new Map([['bot-a', 1]]) };
      expect(ids(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 3, share))).toEqual(ids([a[0], b[0], c]));
      // Those are taken for the lease; with A at its share, B's second alone comes.
      expect(ids(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10, { perBot: 2, inFlight: new Map([['bot-a', 2]]) }))).toEqual([b[1].id]);
      // A's earliest first.
      expect(ids(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 2, { perBot: 3, inFlight: new Map() }))).toEqual(ids([a[1], a[2]]));
    });

    it('hands out the callback of a finished invocation once per lease, and records each attempt', async () => {
      const { store, clock } = subject;
      const url = 'https://hooks.example.com/gi';
      const withCallback = newInvocation({ createdAt: clock.now(), callbackUrl: url });
      const cancelled = newInvocation({ createdAt: clock.now(), callbackUrl: url });
      const without = newInvocation({ createdAt: clock.now() });
      for (const inv of [withCallback, cancelled, without]) await store.invocations.create(inv);
      expect((await store.invocations.get(withCallback))?.callback).toEqual({ url, state: 'pending', attempts: 0, nextAttemptAt: null, lastError: null, deliveredAt: null });
      expect((await store.invocations.get(without))?.callback).toBeNull();
      // Not due while the invocation runs.
      await store.invocations.claim(withCallback, 'w', 60_000, clock.now());
      expect(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10)).toEqual([]);
      for (const inv of [withCallback, without]) {
        await store.invocations.claim(inv, 'w', 60_000, clock.now());
        await store.invocations.complete(inv, 'w', { status: 'Completed', responseBody: 1 }, [], clock.now());
      }
      await store.invocations.cancel(cancelled, { code: 'cancelled', title: 'Invocation cancelled', detail: 'x' }, clock.now());
      const due = await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10);
      expect(due.map((r) => r.id).sort()).toEqual([withCallback.id, cancelled.id].sort());
      expect(due).toContainEqual({ botId: 'bot-a', id: withCallback.id });
      // Taken: nobody else gets them until the lease passes.
      expect(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10)).toEqual([]);

      clock.advance(1000);
      await store.invocations.recordCallbackAttempt(withCallback, { at: clock.now(), error: 'The receiver answered 500.', nextAttemptAt: clock.now() + 5000 });
      expect((await store.invocations.get(withCallback))?.callback).toMatchObject({ state: 'pending', attempts: 1, nextAttemptAt: clock.now() + 5000, lastError: 'The receiver answered 500.' });
      clock.advance(4999);
      expect((await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10)).map((r) => r.id)).toEqual([]);
      clock.advance(1);
      expect((await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10)).map((r) => r.id)).toEqual([withCallback.id]);
      await store.invocations.recordCallbackAttempt(withCallback, { at: clock.now(), error: null, nextAttemptAt: null });
      await store.invocations.recordCallbackAttempt(cancelled, { at: clock.now(), error: 'refused', nextAttemptAt: null });
      expect((await store.invocations.get(withCallback))?.callback).toEqual({ url, state: 'delivered', attempts: 2, nextAttemptAt: null, lastError: null, deliveredAt: clock.now() });
      expect((await store.invocations.get(cancelled))?.callback).toMatchObject({ state: 'failed', attempts: 1, nextAttemptAt: null, lastError: 'refused' });
      // Finished deliveries take no more attempts.
      await store.invocations.recordCallbackAttempt(withCallback, { at: clock.now(), error: 'late', nextAttemptAt: clock.now() });
      expect((await store.invocations.get(withCallback))?.callback?.state).toBe('delivered');
      clock.advance(3600_000);
      expect(await store.invocations.takeDueCallbacks(clock.now(), 30_000, 10)).toEqual([]);
    });

    it("reads the timings of a bot's invocations created since a time, newest first", async () => {
      const { store, clock } = subject;
      const old = newInvocation({ createdAt: clock.now() - 1 });
      const first = newInvocation({ createdAt: clock.now(), integrationId: 'x' });
      const second = newInvocation({ createdAt: clock.now() + 1, integrationId: 'y' });
      const other = newInvocation({ createdAt: clock.now(), botId: 'bot-b' });
      for (const inv of [old, first, second, other]) await store.invocations.create(inv);
      clock.advance(10);
      await store.invocations.claim(first, 'w', 1000, clock.now());
      await store.invocations.complete(first, 'w', { status: 'Completed', responseBody: 1 }, [], clock.now() + 25);
      const since = first.createdAt;
      expect(await store.invocations.timings('bot-a', since, 10)).toEqual([
        { integrationId: 'y', status: 'Queued', createdAt: second.createdAt, startedAt: null, finishedAt: null },
        { integrationId: 'x', status: 'Completed', createdAt: first.createdAt, startedAt: clock.now(), finishedAt: clock.now() + 25 },
      ]);
      expect((await store.invocations.timings('bot-a', since, 1)).map((t) => t.integrationId)).toEqual(['y']);
      expect(await store.invocations.timings('bot-c', since, 10)).toEqual([]);
    });

    it('hides expired invocations at once and deletes them', async () => {
      const { store, clock } = subject;
      // Expired by the store's clock, not yet by the real one: MongoDB's TTL monitor (real time) must not delete it first.
      const inv = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 3600_000 });
      await store.invocations.create(inv);
      clock.advance(3600_000);
      expect(await store.invocations.get(inv)).toBeNull();
      expect(await store.invocations.claim(inv, 'w', 1000, clock.now())).toBeNull();
      expect(await store.invocations.list('bot-a', { limit: 10 })).toEqual([]);
      expect(await store.invocations.timings('bot-a', 0, 10)).toEqual([]);
      expect(await store.invocations.deleteExpired(clock.now())).toBe(1);
    });

    it('deletes the lines an expired invocation appended with it', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 1000 });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 500, clock.now());
      await store.invocations.appendLogs(inv, 'w1', { attempt: 1, seq: 0, lines: [{ at: clock.now(), level: 'info', message: 'old' }] });
      clock.advance(1000);
      expect(await store.invocations.deleteExpired(clock.now())).toBe(1);
      // Nothing of it is left to show up under a new invocation with its id.
      const again = { ...inv, createdAt: clock.now(), expireAt: clock.now() + 1000 };
      await store.invocations.create(again);
      await store.invocations.claim(again, 'w1', 500, clock.now());
      expect((await store.invocations.get(again))?.logs).toEqual([]);
    });

    it('never deletes an expired invocation whose run holds its lease: the run goes on and records its outcome', async () => {
      const { store, clock } = subject;
      // Expiring by the store's clock only (see above).
      const expiring = (overrides: Partial<NewInvocation> = {}) => newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 3600_000, ...overrides });
      const [running, lapsed, queued, finished] = [expiring(), expiring(), expiring(), expiring()];
      for (const inv of [running, lapsed, queued, finished]) await store.invocations.create(inv);
      await store.invocations.claim(running, 'w1', 2 * 3600_000, clock.now());
      await store.invocations.claim(lapsed, 'w2', 1000, clock.now());
      await store.invocations.claim(finished, 'w3', 60_000, clock.now());
      await store.invocations.complete(finished, 'w3', { status: 'Completed', responseBody: 1 }, [], clock.now());
      clock.advance(3600_000);
      // The queued, the finished and the one whose executor is gone (its lease lapsed) go.
      expect(await store.invocations.deleteExpired(clock.now())).toBe(3);
      expect(await store.invocations.renewLease(running, 'w1', 60_000, clock.now())).toBe(true);
      expect(await store.invocations.complete(running, 'w1', { status: 'Completed', responseBody: 2 }, [], clock.now())).toEqual({ watched: false });
      expect(await store.invocations.complete(lapsed, 'w2', { status: 'Completed', responseBody: 3 }, [], clock.now())).toBeNull();
      expect(await store.invocations.deleteExpired(clock.now())).toBe(1);
    });

    it('keeps the largest invocation a call and its run may make: a 4 MiB request, a 10 MiB ResponseBody, 1 MiB of log in 10,000 lines', async () => {
      const { store, clock } = subject;
      // The body as sent counts against the request's 4 MiB too: this one has none (a file transfer's).
      const inv = newInvocation({ createdAt: clock.now(), rawBody: null });
      const entityJson = (body: string) => JSON.stringify({ ...JSON.parse(inv.entityJson), RequestBody: body });
      const body = 'x'.repeat(MAX_STORED_ENTITY_BYTES - Buffer.byteLength(entityJson('')));
      expect(Buffer.byteLength(entityJson(body))).toBe(MAX_STORED_ENTITY_BYTES);
      await store.invocations.create({ ...inv, entityJson: entityJson(body) });
      await store.invocations.claim(inv, 'w1', 60_000, clock.now());
      const responseBody = 'y'.repeat(10 * 1024 * 1024 - 2);
      const logs: LogLine[] = Array.from({ length: 10_000 }, (_, i) => ({ at: clock.now(), level: 'info', message: 'z'.repeat(i === 0 ? 1024 * 1024 - 9_999 * 104 : 104) }));
      expect(await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody }, logs, clock.now())).toEqual({ watched: false });
      const done = await store.invocations.get(inv);
      expect(done?.entity.RequestBody).toBe(body);
      expect(done?.outcome).toEqual({ status: 'Completed', responseBody });
      expect(done?.logs).toHaveLength(10_000);
    });

    it('counts the body as sent against the size of the request', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      const half = Math.ceil(MAX_STORED_ENTITY_BYTES / 2);
      const entityJson = JSON.stringify({ ...JSON.parse(inv.entityJson), RequestBody: 'x'.repeat(half) });
      await expect(store.invocations.create({ ...inv, entityJson, rawBody: 'x'.repeat(half) })).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store.invocations.get(inv)).toBeNull();
    });

    it('refuses a request over the size an invocation keeps (payload too large), storing nothing, with or without a key', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      const entityJson = JSON.stringify({ ...JSON.parse(inv.entityJson), RequestBody: 'x'.repeat(MAX_STORED_ENTITY_BYTES) });
      const refusal = await store.invocations.create({ ...inv, entityJson }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(GiError);
      expect(refusal).toMatchObject({ code: 'payload_too_large', detail: expect.stringContaining(`at most ${MAX_STORED_ENTITY_BYTES}`) });
      const record = { botId: 'bot-a', key: 'big', fingerprint: 'f', invocationId: inv.id, createdAt: inv.createdAt, expireAt: inv.createdAt + 60_000 };
      await expect(store.invocations.createWithKey({ ...inv, entityJson }, record)).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store.invocations.get(inv)).toBeNull();
      // The key was not taken either.
      expect(await store.invocations.createWithKey(inv, record)).toBeNull();
    });

    it('refuses a result that with its logs is over the size an invocation keeps, writing nothing', async () => {
      const { store, clock } = subject;
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      await store.invocations.claim(inv, 'w1', 60_000, clock.now());
      const responseBody = 'y'.repeat(MAX_RECORDED_RESULT_BYTES - 1024 * 1024);
      const logs: LogLine[] = Array.from({ length: 8 }, () => ({ at: clock.now(), level: 'info', message: 'z'.repeat(128 * 1024) }));
      await expect(store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody }, logs, clock.now())).rejects.toBeInstanceOf(UnrecordableOutcome);
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Running', outcome: null, logs: [] });
      expect(await store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody }, logs.slice(1), clock.now())).toEqual({ watched: false });
    });
  });

  describe('recent run times', () => {
    it('gives the durations of an integration\'s latest finished runs of one bot, newest first', async () => {
      const { store, clock } = subject;
      const run = async (overrides: Partial<NewInvocation>, ms: number, outcome: 'Completed' | 'Failed' = 'Completed') => {
        const inv = newInvocation({ createdAt: clock.now(), ...overrides });
        await store.invocations.create(inv);
        await store.invocations.claim(inv, 'w1', 60_000, clock.now());
        clock.advance(ms);
        const done = outcome === 'Completed' ? { status: 'Completed' as const, responseBody: 1 } : { status: 'Failed' as const, error: { code: 'timeout' as const, title: 't', detail: 'd' } };
        await store.invocations.complete(inv, 'w1', done, [], clock.now());
        clock.advance(10);
      };
      await run({}, 1000);
      await run({}, 3000, 'Failed');
      await run({ integrationId: 'other' }, 7000);
      await run({ botId: 'bot-b' }, 9000);
      await run({}, 2000);
      const running = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(running);
      await store.invocations.claim(running, 'w1', 60_000, clock.now());
      expect(await store.invocations.recentDurations('bot-a', 'ack', 10)).toEqual([2000, 3000, 1000]);
      expect(await store.invocations.recentDurations('bot-a', 'ack', 2)).toEqual([2000, 3000]);
      expect(await store.invocations.recentDurations('bot-a', 'none', 10)).toEqual([]);
    });
  });
}
