import { DEFAULT_CONNECTOR_LIMITS, DEFAULT_JOURNAL_LIMITS, GiError } from '@gi/domain';
import type { InvocationListFilter } from '@gi/domain';
import { createFakeStore, newInvocation, ManualClock } from '@gi/testing';
import { deleteBot, deleteEntity, deleteIntegration } from './delete-from-catalog';

type FakeStore = ReturnType<typeof createFakeStore>;

/** A durable run of bot-a's integration 'ack', suspended in a sleep: Waiting, not in flight, yet unfinished. */
async function waitingRun(store: FakeStore, now: number) {
  const inv = newInvocation({ createdAt: now });
  await store.invocations.create(inv);
  await store.invocations.claim(inv, 'w1', 60_000, now);
  await store.journal.beginWait(inv, { owner: 'w1', attempt: 1 }, { kind: 'sleep', name: 'nap', occurrence: 1, startedAt: now, until: now + 3600_000 }, DEFAULT_JOURNAL_LIMITS);
  const suspension = { reason: { kind: 'sleep' as const, name: 'nap', until: now + 3600_000 }, activeMs: 1, keepUntil: now + 7200_000 };
  expect(await store.invocations.suspend(inv, { owner: 'w1', attempt: 1 }, suspension, now)).toBe('waiting');
  return inv;
}

const ackSettings = { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 30, allowedHosts: [], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };

async function worldWithAWaitingRun() {
  const clock = new ManualClock();
  const store = createFakeStore(clock);
  const now = clock.now();
  await store.catalog.putEntity('bot-a', 'Order', [], now);
  await store.catalog.deployIntegration('bot-a', 'ack', ackSettings, now);
  const inv = await waitingRun(store, now);
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

describe('deleting from the catalog', () => {
  it('refuses with the title In use, and a forced deletion cancels as the control API, then deletes the secrets too', async () => {
    const { store, inv, deps } = await worldWithAWaitingRun();
    await expect(deleteIntegration(deps, 'bot-a', 'ack', false)).rejects.toMatchObject({ code: 'in_use', title: 'In use' });
    const deletedSecrets: unknown[][] = [];
    const secrets = { ...store.secrets, deleteAll: async (...args: unknown[]) => (deletedSecrets.push(args), 0) };
    expect(await deleteIntegration({ ...deps, store: { ...store, secrets } }, 'bot-a', 'ack', true)).toEqual({ cancelled: 1 });
    expect(await store.invocations.get(inv)).toMatchObject({ outcome: { error: { detail: expect.stringContaining('control API') } } });
    expect(deletedSecrets).toEqual([['bot-a', 'ack']]);
  });

  it('answers not_found for an integration, an entity or a bot that does not exist', async () => {
    const { deps } = await worldWithAWaitingRun();
    await expect(deleteIntegration(deps, 'bot-a', 'nope', true)).rejects.toMatchObject({ code: 'not_found', detail: "No integration 'nope' for bot 'bot-a'." });
    await expect(deleteEntity(deps, 'bot-a', 'Nope')).rejects.toMatchObject({ code: 'not_found', detail: "No entity 'Nope' for bot 'bot-a'." });
    await expect(deleteBot(deps, 'bot-z', true)).rejects.toMatchObject({ code: 'not_found', detail: "No bot 'bot-z'." });
  });

  it('refuses to delete an entity an integration uses, naming it, and deletes one no integration uses', async () => {
    const { store, deps } = await worldWithAWaitingRun();
    await expect(deleteEntity(deps, 'bot-a', 'Order')).rejects.toMatchObject({
      code: 'in_use',
      title: 'In use',
      detail: "Entity 'Order' is used by integration(s) 'ack'; delete them or deploy them with another entity first.",
      extensions: { integrations: ['ack'] },
    });
    await store.catalog.deployIntegration('bot-a', 'crm', ackSettings, deps.clock.now());
    await expect(deleteEntity(deps, 'bot-a', 'Order')).rejects.toMatchObject({
      detail: "Entity 'Order' is used by integration(s) 'ack', 'crm'; delete them or deploy them with another entity first.",
      extensions: { integrations: ['ack', 'crm'] },
    });
    await store.catalog.putEntity('bot-a', 'Spare', [], deps.clock.now());
    await deleteEntity(deps, 'bot-a', 'Spare');
    expect(await store.catalog.getEntity('bot-a', 'Spare')).toBeNull();
    expect(await store.catalog.getEntity('bot-a', 'Order')).not.toBeNull();
  });

  it('deletes a whole bot when forced: its runs cancelled, then its tokens, files, catalog, secrets and invocations', async () => {
    const { store, inv, deps } = await worldWithAWaitingRun();
    const files = { deleteBot: jest.fn(async (_botId: string) => undefined) };
    const deletions = [
      jest.spyOn(store.tokens, 'deleteAll'),
      files.deleteBot,
      jest.spyOn(store.catalog, 'deleteBot'),
      jest.spyOn(store.secrets, 'deleteAll'),
      jest.spyOn(store.invocations, 'deleteBot'),
    ];
    expect(await deleteBot({ ...deps, files }, 'bot-a', true)).toEqual({ cancelled: 1 });
    for (const deletion of deletions) expect(deletion.mock.calls).toEqual([['bot-a']]);
    // In this order: no call accepted once the tokens are gone, and the files' space freed before the store writes.
    const order = deletions.map((deletion) => deletion.mock.invocationCallOrder[0]);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(await store.catalog.listBots()).not.toContain('bot-a');
    expect(await store.invocations.get(inv)).toBeNull();
  });

  it('names what is in use, quoted, and counts a full page of each unfinished status as 300+', async () => {
    const { store, deps } = await worldWithAWaitingRun();
    const now = deps.clock.now();
    // 100 of each: Waiting (one is already), Running and Queued.
    for (let i = 1; i < 100; i++) await waitingRun(store, now);
    for (let i = 0; i < 100; i++) {
      const running = newInvocation({ createdAt: now });
      await store.invocations.create(running);
      await store.invocations.claim(running, 'w1', 60_000, now);
    }
    const queued = Array.from({ length: 100 }, () => newInvocation({ createdAt: now }));
    for (const inv of queued) await store.invocations.create(inv);
    const inUse = (what: string, inFlight: number | string) => ({
      code: 'in_use',
      detail: `${what} has unfinished invocations (Queued, Running or Waiting); wait for them to finish, or delete with force=true to cancel them.`,
      extensions: { inFlight },
    });
    await expect(deleteIntegration(deps, 'bot-a', 'ack', false)).rejects.toMatchObject(inUse("Integration 'ack' of bot 'bot-a'", '300+'));
    await expect(deleteBot(deps, 'bot-a', false)).rejects.toMatchObject(inUse("Bot 'bot-a'", '300+'));
    // One fewer is counted exactly.
    await store.invocations.cancel(queued[0], { code: 'cancelled', title: 'Cancelled', detail: 'By the caller.' }, now);
    await expect(deleteBot(deps, 'bot-a', false)).rejects.toMatchObject(inUse("Bot 'bot-a'", 299));
  });

  it('cancels page by page until none is left, whatever a page holds', async () => {
    const { store, deps } = await worldWithAWaitingRun();
    const queued = Array.from({ length: 150 }, (_, i) => newInvocation({ createdAt: deps.clock.now() + i }));
    for (const inv of queued) await store.invocations.create(inv);
    const list = jest.spyOn(store.invocations, 'list');
    expect(await deleteIntegration(deps, 'bot-a', 'ack', true)).toEqual({ cancelled: 151 });
    // Three pages of 100 a status, the last one empty.
    expect(list.mock.calls.map(([, filter]) => filter)).toEqual(
      [1, 2, 3].flatMap(() => ['Queued', 'Running', 'Waiting'].map((status) => ({ status, integrationId: 'ack', limit: 100 }))),
    );
    for (const inv of queued) expect(await store.invocations.get(inv)).toMatchObject({ status: 'Cancelled' });
  });

  it('goes ahead after 50 rounds of cancelling while calls keep arriving', async () => {
    const { store, deps } = await worldWithAWaitingRun();
    const list = store.invocations.list.bind(store.invocations);
    // A call arrives while each listing is read.
    jest.spyOn(store.invocations, 'list').mockImplementation(async (botId: string, filter: InvocationListFilter) => {
      if (filter.status === 'Queued') await store.invocations.create(newInvocation({ createdAt: deps.clock.now() }));
      return list(botId, filter);
    });
    // The waiting run and the first arrival in the first round, one arrival in each of the 49 after.
    expect(await deleteIntegration(deps, 'bot-a', 'ack', true)).toEqual({ cancelled: 51 });
    expect(await store.catalog.resolveIntegration('bot-a', 'ack')).toBeNull();
  });

  it('counts a run that finished before its cancellation as settled, and stops at any other failure to cancel', async () => {
    const { store, inv, deps } = await worldWithAWaitingRun();
    const running = newInvocation({ createdAt: deps.clock.now() });
    await store.invocations.create(running);
    await store.invocations.claim(running, 'w1', 60_000, deps.clock.now());
    const cancel = store.invocations.cancel.bind(store.invocations);
    const spy = jest.spyOn(store.invocations, 'cancel').mockImplementation(async (ref, error, now) => {
      // Its run completes just before the cancellation reaches the store.
      if (ref.id === running.id) await store.invocations.complete(running, 'w1', { status: 'Completed', responseBody: 1 }, [], now);
      return cancel(ref, error, now);
    });
    expect(await deleteIntegration(deps, 'bot-a', 'ack', true)).toEqual({ cancelled: 2 });
    expect(await store.invocations.get(running)).toMatchObject({ status: 'Completed' });
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Cancelled' });

    const { store: other, deps: otherDeps } = await worldWithAWaitingRun();
    for (const failure of [new GiError('unavailable', 'Unavailable', 'The store is out of reach.'), new Error('disk full')]) {
      jest.spyOn(other.invocations, 'cancel').mockRejectedValueOnce(failure);
      await expect(deleteIntegration(otherDeps, 'bot-a', 'ack', true)).rejects.toBe(failure);
      expect(await other.catalog.resolveIntegration('bot-a', 'ack')).not.toBeNull();
    }
    spy.mockRestore();
  });

  it('deletes a bot that has no file store', async () => {
    const { store, deps } = await worldWithAWaitingRun();
    expect(await deleteBot(deps, 'bot-a', true)).toEqual({ cancelled: 1 });
    expect(await store.catalog.listBots()).not.toContain('bot-a');
  });

  it('deletes an integration, then its bot, without force once nothing of theirs is unfinished', async () => {
    const { store, inv, deps } = await worldWithAWaitingRun();
    await store.invocations.cancel(inv, { code: 'cancelled', title: 'Cancelled', detail: 'By the caller.' }, deps.clock.now());
    const list = jest.spyOn(store.invocations, 'list');
    expect(await deleteIntegration(deps, 'bot-a', 'ack', false)).toEqual({ cancelled: 0 });
    expect(await store.catalog.resolveIntegration('bot-a', 'ack')).toBeNull();
    expect(await deleteBot(deps, 'bot-a', false)).toEqual({ cancelled: 0 });
    expect(await store.catalog.listBots()).not.toContain('bot-a');
    // One look at each status per deletion: nothing to wait for.
    expect(list).toHaveBeenCalledTimes(6);
  });
});
