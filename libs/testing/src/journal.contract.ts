import fc from 'fast-check';
import { DEFAULT_JOURNAL_LIMITS, JournalLimitExceeded } from '@gi/domain';
import type { InvocationRef, JournalLimits, NewInvocation, StepRecord, Suspension, WaitRecord } from '@gi/domain';
import { newInvocation } from './fixtures';
import type { StoreUnderTest } from './store-under-test';

const HOUR = 3600_000;
const limits = DEFAULT_JOURNAL_LIMITS;
const cancelled = { code: 'cancelled' as const, title: 'Invocation cancelled', detail: 'by the test' };

const done = (name: string, occurrence: number, result: unknown, at: number, attempts = 1): StepRecord => ({
  name,
  occurrence,
  attempts,
  startedAt: at,
  status: 'done',
  resultJson: JSON.stringify(result),
  finishedAt: at,
});
const failed = (name: string, occurrence: number, message: string, at: number, attempts = 1): StepRecord => ({
  name,
  occurrence,
  attempts,
  startedAt: at,
  status: 'failed',
  error: { name: 'Error', message },
  finishedAt: at,
});
const retrying = (name: string, occurrence: number, message: string, at: number, attempts: number, until: number): StepRecord => ({
  name,
  occurrence,
  attempts,
  startedAt: at,
  status: 'retrying',
  error: { name: 'Error', message },
  until,
});
const sleep = (name: string, occurrence: number, at: number, until: number): WaitRecord => ({ kind: 'sleep', name, occurrence, startedAt: at, until });
const eventWait = (name: string, occurrence: number, at: number, until: number): WaitRecord => ({ kind: 'event', name, occurrence, startedAt: at, until });
const withLimits = (overrides: Partial<JournalLimits>): JournalLimits => ({ ...limits, ...overrides });

/**
 * The journal of durable runs (JournalStore) and the suspension and wake-up of their invocations
 * (InvocationStore.suspend, wakeDue, countWaiting), as every Store adapter must show them. Part of the
 * store contract (store.contract.ts). Expiry times stay hours ahead of the real time: MongoDB's TTL
 * monitor deletes by its own clock.
 */
export function describeJournalContract(subject: () => StoreUnderTest): void {
  describe('journal of durable runs', () => {
    /** A new invocation claimed by `owner`: its run's lease is attempt 1. */
    async function running(overrides: Partial<NewInvocation> = {}, owner = 'w1') {
      const { store, clock } = subject();
      const inv = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + HOUR, ...overrides });
      await store.invocations.create(inv);
      const claimed = await store.invocations.claim(inv, owner, 60_000, clock.now());
      expect(claimed).not.toBeNull();
      return { inv, ref: { botId: inv.botId, id: inv.id } as InvocationRef, lease: { owner, attempt: claimed?.attempt ?? 0 } };
    }

    /** A run suspended in a sleep of `ms`. */
    async function waiting(ms = 60_000, overrides: Partial<NewInvocation> = {}) {
      const { store, clock } = subject();
      const run = await running(overrides);
      const suspension: Suspension = { reason: { kind: 'sleep', name: 'nap', until: clock.now() + ms }, activeMs: 10, keepUntil: clock.now() + 10 * HOUR };
      await store.journal.beginWait(run.ref, run.lease, sleep('nap', 1, clock.now(), clock.now() + ms), limits);
      expect(await store.invocations.suspend(run.ref, run.lease, suspension, clock.now())).toBe('waiting');
      return { ...run, suspension };
    }

    it('records steps under the lease and reads them in the order first written, each name counting its occurrences', async () => {
      const { store, clock } = subject();
      const { inv, ref, lease } = await running();
      expect(await store.journal.read(ref)).toEqual([]);
      const t = clock.now();
      const first = await store.journal.record(ref, lease, done('send', 1, { to: 'a' }, t), limits);
      expect(first).toEqual({ name: 'send', occurrence: 1, kind: 'step', status: 'done', resultJson: '{"to":"a"}', error: null, attempts: 1, startedAt: t, finishedAt: t, until: null });
      await store.journal.record(ref, lease, retrying('fetch', 1, 'HTTP 503', t + 1, 1, t + 500), limits);
      await store.journal.record(ref, lease, done('send', 2, { to: 'b' }, t + 2), limits);
      // The retried step ends in its place, keeping when its first attempt started.
      const ended = await store.journal.record(ref, lease, done('fetch', 1, [1, 2], t + 600, 2), limits);
      expect(ended).toMatchObject({ status: 'done', attempts: 2, startedAt: t + 1, finishedAt: t + 600, error: null, until: null, resultJson: '[1,2]' });
      await store.journal.record(ref, lease, failed('charge', 1, 'card declined', t + 700, 3), limits);
      const journal = await store.journal.read(ref);
      expect(journal.map((e) => [e.name, e.occurrence, e.status])).toEqual([
        ['send', 1, 'done'],
        ['fetch', 1, 'done'],
        ['send', 2, 'done'],
        ['charge', 1, 'failed'],
      ]);
      expect(journal[0]).toEqual(first);
      expect(journal[1]).toEqual(ended);
      expect(journal[3]).toMatchObject({ error: { name: 'Error', message: 'card declined' }, resultJson: null, attempts: 3, finishedAt: t + 700 });
      expect(await store.invocations.get(ref)).toMatchObject({ steps: 4, progressAttempt: 1, waiting: null, activeMs: 0 });
      expect(await store.invocations.getState(ref)).toMatchObject({ steps: 4, waiting: null });
      // Another bot's reference reads nothing; an unknown invocation has no journal.
      expect(await store.journal.read({ botId: 'bot-b', id: inv.id })).toEqual([]);
      expect(await store.journal.read({ botId: 'bot-a', id: 'nope' })).toEqual([]);
    });

    it('records a step that returned nothing with a null result, and reads it back as such (not JSON null)', async () => {
      const { store, clock } = subject();
      const { ref, lease } = await running();
      const t = clock.now();
      const nothing = { name: 'notify', occurrence: 1, attempts: 1, startedAt: t, status: 'done' as const, resultJson: null, finishedAt: t };
      expect(await store.journal.record(ref, lease, nothing, limits)).toMatchObject({ status: 'done', resultJson: null });
      expect(await store.journal.record(ref, lease, { ...nothing, occurrence: 2, resultJson: 'null' }, limits)).toMatchObject({ status: 'done', resultJson: 'null' });
      expect((await store.journal.read(ref)).map((e) => e.resultJson)).toEqual([null, 'null']);
      expect((await store.journal.list(ref, { limit: 10 })).map((e) => e.resultBytes)).toEqual([4, 0]);
    });

    it('has a plain invocation make no progress and count no step', async () => {
      const { store } = subject();
      const { ref } = await running();
      expect(await store.invocations.get(ref)).toMatchObject({ steps: 0, progressAttempt: 0, activeMs: 0, waiting: null });
    });

    it('writes nothing without the lease: another owner, another attempt, a cancelled run, a run claimed again', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running({}, 'w1');
      await store.journal.beginWait(ref, lease, eventWait('reply', 1, t, t + HOUR / 2), limits);
      const writes = (asked: { owner: string; attempt: number }) =>
        Promise.all([
          store.journal.record(ref, asked, done('step', 1, 1, t), limits),
          store.journal.beginWait(ref, asked, sleep('nap', 1, t, t + 1000), limits),
          store.journal.timeOut(ref, asked, { name: 'reply', occurrence: 1 }, t + HOUR),
          store.invocations.suspend(ref, asked, { reason: { kind: 'sleep', name: 'nap', until: t + 1000 }, activeMs: 1, keepUntil: t + 2 * HOUR }, t),
        ]);
      expect(await writes({ owner: 'w2', attempt: 1 })).toEqual([null, null, null, null]);
      expect(await writes({ owner: 'w1', attempt: 2 })).toEqual([null, null, null, null]);
      expect(await store.journal.record(ref, lease, done('step', 1, 1, t), limits)).toMatchObject({ name: 'step' });
      // Another claim after the lease lapsed: the first attempt writes nothing more, the second does.
      clock.advance(60_001);
      const again = await store.invocations.claim(ref, 'w1', 60_000, clock.now());
      expect(again?.attempt).toBe(2);
      expect(again?.steps).toBe(2);
      expect(await store.journal.record(ref, lease, done('late', 1, 1, t), limits)).toBeNull();
      expect(await store.journal.record(ref, { owner: 'w1', attempt: 2 }, done('next', 1, 1, t), limits)).toMatchObject({ name: 'next' });
      await store.invocations.cancel(ref, cancelled, clock.now());
      expect(await writes({ owner: 'w1', attempt: 2 })).toEqual([null, null, null, null]);
      expect((await store.journal.read(ref)).map((e) => e.name)).toEqual(['reply', 'step', 'next']);
      expect(await store.invocations.get(ref)).toMatchObject({ status: 'Cancelled', steps: 3 });
    });

    it('never changes an entry that ended: a second record returns the stored one', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running();
      const first = await store.journal.record(ref, lease, done('send', 1, 'first', t), limits);
      const refusedFail = await store.journal.record(ref, lease, failed('send', 1, 'slower attempt', t + 5, 2), limits);
      const refusedDone = await store.journal.record(ref, lease, done('send', 1, 'second', t + 5, 2), limits);
      const refusedRetry = await store.journal.record(ref, lease, retrying('send', 1, 'x', t + 5, 2, t + 10), limits);
      expect([refusedFail, refusedDone, refusedRetry]).toEqual([first, first, first]);
      const gaveUp = await store.journal.record(ref, lease, failed('charge', 1, 'declined', t), limits);
      expect(await store.journal.record(ref, lease, done('charge', 1, 'late success', t + 5, 2), limits)).toEqual(gaveUp);
      // Nor is a wait overwritten by a step of its name (the run finds the mismatch).
      const wait = await store.journal.beginWait(ref, lease, sleep('pause', 1, t, t + 1000), limits);
      expect(await store.journal.record(ref, lease, done('pause', 1, 'a step', t), limits)).toEqual(wait);
      expect(await store.journal.read(ref)).toEqual([first, gaveUp, wait]);
      expect((await store.invocations.get(ref))?.steps).toBe(3);
    });

    it('lists the latest entries newest first with their result size and no result, page by page', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { inv, ref, lease } = await running();
      for (let i = 1; i <= 5; i++) await store.journal.record(ref, lease, done('item', i, 'é'.repeat(i), t + i), limits);
      const page1 = await store.journal.list(ref, { limit: 2 });
      expect(page1).toEqual([
        { name: 'item', occurrence: 5, kind: 'step', status: 'done', resultBytes: 12, error: null, attempts: 1, startedAt: t + 5, finishedAt: t + 5, until: null },
        expect.objectContaining({ occurrence: 4, resultBytes: 10 }),
      ]);
      expect(page1[0]).not.toHaveProperty('resultJson');
      const pages = [page1];
      // At most as many pages as entries: a listing that never moves on fails rather than loops.
      for (let before = page1.at(-1); before && pages.length <= 5; before = pages.at(-1)?.at(-1)) pages.push(await store.journal.list(ref, { limit: 2, before }));
      expect(pages.map((page) => page.map((s) => s.occurrence))).toEqual([[5, 4], [3, 2], [1], []]);
      expect(await store.journal.list({ botId: 'bot-b', id: inv.id }, { limit: 10 })).toEqual([]);
    });

    it('refuses a write past a limit with JournalLimitExceeded, naming the setting, and writes nothing', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running();
      const refusal = (write: Promise<unknown>) => write.then(() => 'written', (error: unknown) => error);
      const big = await refusal(store.journal.record(ref, lease, done('big', 1, 'x'.repeat(100), t), withLimits({ maxResultBytes: 64 })));
      expect(big).toBeInstanceOf(JournalLimitExceeded);
      expect(big).toMatchObject({ message: expect.stringContaining('STEP_RESULT_MAX_SIZE') });
      await store.journal.record(ref, lease, done('a', 1, 'x'.repeat(40), t), limits);
      await store.journal.record(ref, lease, retrying('b', 1, 'y'.repeat(40), t, 1, t + 100), limits);
      const steps = await refusal(store.journal.record(ref, lease, done('c', 1, 1, t), withLimits({ maxSteps: 2 })));
      expect(steps).toMatchObject({ name: 'JournalLimitExceeded', message: expect.stringContaining('JOURNAL_MAX_STEPS') });
      expect(await refusal(store.journal.beginWait(ref, lease, sleep('nap', 1, t, t + 100), withLimits({ maxSteps: 2 })))).toBeInstanceOf(JournalLimitExceeded);
      // An entry it holds may still end at the most steps.
      expect(await store.journal.record(ref, lease, done('b', 1, 'z', t + 100, 2), withLimits({ maxSteps: 2 }))).toMatchObject({ status: 'done' });
      const bytes = await refusal(store.journal.record(ref, lease, done('c', 1, 'x'.repeat(40), t), withLimits({ maxJournalBytes: 80 })));
      expect(bytes).toMatchObject({ name: 'JournalLimitExceeded', message: expect.stringContaining('JOURNAL_MAX_SIZE') });
      expect(await refusal(store.journal.sendEvent(ref, { name: 'e', payloadJson: '"x"', at: t }, withLimits({ maxResultBytes: 2 })))).toBeInstanceOf(JournalLimitExceeded);
      expect(await refusal(store.journal.sendEvent(ref, { name: 'e', payloadJson: '"x"', at: t }, withLimits({ maxJournalBytes: 47 })))).toBeInstanceOf(JournalLimitExceeded);
      expect(await store.journal.sendEvent(ref, { name: 'e', payloadJson: '1', at: t }, withLimits({ maxKeptEvents: 1 }))).toEqual({ delivered: 'kept' });
      const kept = await refusal(store.journal.sendEvent(ref, { name: 'e', payloadJson: '2', at: t }, withLimits({ maxKeptEvents: 1 })));
      expect(kept).toMatchObject({ name: 'JournalLimitExceeded', message: expect.stringContaining('JOURNAL_MAX_KEPT_EVENTS') });
      // Nothing of the refused writes: the kept event is the first one, the journal as it was.
      expect((await store.journal.read(ref)).map((e) => [e.name, e.status, e.resultJson])).toEqual([
        ['a', 'done', JSON.stringify('x'.repeat(40))],
        ['b', 'done', '"z"'],
      ]);
      expect((await store.invocations.get(ref))?.steps).toBe(2);
      expect(await store.journal.beginWait(ref, lease, eventWait('e', 1, t, t + 1000), limits)).toMatchObject({ status: 'done', resultJson: '1' });
    });

    it('begins sleeps and event waits; an event wait takes the oldest kept event of its name; a wait begun again is returned as it is', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running();
      const nap = await store.journal.beginWait(ref, lease, sleep('nap', 1, t, t + 5000), limits);
      expect(nap).toEqual({ name: 'nap', occurrence: 1, kind: 'sleep', status: 'waiting', resultJson: null, error: null, attempts: 0, startedAt: t, finishedAt: null, until: t + 5000 });
      expect(await store.journal.beginWait(ref, lease, sleep('nap', 1, t + 9, t + 9999), limits)).toEqual(nap);
      for (const payload of ['first', 'other', 'second']) {
        const name = payload === 'other' ? 'other' : 'approval';
        expect(await store.journal.sendEvent(ref, { name, payloadJson: JSON.stringify(payload), at: t + 1 }, limits)).toEqual({ delivered: 'kept' });
      }
      const taken = await store.journal.beginWait(ref, lease, eventWait('approval', 1, t + 2, t + HOUR), limits);
      expect(taken).toEqual({ name: 'approval', occurrence: 1, kind: 'event', status: 'done', resultJson: '"first"', error: null, attempts: 0, startedAt: t + 2, finishedAt: t + 2, until: null });
      expect(await store.journal.beginWait(ref, lease, eventWait('approval', 2, t + 3, t + HOUR), limits)).toMatchObject({ status: 'done', resultJson: '"second"' });
      const open = await store.journal.beginWait(ref, lease, eventWait('approval', 3, t + 4, t + HOUR), limits);
      expect(open).toMatchObject({ kind: 'event', status: 'waiting', resultJson: null, until: t + HOUR, finishedAt: null });
      expect(await store.journal.beginWait(ref, lease, eventWait('approval', 1, t + 5, t + HOUR), limits)).toEqual(taken);
      expect((await store.journal.read(ref)).map((e) => `${e.name}#${e.occurrence}`)).toEqual(['nap#1', 'approval#1', 'approval#2', 'approval#3']);
      expect(await store.journal.beginWait(ref, lease, eventWait('other', 1, t + 6, t + HOUR), limits)).toMatchObject({ status: 'done', resultJson: '"other"' });
      expect(await store.invocations.get(ref)).toMatchObject({ steps: 5, progressAttempt: 1 });
    });

    it('times an event wait out once its timeout passed, unless an event completed it: of the two racing exactly one wins, and a done stays done', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running();
      const wait = (occurrence: number) => ({ name: 'reply', occurrence });
      await store.journal.beginWait(ref, lease, eventWait('reply', 1, t, t + 1000), limits);
      // Not yet timed out: left waiting.
      expect(await store.journal.timeOut(ref, lease, wait(1), t + 999)).toMatchObject({ status: 'waiting', until: t + 1000 });
      expect(await store.journal.timeOut(ref, lease, wait(1), t + 1000)).toMatchObject({ status: 'done', resultJson: 'null', finishedAt: t + 1000, until: null });
      // An event after the timeout is kept, not taken by the wait that timed out.
      expect(await store.journal.sendEvent(ref, { name: 'reply', payloadJson: '"late"', at: t + 1001 }, limits)).toEqual({ delivered: 'kept' });
      expect((await store.journal.read(ref))[0]).toMatchObject({ status: 'done', resultJson: 'null' });
      expect(await store.journal.beginWait(ref, lease, eventWait('reply', 2, t + 1002, t + 5000), limits)).toMatchObject({ status: 'done', resultJson: '"late"' });
      // An event at a wait's timeout is kept too, even before the run timed the wait out.
      await store.journal.beginWait(ref, lease, eventWait('slow', 1, t, t + 500), limits);
      expect(await store.journal.sendEvent(ref, { name: 'slow', payloadJson: '"too late"', at: t + 500 }, limits)).toEqual({ delivered: 'kept' });
      expect(await store.journal.timeOut(ref, lease, { name: 'slow', occurrence: 1 }, t + 500)).toMatchObject({ status: 'done', resultJson: 'null' });
      for (let occurrence = 3; occurrence < 13; occurrence++) {
        await store.journal.beginWait(ref, lease, eventWait('reply', occurrence, t, t + 2000), limits);
        const [timedOut, sent] = await Promise.all([
          store.journal.timeOut(ref, lease, wait(occurrence), t + 2000),
          store.journal.sendEvent(ref, { name: 'reply', payloadJson: `{"n":${occurrence}}`, at: t + 1999 }, limits),
        ]);
        const stored = (await store.journal.read(ref)).find((e) => e.name === 'reply' && e.occurrence === occurrence);
        expect(timedOut).toEqual(stored);
        if (sent?.delivered === 'taken') expect(stored).toMatchObject({ status: 'done', resultJson: `{"n":${occurrence}}`, finishedAt: t + 1999 });
        else {
          expect(sent).toEqual({ delivered: 'kept' });
          expect(stored).toMatchObject({ status: 'done', resultJson: 'null' });
          // The kept event goes to the next wait of its name: taken now, so each round starts with none kept.
          expect(await store.journal.beginWait(ref, lease, eventWait('reply', 100 + occurrence, t, t + 2000), limits)).toMatchObject({ status: 'done' });
        }
        expect(await store.journal.timeOut(ref, lease, wait(occurrence), t + 3000)).toEqual(stored);
      }
    });

    it('resumes a Waiting invocation with an event: Queued with its pool, its wait done', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running({ pool: 'bulk' });
      await store.journal.beginWait(ref, lease, eventWait('approval', 1, t, t + HOUR), limits);
      const reason = { kind: 'event' as const, name: 'approval', until: t + HOUR };
      expect(await store.invocations.suspend(ref, lease, { reason, activeMs: 5, keepUntil: t + 10 * HOUR }, t)).toBe('waiting');
      expect(await store.invocations.getState(ref)).toMatchObject({ status: 'Waiting', waiting: reason, steps: 1 });
      clock.advance(1000);
      // Another approval name waits for its own wait: kept.
      expect(await store.journal.sendEvent(ref, { name: 'other', payloadJson: '1', at: clock.now() }, limits)).toEqual({ delivered: 'kept' });
      expect(await store.journal.sendEvent(ref, { name: 'approval', payloadJson: '{"ok":true}', at: clock.now() }, limits)).toEqual({ delivered: 'resumed', pool: 'bulk' });
      expect(await store.invocations.get(ref)).toMatchObject({ status: 'Queued', waiting: null, leaseOwner: null });
      expect((await store.journal.read(ref))[0]).toMatchObject({ status: 'done', resultJson: '{"ok":true}', finishedAt: clock.now() });
      // Published by the sender at once: the sweep leaves it alone; a second event finds no wait.
      expect(await store.invocations.takeUnpublished(clock.now(), clock.now(), 10)).toEqual([]);
      expect(await store.journal.sendEvent(ref, { name: 'approval', payloadJson: '2', at: clock.now() }, limits)).toEqual({ delivered: 'kept' });
      expect((await store.invocations.claim(ref, 'w2', 60_000, clock.now()))?.attempt).toBe(2);
    });

    it('answers an event for a Running invocation with a wait taken, one without a wait kept, and none for a finished, unknown, expired or other bot\'s invocation', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { inv, ref, lease } = await running();
      const event = (name: string, at = t) => ({ name, payloadJson: '"p"', at });
      await store.journal.beginWait(ref, lease, eventWait('approval', 1, t, t + HOUR), limits);
      expect(await store.journal.sendEvent(ref, event('approval'), limits)).toEqual({ delivered: 'taken' });
      expect((await store.invocations.get(ref))?.status).toBe('Running');
      expect(await store.journal.sendEvent(ref, event('approval'), limits)).toEqual({ delivered: 'kept' });
      const queued = newInvocation({ createdAt: t, expireAt: t + HOUR });
      await store.invocations.create(queued);
      expect(await store.journal.sendEvent(queued, event('approval'), limits)).toEqual({ delivered: 'kept' });
      expect(await store.journal.sendEvent({ botId: 'bot-b', id: inv.id }, event('approval'), limits)).toBeNull();
      expect(await store.journal.sendEvent({ botId: 'bot-a', id: 'nope' }, event('approval'), limits)).toBeNull();
      expect(await store.journal.sendEvent(queued, event('approval', t + HOUR), limits)).toBeNull();
      await store.invocations.complete(ref, 'w1', { status: 'Completed', responseBody: 1 }, [], t);
      expect(await store.journal.sendEvent(ref, event('approval'), limits)).toBeNull();
    });

    it('suspends only for the lease owner at its attempt: Waiting with its reason, lease released, run time added, progress marked, kept until keepUntil', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { inv, ref, lease } = await running({ tokenId: 't1' });
      await store.journal.record(ref, lease, done('first', 1, 1, t), limits);
      const reason = { kind: 'sleep' as const, name: 'nap', until: t + 60_000 };
      const suspension = { reason, activeMs: 1500, keepUntil: t + 10 * HOUR };
      expect(await store.invocations.suspend(ref, { owner: 'w2', attempt: 1 }, suspension, t)).toBeNull();
      expect(await store.invocations.suspend(ref, { owner: 'w1', attempt: 2 }, suspension, t)).toBeNull();
      expect(await store.invocations.suspend(ref, lease, suspension, t)).toBe('waiting');
      expect(await store.invocations.suspend(ref, lease, suspension, t)).toBeNull();
      const suspended = await store.invocations.get(ref);
      expect(suspended).toMatchObject({ status: 'Waiting', waiting: reason, leaseOwner: null, leaseUntil: null, activeMs: 1500, progressAttempt: 1, steps: 1, expireAt: t + 10 * HOUR, outcome: null, finishedAt: null });
      expect(await store.invocations.watch(ref)).toMatchObject({ status: 'Waiting', waiting: reason, steps: 1 });
      // Holds no executor: nobody claims it, it is not in flight, the sweeps leave it, it lists as Waiting.
      expect(await store.invocations.claim(ref, 'w3', 60_000, t + 1)).toBeNull();
      expect(await store.invocations.renewLease(ref, 'w1', 60_000, t)).toBe(false);
      expect(await store.invocations.complete(ref, 'w1', { status: 'Completed', responseBody: 1 }, [], t)).toBeNull();
      expect(await store.invocations.countActive('bot-a', t)).toEqual({ total: 0, byToken: {} });
      expect(await store.invocations.requeueExpiredLeases(t + 2 * HOUR)).toEqual([]);
      expect(await store.invocations.takeUnpublished(t + 2 * HOUR, t, 10)).toEqual([]);
      expect((await store.invocations.list('bot-a', { status: 'Waiting', limit: 10 })).map((s) => s.id)).toEqual([inv.id]);
      expect(await store.invocations.list('bot-a', { status: 'Running', limit: 10 })).toEqual([]);
      expect(await store.invocations.countWaiting(t)).toBe(1);
      // Woken and run again: its active time adds up over its suspensions, its TTL as created kept once.
      clock.advance(60_000);
      expect(await store.invocations.wakeDue(clock.now(), 10)).toEqual([{ botId: 'bot-a', id: inv.id, pool: 'default' }]);
      const again = await store.invocations.claim(ref, 'w1', 60_000, clock.now());
      expect(again).toMatchObject({ attempt: 2, steps: 1, activeMs: 1500, progressAttempt: 1, waiting: null });
      const later = { reason: { ...reason, until: clock.now() + 60_000 }, activeMs: 500, keepUntil: t + 10 * HOUR };
      expect(await store.invocations.suspend(ref, { owner: 'w1', attempt: 2 }, later, clock.now())).toBe('waiting');
      expect(await store.invocations.get(ref)).toMatchObject({ activeMs: 2000, progressAttempt: 2, expireAt: t + 10 * HOUR });
    });

    it('requeues an event wait that an event completed while its run was suspending', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running({ pool: 'bulk' });
      await store.journal.beginWait(ref, lease, eventWait('approval', 1, t, t + HOUR), limits);
      expect(await store.journal.sendEvent(ref, { name: 'approval', payloadJson: '"yes"', at: t + 1 }, limits)).toEqual({ delivered: 'taken' });
      const suspension = { reason: { kind: 'event' as const, name: 'approval', until: t + HOUR }, activeMs: 7, keepUntil: t + 10 * HOUR };
      expect(await store.invocations.suspend(ref, lease, suspension, t + 2)).toBe('requeued');
      expect(await store.invocations.get(ref)).toMatchObject({ status: 'Queued', waiting: null, leaseOwner: null, activeMs: 7, progressAttempt: 1, expireAt: t + 10 * HOUR });
      // To be published by the suspending executor at once: not stale for the sweep.
      expect(await store.invocations.takeUnpublished(t + 2, t + 2, 10)).toEqual([]);
      expect(await store.invocations.countWaiting(t + 2)).toBe(0);
      expect((await store.invocations.claim(ref, 'w2', 60_000, t + 3))?.attempt).toBe(2);
    });

    it('loses no wake-up when a suspension and an event race: the invocation ends up Queued, its wait done', async () => {
      const { store, clock } = subject();
      for (let round = 0; round < 12; round++) {
        const t = clock.now();
        const { ref, lease } = await running();
        await store.journal.beginWait(ref, lease, eventWait('approval', 1, t, t + HOUR), limits);
        const suspension = { reason: { kind: 'event' as const, name: 'approval', until: t + HOUR }, activeMs: 1, keepUntil: t + 10 * HOUR };
        const suspend = () => store.invocations.suspend(ref, lease, suspension, t);
        const send = () => store.journal.sendEvent(ref, { name: 'approval', payloadJson: String(round), at: t }, limits);
        let suspended: Awaited<ReturnType<typeof suspend>>;
        let sent: Awaited<ReturnType<typeof send>>;
        if (round % 2 === 0) [suspended, sent] = await Promise.all([suspend(), send()]);
        else [sent, suspended] = await Promise.all([send(), suspend()]);
        expect(['waiting', 'requeued']).toContain(suspended);
        expect(sent).toEqual(suspended === 'requeued' ? { delivered: 'taken' } : { delivered: 'resumed', pool: 'default' });
        expect(await store.invocations.get(ref)).toMatchObject({ status: 'Queued', waiting: null });
        expect(await store.journal.read(ref)).toEqual([expect.objectContaining({ status: 'done', resultJson: String(round) })]);
      }
    });

    it('wakes due invocations oldest wake time first, at most the limit, each once however many sweepers ask', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const soon = await waiting(3000, { pool: 'a' });
      const sooner = await waiting(1000, { pool: 'b' });
      const middle = await waiting(2000, { pool: 'c' });
      const late = await waiting(HOUR);
      expect(await store.invocations.wakeDue(t + 999, 10)).toEqual([]);
      clock.advance(5000);
      expect(await store.invocations.countWaiting(clock.now())).toBe(4);
      expect(await store.invocations.wakeDue(clock.now(), 2)).toEqual([
        { botId: 'bot-a', id: sooner.inv.id, pool: 'b' },
        { botId: 'bot-a', id: middle.inv.id, pool: 'c' },
      ]);
      const swept = await Promise.all([store.invocations.wakeDue(clock.now(), 10), store.invocations.wakeDue(clock.now(), 10)]);
      expect(swept.flat()).toEqual([{ botId: 'bot-a', id: soon.inv.id, pool: 'a' }]);
      for (const run of [soon, sooner, middle]) expect(await store.invocations.get(run.ref)).toMatchObject({ status: 'Queued', waiting: null });
      expect((await store.invocations.get(late.ref))?.status).toBe('Waiting');
      // Woken ones are published by the sweeper that woke them, not again by the republish sweep.
      expect(await store.invocations.takeUnpublished(clock.now(), clock.now(), 10)).toEqual([]);
      expect(await store.invocations.countWaiting(clock.now())).toBe(1);
      expect(await store.invocations.countActive('bot-a', clock.now())).toMatchObject({ total: 3 });
    });

    it('cancels, gives up on and quarantines a Waiting invocation, once', async () => {
      const { store, clock } = subject();
      const error = { code: 'connector_failed' as const, title: 'Gave up', detail: 'x' };
      const [a, b, c] = [await waiting(), await waiting(), await waiting()];
      clock.advance(10);
      expect(await store.invocations.cancel(a.ref, cancelled, clock.now())).toBe(true);
      expect(await store.invocations.cancel(a.ref, cancelled, clock.now())).toBe(false);
      expect(await store.invocations.giveUp(b.ref, error, clock.now())).toBe(true);
      expect(await store.invocations.quarantine(c.ref, error, clock.now())).toBe(true);
      expect(await store.invocations.get(a.ref)).toMatchObject({ status: 'Cancelled', waiting: null, outcome: { status: 'Cancelled', error: cancelled }, finishedAt: clock.now() });
      expect(await store.invocations.get(b.ref)).toMatchObject({ status: 'Failed', waiting: null });
      expect(await store.invocations.get(c.ref)).toMatchObject({ status: 'Failed', waiting: null });
      expect(await store.invocations.countWaiting(clock.now())).toBe(0);
      clock.advance(HOUR);
      expect(await store.invocations.wakeDue(clock.now(), 10)).toEqual([]);
    });

    it('keeps a Waiting invocation past its TTL while it waits, counts the TTL from its end once it ends, and deletes its journal and kept events with it', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const plain = await running();
      const durable = await running();
      await store.journal.record(durable.ref, durable.lease, done('step', 1, 'result', t), limits);
      await store.journal.beginWait(durable.ref, durable.lease, sleep('nap', 1, t, t + 2 * HOUR), limits);
      const suspension = { reason: { kind: 'sleep' as const, name: 'nap', until: t + 2 * HOUR }, activeMs: 1, keepUntil: t + 10 * HOUR };
      expect(await store.invocations.suspend(durable.ref, durable.lease, suspension, t)).toBe('waiting');
      expect(await store.journal.sendEvent(durable.ref, { name: 'later', payloadJson: '"kept"', at: t }, limits)).toEqual({ delivered: 'kept' });
      // Past the TTL it was created with (1 hour): still there, waiting.
      clock.advance(2 * HOUR);
      await store.invocations.deleteExpired(clock.now());
      expect((await store.invocations.get(durable.ref))?.status).toBe('Waiting');
      expect(await store.invocations.get(plain.ref)).toBeNull();
      expect(await store.invocations.wakeDue(clock.now(), 10)).toEqual([{ ...durable.ref, pool: 'default' }]);
      await store.invocations.claim(durable.ref, 'w1', 60_000, clock.now());
      expect(await store.invocations.complete(durable.ref, 'w1', { status: 'Completed', responseBody: 1 }, [], clock.now())).toEqual({ watched: false });
      // Its TTL from its end, like any invocation's.
      expect((await store.invocations.get(durable.ref))?.expireAt).toBe(clock.now() + HOUR);
      clock.advance(HOUR - 1);
      expect(await store.invocations.deleteExpired(clock.now())).toBe(0);
      expect(await store.journal.read(durable.ref)).toHaveLength(2);
      clock.advance(1);
      expect(await store.invocations.deleteExpired(clock.now())).toBe(1);
      expect(await store.journal.read(durable.ref)).toEqual([]);
      expect(await store.journal.list(durable.ref, { limit: 10 })).toEqual([]);
      // Nothing of it is left to show up under a new invocation with its id: neither entries nor kept events.
      const again = { ...newInvocation({ createdAt: clock.now(), expireAt: clock.now() + HOUR }), id: durable.inv.id };
      await store.invocations.create(again);
      const claimed = await store.invocations.claim(again, 'w1', 60_000, clock.now());
      expect(claimed).toMatchObject({ steps: 0, activeMs: 0 });
      expect(await store.journal.read(again)).toEqual([]);
      expect(await store.journal.beginWait(again, { owner: 'w1', attempt: 1 }, eventWait('later', 1, clock.now(), clock.now() + 1000), limits)).toMatchObject({ status: 'waiting' });
    });

    it('keeps the expiry of an invocation that never suspended as it was created, whatever it journalled', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { inv, ref, lease } = await running();
      await store.journal.record(ref, lease, done('step', 1, 1, t), limits);
      clock.advance(1000);
      await store.invocations.complete(ref, 'w1', { status: 'Completed', responseBody: 1 }, [], clock.now());
      expect((await store.invocations.get(ref))?.expireAt).toBe(inv.expireAt);
      const cancelledOne = await running();
      await store.invocations.cancel(cancelledOne.ref, cancelled, clock.now());
      expect((await store.invocations.get(cancelledOne.ref))?.expireAt).toBe(cancelledOne.inv.expireAt);
      // One cancelled while it waits expires from its cancellation.
      const waited = await waiting();
      clock.advance(1000);
      await store.invocations.cancel(waited.ref, cancelled, clock.now());
      expect((await store.invocations.get(waited.ref))?.expireAt).toBe(clock.now() + HOUR);
    });

    it('keeps any step name and result exactly, each name counting its own occurrences, in the order written', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      // Names a connector may give (1 to 200 characters, no control characters), hostile to a query language or a document store among them.
      const name = fc.oneof(
        fc.constantFrom('send', "'; DROP TABLE invocation_journal; --", '$where', 'a.b', '_id', 'é\u{1F600}', 'x'.repeat(200), ' ', 'SEND'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((n) => !/[\u0000-\u001f\u007f-\u009f]/.test(n)),
      );
      const result = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? 'null');
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(name, result), { minLength: 1, maxLength: 12 }), async (steps) => {
          const { ref, lease } = await running();
          const seen = new Map<string, number>();
          const written = steps.map(([stepName, json]) => {
            const occurrence = (seen.get(stepName) ?? 0) + 1;
            seen.set(stepName, occurrence);
            return { name: stepName, occurrence, resultJson: json };
          });
          for (const step of written) {
            await store.journal.record(ref, lease, { ...step, attempts: 1, startedAt: t, status: 'done', finishedAt: t }, limits);
          }
          expect((await store.journal.read(ref)).map(({ name: n, occurrence, resultJson }) => ({ name: n, occurrence, resultJson }))).toEqual(written);
          expect((await store.invocations.get(ref))?.steps).toBe(written.length);
        }),
        { numRuns: 15 },
      );
    });

    it('reads a long journal whole, in order', async () => {
      const { store, clock } = subject();
      const t = clock.now();
      const { ref, lease } = await running();
      for (let i = 1; i <= 1000; i++) await store.journal.record(ref, lease, done(i % 2 ? 'odd' : 'even', Math.ceil(i / 2), { i }, t), limits);
      const journal = await store.journal.read(ref);
      expect(journal.map((entry) => entry.resultJson)).toEqual(Array.from({ length: 1000 }, (_, i) => `{"i":${i + 1}}`));
      expect((await store.invocations.get(ref))?.steps).toBe(1000);
    });
  });
}
