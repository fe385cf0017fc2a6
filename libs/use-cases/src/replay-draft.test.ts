import { createHash } from 'node:crypto';
import { DEFAULT_CONNECTOR_LIMITS, DEFAULT_REPLAY_REQUESTS, GiError, MAX_REPLAY_REQUESTS } from '@gi/domain';
import type { ConnectorRunRequest, ConnectorRunResult, FileStore, IntegrationSettings, Outcome } from '@gi/domain';
import { createFakeStore, newInvocation, ManualClock } from '@gi/testing';
import { BLOCKED_HTTP_MESSAGE, REPLAY_CONCURRENCY, replayDraft } from './replay-draft';
import type { ReplayDeps } from './replay-draft';

const settings: IntegrationSettings = {
  entityName: 'Order',
  code: 'v1',
  pool: 'default',
  timeoutSeconds: 30,
  allowedHosts: ['api.example.com'],
  limits: { ...DEFAULT_CONNECTOR_LIMITS },
  callbackUrl: 'https://hooks.example.com/done',
};

/** A runtime that answers the order id of the request times the number in the code ("x2"), and notes every run. */
function fakeRuntime() {
  const runs: ConnectorRunRequest[] = [];
  let running = 0;
  let mostAtOnce = 0;
  return {
    runs,
    mostAtOnce: () => mostAtOnce,
    async run(request: ConnectorRunRequest): Promise<ConnectorRunResult> {
      runs.push(request);
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
      const factor = Number(/x(\d+)/.exec(request.code)?.[1] ?? 1);
      if (request.code.includes('suspend')) return { kind: 'suspended', wait: { kind: 'sleep', name: 'nap', until: 0 }, logs: [], durationMs: 1 };
      if (request.code.includes('raise')) return { kind: 'raised', title: 'Refused', message: 'Order refused', logs: [], durationMs: 4 };
      if (request.code.includes('read')) {
        const read = request.readFile ? request.readFile('f1', { offset: 0, length: 5 }).then((bytes) => Buffer.from(bytes).toString(), (error: Error) => error.message) : 'no reader';
        return { kind: 'ok', responseBody: { read: await read }, logs: [], durationMs: 1 };
      }
      const orderId = (request.entity?.RequestBody as { orderId: number }).orderId;
      return { kind: 'ok', responseBody: { total: orderId * factor }, logs: [{ at: 0, level: 'info', message: 'ran' }], durationMs: 5 };
    },
  };
}

async function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createFakeStore(clock);
  const runtime = fakeRuntime();
  const deps: ReplayDeps = { store, runtime, secretsForRun: async () => ({ API_KEY: 'k-0123456789abcdef' }), log: { error: () => undefined } };
  await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now());
  /** A stored request of order `orderId`, completed with `total` (the live version doubles nothing). */
  const stored = async (orderId: number, outcome: Outcome = { status: 'Completed', responseBody: { total: orderId } }) => {
    clock.advance(1000);
    const invocation = newInvocation({ createdAt: clock.now(), entity: { RequestParams: '', RequestHeaders: '', RequestBody: { orderId }, ResponseBody: null }, callbackUrl: settings.callbackUrl });
    await store.invocations.create(invocation);
    await store.invocations.claim(invocation, 'executor', 60_000, clock.now());
    clock.advance(12);
    await store.invocations.complete(invocation, 'executor', outcome, [], clock.now());
    return invocation.id;
  };
  return { clock, store, runtime, deps, stored };
}

/** A replay's refusal as its code and detail, or null when it was not refused. */
const failure = (promise: Promise<unknown>) => promise.then(() => null, (error: GiError) => ({ code: error.code, detail: error.detail }));

describe('replayDraft', () => {
  it('re-runs the latest stored requests against the draft, newest first, and diffs each answer with the stored one', async () => {
    const { store, runtime, deps, stored, clock } = await world();
    await stored(1);
    const second = await stored(2);
    const third = await stored(3);
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x2', limits: { ...settings.limits, memoryMiB: 32 } }, clock.now());

    const report = await replayDraft(deps, 'bot-a', 'ack', { last: 2, outbound: 'block' });

    expect(report).toMatchObject({ integrationId: 'ack', publishedVersion: 1, outbound: 'block', changed: 2 });
    expect(report.replayed.map((r) => r.invocationId)).toEqual([third, second]);
    expect(report.replayed[0]).toMatchObject({
      published: { version: 1, status: 'Completed', responseBody: { total: 3 }, durationMs: 12 },
      draft: { status: 'Completed', responseBody: { total: 6 }, durationMs: 5, logs: [{ message: 'ran' }] },
    });
    expect(report.replayed[0].diff).toBe('--- published v1\n+++ draft\n@@ -1,3 +1,3 @@\n {\n-  "total": 3\n+  "total": 6\n }\n');
    // The draft's code, limits, allowed hosts and the integration's secrets; outbound HTTP blocked.
    expect(runtime.runs[0]).toMatchObject({ code: 'x2', limits: { memoryBytes: 32 * 1024 * 1024 }, allowedHosts: ['api.example.com'], timeoutMs: 30_000, secrets: { API_KEY: 'k-0123456789abcdef' }, blockedHttp: BLOCKED_HTTP_MESSAGE });
  });

  it('replays the invocations named, with outbound HTTP sent, and shows an unchanged answer as an empty diff', async () => {
    const { store, runtime, deps, stored, clock } = await world();
    const first = await stored(1);
    const refused = await stored(2, { status: 'Failed', error: { code: 'connector_error', title: 'Refused', detail: 'Order refused' } });
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x1' }, clock.now());

    const report = await replayDraft(deps, 'bot-a', 'ack', { ids: [first, refused], outbound: 'send' });

    expect(report.changed).toBe(1);
    expect(report.replayed[0]).toMatchObject({ invocationId: first, diff: '' });
    expect(report.replayed[1]).toMatchObject({ invocationId: refused, published: { status: 'Failed', error: { title: 'Refused' } }, draft: { status: 'Completed' } });
    expect(report.replayed[1].diff).toContain('-Failed: Refused');
    expect(runtime.runs[0]).not.toHaveProperty('blockedHttp');
  });

  it("runs the draft's durable steps without a journal, and skips its sleeps and event waits", async () => {
    const { store, runtime, deps, stored, clock } = await world();
    await stored(1);
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x2' }, clock.now());
    await replayDraft(deps, 'bot-a', 'ack', { last: 1, outbound: 'block' });
    expect(runtime.runs).toHaveLength(1);
    expect(runtime.runs[0]).toMatchObject({ sleeps: 'skip' });
    expect(runtime.runs[0].durable).toBeUndefined();
  });

  it('never changes a stored invocation, makes no callback due and counts nothing in flight', async () => {
    const { store, deps, stored, clock } = await world();
    const ids = [await stored(1), await stored(2)];
    // The stored callbacks were delivered: nothing is due before the replay.
    for (const id of ids) await store.invocations.recordCallbackAttempt({ botId: 'bot-a', id }, { at: clock.now(), error: null, nextAttemptAt: null });
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x5' }, clock.now());
    const before = await Promise.all(ids.map((id) => store.invocations.get({ botId: 'bot-a', id })));
    const listed = await store.invocations.list('bot-a', { limit: 10 });

    const replay = replayDraft(deps, 'bot-a', 'ack', { last: 2, outbound: 'block' });
    expect((await store.invocations.countActive('bot-a', clock.now())).total).toBe(0);
    await replay;

    expect(await Promise.all(ids.map((id) => store.invocations.get({ botId: 'bot-a', id })))).toEqual(before);
    expect(await store.invocations.list('bot-a', { limit: 10 })).toEqual(listed);
    expect(await store.invocations.takeDueCallbacks(clock.now() + 3600_000, 1000, 10)).toEqual([]);
    expect((await store.invocations.countActive('bot-a', clock.now())).total).toBe(0);
  });

  it('lets the draft read the files of a replayed file transfer, and only those', async () => {
    const { store, deps, clock } = await world();
    const file = { Id: 'f1', FileName: 'order.csv', ContentType: 'text/csv', Size: 5, Sha256: '', PartName: 'file' };
    const upload = newInvocation({ createdAt: clock.now(), endpoint: 'GenericIntegrationFileTransfer', rawBody: null, entity: { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null, RequestFiles: [file] } });
    const plain = newInvocation({ createdAt: clock.now() - 1 });
    for (const invocation of [upload, plain]) await store.invocations.create(invocation);
    const files: FileStore = {
      write: () => Promise.reject(new Error('unused')),
      read: async (owner, id) => (owner.id === upload.id && id === 'f1' ? Buffer.from('a,b,c') : null),
      delete: async () => false,
      deleteAll: async () => undefined,
      deleteBot: async () => undefined,
      usedBytes: async () => 0,
      listOwners: async () => [],
    };
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'read' }, clock.now());
    const report = await replayDraft({ ...deps, files }, 'bot-a', 'ack', { last: 2, outbound: 'block' });
    expect(report.replayed.map((r) => r.draft.responseBody)).toEqual([{ read: 'a,b,c' }, { read: 'no reader' }]);
    // Without a file store, as an executor without one: the draft reads nothing.
    expect((await replayDraft(deps, 'bot-a', 'ack', { ids: [upload.id], outbound: 'block' })).replayed[0].draft.responseBody).toEqual({ read: 'no reader' });
  });

  it(`runs at most ${REPLAY_CONCURRENCY} requests at once`, async () => {
    const { store, runtime, deps, stored, clock } = await world();
    for (let i = 1; i <= 10; i++) await stored(i);
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x2' }, clock.now());
    const report = await replayDraft(deps, 'bot-a', 'ack', { last: 10, outbound: 'block' });
    expect(report.replayed).toHaveLength(10);
    expect(runtime.mostAtOnce()).toBe(REPLAY_CONCURRENCY);
  });

  it(`refuses more than ${MAX_REPLAY_REQUESTS} requests, no draft, and ids of another integration (400, 404)`, async () => {
    const { store, deps, stored, clock } = await world();
    const id = await stored(1);
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { last: 1, outbound: 'block' }))).toMatchObject({ code: 'not_found', detail: expect.stringContaining('has no draft') });
    expect(await failure(replayDraft(deps, 'bot-a', 'nope', { last: 1, outbound: 'block' }))).toEqual({ code: 'not_found', detail: "No integration 'nope' for bot 'bot-a'." });
    await store.catalog.putDraft('bot-a', 'ack', settings, clock.now());
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { last: MAX_REPLAY_REQUESTS + 1, outbound: 'block' }))).toEqual({
      code: 'bad_request',
      detail: `A replay re-runs 1 to ${MAX_REPLAY_REQUESTS} stored requests; last asked for ${MAX_REPLAY_REQUESTS + 1}.`,
    });
    const many = Array.from({ length: MAX_REPLAY_REQUESTS + 1 }, (_, i) => `id-${i}`);
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { ids: many, outbound: 'block' }))).toMatchObject({ code: 'bad_request' });
    const other = newInvocation({ createdAt: clock.now(), integrationId: 'other' });
    await store.invocations.create(other);
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { ids: [id, other.id], outbound: 'block' }))).toMatchObject({ code: 'not_found', detail: expect.stringContaining(`'${other.id}'`) });
    // Another bot's invocation is as unknown as no invocation.
    expect(await failure(replayDraft(deps, 'bot-b', 'ack', { ids: [id], outbound: 'block' }))).toMatchObject({ code: 'not_found' });
  });

  it('takes 1 to the maximum of whole requests, by last or by distinct ids, never both', async () => {
    const { store, deps, stored, clock } = await world();
    const id = await stored(1);
    await store.catalog.putDraft('bot-a', 'ack', settings, clock.now());
    const refused = (what: string, count: unknown) => ({ code: 'bad_request', detail: `A replay re-runs 1 to ${MAX_REPLAY_REQUESTS} stored requests; ${what} asked for ${count}.` });
    for (const last of [0, -1, 1.5]) expect(await failure(replayDraft(deps, 'bot-a', 'ack', { last, outbound: 'block' }))).toEqual(refused('last', last));
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { ids: [], outbound: 'block' }))).toEqual(refused('ids', 0));
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { last: 1, ids: [id], outbound: 'block' }))).toEqual({ code: 'bad_request', detail: 'Give either last or ids, not both.' });
    // The bounds themselves are allowed: 1, the maximum, and more ids than that when they repeat.
    expect((await replayDraft(deps, 'bot-a', 'ack', { last: 1, outbound: 'block' })).replayed).toHaveLength(1);
    expect((await replayDraft(deps, 'bot-a', 'ack', { last: MAX_REPLAY_REQUESTS, outbound: 'block' })).replayed).toHaveLength(1);
    const repeated = Array.from({ length: MAX_REPLAY_REQUESTS + 1 }, () => id);
    expect((await replayDraft(deps, 'bot-a', 'ack', { ids: repeated, outbound: 'block' })).replayed.map((r) => r.invocationId)).toEqual([id]);
    // The maximum of distinct ids is looked up (here none is known), not refused as too many.
    const unknown = Array.from({ length: MAX_REPLAY_REQUESTS }, (_, i) => `id-${i}`);
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { ids: unknown, outbound: 'block' }))).toMatchObject({ code: 'not_found' });
  });

  it(`replays the latest ${DEFAULT_REPLAY_REQUESTS} when asked for neither last nor ids, and runs nothing when none is stored`, async () => {
    const { store, runtime, deps, stored, clock } = await world();
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x2' }, clock.now());
    expect(await replayDraft(deps, 'bot-a', 'ack', { outbound: 'block' })).toMatchObject({ changed: 0, replayed: [] });
    expect(runtime.runs).toHaveLength(0);
    for (let i = 1; i <= DEFAULT_REPLAY_REQUESTS + 1; i++) await stored(i);
    const report = await replayDraft(deps, 'bot-a', 'ack', { outbound: 'block' });
    expect(report.replayed.map((r) => r.published.responseBody)).toEqual(Array.from({ length: DEFAULT_REPLAY_REQUESTS }, (_, i) => ({ total: DEFAULT_REPLAY_REQUESTS + 1 - i })));
  });

  it('quotes unknown ids cut to 80 characters', async () => {
    const { store, deps, clock } = await world();
    await store.catalog.putDraft('bot-a', 'ack', settings, clock.now());
    const long = `${'a'.repeat(80)}${'b'.repeat(20)}`;
    expect(await failure(replayDraft(deps, 'bot-a', 'ack', { ids: [long, 'short'], outbound: 'block' }))).toEqual({
      code: 'not_found',
      detail: `No stored request of integration 'ack' has the id '${'a'.repeat(80)}', 'short' (unknown, expired, or of another integration).`,
    });
  });

  it("names the draft's compiled form by a hash of its code: a new draft is never served an older one's", async () => {
    const { store, runtime, deps, stored, clock } = await world();
    await stored(1);
    const keyOf = (code: string) => `bot-a/ack@draft-${createHash('sha256').update(code).digest('hex').slice(0, 16)}`;
    for (const code of ['x2', 'x3']) {
      await store.catalog.putDraft('bot-a', 'ack', { ...settings, code }, clock.now());
      await replayDraft(deps, 'bot-a', 'ack', { last: 1, outbound: 'block' });
    }
    expect(runtime.runs.map((run) => run.cacheKey)).toEqual([keyOf('x2'), keyOf('x3')]);
  });

  it('shows a stored request that never ran, or never finished, by its status alone and with no duration', async () => {
    const { store, deps, clock } = await world();
    const queued = newInvocation({ createdAt: clock.now() - 3 });
    const running = newInvocation({ createdAt: clock.now() - 2 });
    const cancelled = newInvocation({ createdAt: clock.now() - 1 });
    for (const invocation of [queued, running, cancelled]) await store.invocations.create(invocation);
    await store.invocations.claim(running, 'executor', 60_000, clock.now());
    // Cancelled while queued: it finished, yet never started.
    await store.invocations.cancel(cancelled, { code: 'cancelled', title: 'Cancelled', detail: 'By the caller.' }, clock.now());
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x2' }, clock.now());

    const report = await replayDraft(deps, 'bot-a', 'ack', { last: 3, outbound: 'block' });

    expect(report.replayed.map((r) => r.published)).toEqual([
      { version: 1, status: 'Cancelled', responseBody: null, error: { code: 'cancelled', title: 'Cancelled', detail: 'By the caller.' }, durationMs: null },
      { version: 1, status: 'Running', responseBody: null, error: null, durationMs: null },
      { version: 1, status: 'Queued', responseBody: null, error: null, durationMs: null },
    ]);
    expect(report.replayed[2].diff).toBe('--- published v1\n+++ draft\n@@ -1,1 +1,3 @@\n-Queued\n+{\n+  "total": 14\n+}\n');
    expect(report.replayed[0].diff).toContain('\n-Cancelled: Cancelled\n-By the caller.\n');
  });

  it('refuses a draft whose run suspends: with no journal, nothing can wait', async () => {
    const { store, deps, stored, clock } = await world();
    await stored(1);
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'suspend' }, clock.now());
    await expect(replayDraft(deps, 'bot-a', 'ack', { last: 1, outbound: 'block' })).rejects.toThrow('A replay ran without a journal, so it cannot suspend.');
  });

  it('hands the draft what the gateway verified of each call, and leaves out one that expired after it was listed', async () => {
    const { store, runtime, deps, clock } = await world();
    const signed = newInvocation({ createdAt: clock.now() - 3, inbound: { scheme: 'github', deliveryId: 'd-1' } });
    const expired = newInvocation({ createdAt: clock.now() - 2 });
    const plain = newInvocation({ createdAt: clock.now() - 1 });
    for (const invocation of [signed, expired, plain]) await store.invocations.create(invocation);
    const get = store.invocations.get.bind(store.invocations);
    jest.spyOn(store.invocations, 'get').mockImplementation(async (ref) => (ref.id === expired.id ? null : get(ref)));
    await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'x2' }, clock.now());

    const report = await replayDraft(deps, 'bot-a', 'ack', { last: 3, outbound: 'block' });

    expect(report.replayed.map((r) => r.invocationId)).toEqual([plain.id, signed.id]);
    expect(runtime.runs.map((run) => run.inbound)).toEqual([null, { scheme: 'github', deliveryId: 'd-1' }]);
  });
});
