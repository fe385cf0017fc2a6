import { newInvocation } from './fixtures';
import type { IdempotencyRecord, NewInvocation } from '@gi/domain';
import type { StoreUnderTest } from './store-under-test';

/** Idempotency-Keys: a key held by one invocation, its fingerprint, and its lifetime. Part of the store contract (store.contract.ts). */
export function describeIdempotencyKeysContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('Idempotency-Keys', () => {
    const recordOf = (inv: NewInvocation, key: string, fingerprint = 'f1', ttlMs = 60_000): IdempotencyRecord => ({
      botId: inv.botId,
      key,
      fingerprint,
      invocationId: inv.id,
      createdAt: inv.createdAt,
      expireAt: inv.createdAt + ttlMs,
    });

    it('stores the invocation with a new key; a second create with the key stores nothing and returns the holder', async () => {
      const { store, clock } = subject;
      const first = newInvocation({ createdAt: clock.now() });
      expect(await store.invocations.createWithKey(first, recordOf(first, 'k1'))).toBeNull();
      expect(await store.invocations.get(first)).toMatchObject({ id: first.id, status: 'Queued' });
      clock.advance(1000);
      const repeat = newInvocation({ createdAt: clock.now() });
      const holder = await store.invocations.createWithKey(repeat, recordOf(repeat, 'k1', 'f2'));
      expect(holder).toEqual(recordOf(first, 'k1'));
      expect(await store.invocations.get(repeat)).toBeNull();
      // Keys are per bot: another bot's same key is its own.
      const other = newInvocation({ createdAt: clock.now(), botId: 'bot-b' });
      expect(await store.invocations.createWithKey(other, recordOf(other, 'k1'))).toBeNull();
      expect((await store.invocations.list('bot-a', { limit: 10 })).map((s) => s.id)).toEqual([first.id]);
    });

    it('deletes every invocation, line and key of a deleted bot, whatever its state, and nothing of another bot', async () => {
      const { store, clock } = subject;
      const keyed = newInvocation({ createdAt: clock.now() });
      expect(await store.invocations.createWithKey(keyed, recordOf(keyed, 'k1'))).toBeNull();
      const running = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(running);
      await store.invocations.claim(running, 'w1', 60_000, clock.now());
      await store.invocations.appendLogs(running, 'w1', { attempt: 1, seq: 0, lines: [{ at: clock.now(), level: 'info', message: 'old tenant' }] });
      const others = newInvocation({ createdAt: clock.now(), botId: 'bot-b' });
      expect(await store.invocations.createWithKey(others, recordOf(others, 'k1'))).toBeNull();

      expect(await store.invocations.deleteBot('bot-a')).toBe(2);
      expect(await store.invocations.get(keyed)).toBeNull();
      expect(await store.invocations.list('bot-a', { limit: 10 })).toEqual([]);
      // The run under way records nothing afterwards.
      expect(await store.invocations.complete(running, 'w1', { status: 'Completed', responseBody: 1 }, [], clock.now())).toBeNull();
      // The bot's key is free: a new invocation of a bot of the same id takes it, and sees none of the old lines.
      const again = newInvocation({ createdAt: clock.now(), id: running.id });
      expect(await store.invocations.createWithKey(again, recordOf(again, 'k1'))).toBeNull();
      await store.invocations.claim(again, 'w2', 60_000, clock.now());
      expect((await store.invocations.get(again))?.logs).toEqual([]);
      // Another bot keeps its own.
      expect(await store.invocations.get(others)).toMatchObject({ id: others.id });
      expect(await store.invocations.createWithKey(newInvocation({ createdAt: clock.now(), botId: 'bot-b' }), recordOf(others, 'k1', 'f2'))).toEqual(recordOf(others, 'k1'));
    });

    it('lets exactly one of many concurrent creates with one key store anything', async () => {
      const { store, clock } = subject;
      const contenders = Array.from({ length: 20 }, () => newInvocation({ createdAt: clock.now() }));
      const holders = await Promise.all(contenders.map((inv) => store.invocations.createWithKey(inv, recordOf(inv, 'race'))));
      const winners = contenders.filter((_, i) => holders[i] === null);
      expect(winners).toHaveLength(1);
      for (const holder of holders) if (holder) expect(holder.invocationId).toBe(winners[0].id);
      expect((await store.invocations.list('bot-a', { limit: 50 })).map((s) => s.id)).toEqual([winners[0].id]);
    });

    it('hands the holder of a key to a concurrent request only once the invocation it names can be read', async () => {
      const { store, clock } = subject;
      const contenders = Array.from({ length: 10 }, () => newInvocation({ createdAt: clock.now() }));
      const answers = await Promise.all(
        contenders.map(async (inv) => {
          const holder = await store.invocations.createWithKey(inv, recordOf(inv, 'read-at-once'));
          // What the gateway does next with a repeat: read the original (a 404 here would tell the caller "expired").
          return holder ? store.invocations.getState({ botId: holder.botId, id: holder.invocationId }) : 'stored';
        }),
      );
      expect(answers.filter((answer) => answer === 'stored')).toHaveLength(1);
      for (const answer of answers) expect(answer).not.toBeNull();
    });

    it('hands an expired key to a new request, and deletes expired keys', async () => {
      const { store, clock } = subject;
      const first = newInvocation({ createdAt: clock.now() });
      await store.invocations.createWithKey(first, recordOf(first, 'k1', 'f1', 5_000));
      clock.advance(5_000);
      const later = newInvocation({ createdAt: clock.now() });
      expect(await store.invocations.createWithKey(later, recordOf(later, 'k1', 'f2'))).toBeNull();
      const again = newInvocation({ createdAt: clock.now() });
      expect(await store.invocations.createWithKey(again, recordOf(again, 'k1'))).toMatchObject({ invocationId: later.id, fingerprint: 'f2' });
      const short = newInvocation({ createdAt: clock.now() });
      await store.invocations.createWithKey(short, recordOf(short, 'k2', 'f1', 1_000));
      clock.advance(1_000);
      await store.invocations.deleteExpired(clock.now());
      // Deleted or merely expired, k2 is free again; k1 still holds.
      const after = newInvocation({ createdAt: clock.now() });
      expect(await store.invocations.createWithKey(after, recordOf(after, 'k2'))).toBeNull();
      expect(await store.invocations.createWithKey(newInvocation({ createdAt: clock.now() }), recordOf(after, 'k1'))).toMatchObject({ invocationId: later.id });
    });
  });
}
