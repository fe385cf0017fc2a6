import { DEFAULT_CONNECTOR_LIMITS, DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import { createFakeStore, newInvocation, ManualClock } from '@gi/testing';
import { deleteBot, deleteIntegration } from './delete-from-catalog';

/** A durable run of bot-a's integration 'ack', suspended in a sleep: Waiting, not in flight, yet unfinished. */
async function worldWithAWaitingRun() {
  const clock = new ManualClock();
  const store = createFakeStore(clock);
  const now = clock.now();
  await store.catalog.putEntity('bot-a', 'Order', [], now);
  await store.catalog.deployIntegration('bot-a', 'ack', { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 30, allowedHosts: [], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null }, now);
  const inv = newInvocation({ createdAt: now });
  await store.invocations.create(inv);
  await store.invocations.claim(inv, 'w1', 60_000, now);
  await store.journal.beginWait(inv, { owner: 'w1', attempt: 1 }, { kind: 'sleep', name: 'nap', occurrence: 1, startedAt: now, until: now + 3600_000 }, DEFAULT_JOURNAL_LIMITS);
  const suspension = { reason: { kind: 'sleep' as const, name: 'nap', until: now + 3600_000 }, activeMs: 1, keepUntil: now + 7200_000 };
  expect(await store.invocations.suspend(inv, { owner: 'w1', attempt: 1 }, suspension, now)).toBe('waiting');
  const published: string[] = [];
  const bus = { publishCancel: async () => void published.push('cancel'), publishCompletion: async () => void published.push('completion') };
  return { clock, store, inv, deps: { store, bus, clock } };
}

describe('deleting what a waiting durable run uses', () => {
  it('refuses to delete an integration or a bot whose run waits (it resumes on the version it was accepted for), and cancels it when forced', async () => {
    const { store, inv, deps } = await worldWithAWaitingRun();
    expect(await store.invocations.countActive('bot-a', deps.clock.now())).toEqual({ total: 0, byToken: {} });
    for (const remove of [() => deleteIntegration(deps, 'bot-a', 'ack', false), () => deleteBot(deps, 'bot-a', false)]) {
      await expect(remove()).rejects.toMatchObject({ code: 'in_use', detail: expect.stringContaining('Waiting'), extensions: { inFlight: 1 } });
    }
    expect(await store.catalog.resolveIntegration('bot-a', 'ack')).not.toBeNull();
    expect(await deleteIntegration(deps, 'bot-a', 'ack', true)).toEqual({ cancelled: 1 });
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Cancelled', waiting: null });
    expect(await store.catalog.resolveIntegration('bot-a', 'ack')).toBeNull();
  });
});
