import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { InvocationRef, JournalLease, StepRecord } from '@gi/domain';
import { newInvocation, SmallServices } from '@gi/testing';
import { controlApp } from './control-app.fixture';

const HOUR = 3600_000;

/**
 * A durable invocation in the in-memory store, as its run leaves it: claimed, `steps` steps journalled
 * (`send` 1..n, a second apart), then suspended in an event wait for `approved` an hour long.
 */
async function durableInvocation(world: SmallServices, { steps = 3, botId = 'bot-a', suspend = true } = {}) {
  const { store, clock } = world;
  const t0 = clock.now();
  const inv = newInvocation({ botId, createdAt: t0, expireAt: t0 + 72 * HOUR });
  await store.invocations.create(inv);
  const claimed = await store.invocations.claim(inv, 'executor-1', 60_000, t0);
  const ref: InvocationRef = { botId, id: inv.id };
  const lease: JournalLease = { owner: 'executor-1', attempt: claimed?.attempt ?? 0 };
  for (let n = 1; n <= steps; n++) {
    const step: StepRecord = { name: 'send', occurrence: n, attempts: 1, startedAt: t0 + n * 1000, status: 'done', resultJson: JSON.stringify({ n }), finishedAt: t0 + n * 1000 + 250 };
    await store.journal.record(ref, lease, step, DEFAULT_JOURNAL_LIMITS);
  }
  const until = t0 + HOUR;
  await store.journal.beginWait(ref, lease, { kind: 'event', name: 'approved', occurrence: 1, startedAt: t0 + 5000, until }, DEFAULT_JOURNAL_LIMITS);
  if (suspend) {
    await store.invocations.suspend(ref, lease, { reason: { kind: 'event', name: 'approved', until }, activeMs: 1234.4, keepUntil: t0 + 30 * 24 * HOUR }, t0 + 5000);
  }
  return { inv, ref, lease, t0, until };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('the admin API on durable runs (a Waiting invocation and its steps)', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  function setUp() {
    const c = controlApp();
    world = c.world;
    return c;
  }

  it('shows what a Waiting invocation waits for and until when, its step count and its active time in whole milliseconds', async () => {
    const c = setUp();
    const { inv, until } = await durableInvocation(c.world);
    const { json } = await c.admin('GET', `/bots/bot-a/invocations/${inv.id}`);
    expect(json).toMatchObject({ id: inv.id, status: 'Waiting', waiting: { for: 'event', name: 'approved', until: iso(until) }, steps: 4, activeMs: 1234 });
  });

  it('shows no wait, no steps and no active time for an invocation that made none', async () => {
    const c = setUp();
    const inv = newInvocation({ createdAt: c.world.clock.now() });
    await c.world.store.invocations.create(inv);
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}`)).json).toMatchObject({ status: 'Queued', waiting: null, steps: 0, activeMs: 0 });
  });

  it('shows no wait once the invocation runs again, though its steps stay', async () => {
    const c = setUp();
    const { inv, ref } = await durableInvocation(c.world);
    await c.world.store.journal.sendEvent(ref, { name: 'approved', payloadJson: '{"by":"ada"}', at: c.world.clock.now() }, DEFAULT_JOURNAL_LIMITS);
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}`)).json).toMatchObject({ status: 'Queued', waiting: null, steps: 4 });
  });

  it('lists the steps newest first with their times, durations and result sizes, never their results', async () => {
    const c = setUp();
    const { inv, t0, until } = await durableInvocation(c.world);
    const { status, json, body } = await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps`);
    expect(status).toBe(200);
    expect(json.nextBefore).toBeNull();
    expect(json.steps).toEqual([
      { name: 'approved', occurrence: 1, kind: 'event', status: 'waiting', attempts: 0, startedAt: iso(t0 + 5000), finishedAt: null, durationMs: null, until: iso(until), resultBytes: 0, error: null },
      { name: 'send', occurrence: 3, kind: 'step', status: 'done', attempts: 1, startedAt: iso(t0 + 3000), finishedAt: iso(t0 + 3250), durationMs: 250, until: null, resultBytes: 7, error: null },
      expect.objectContaining({ name: 'send', occurrence: 2 }),
      expect.objectContaining({ name: 'send', occurrence: 1 }),
    ]);
    expect(body).not.toContain('"n":');
  });

  it('shows a failed step with its error, and one waiting to retry with when it is due', async () => {
    const c = setUp();
    const { inv, ref, lease, t0 } = await durableInvocation(c.world, { steps: 0, suspend: false });
    const message = 'provider said \u001b[31mno\u001b[0m\nat line 2';
    await c.world.store.journal.record(ref, lease, { name: 'charge', occurrence: 1, attempts: 3, startedAt: t0, status: 'failed', error: { name: 'NonRetryableError', message }, finishedAt: t0 + 90 }, DEFAULT_JOURNAL_LIMITS);
    await c.world.store.journal.record(ref, lease, { name: 'fetch', occurrence: 1, attempts: 1, startedAt: t0, status: 'retrying', error: { name: 'Error', message: 'HTTP 503' }, until: t0 + 10_000 }, DEFAULT_JOURNAL_LIMITS);
    const { json } = await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps`);
    expect(json.steps.map((s: { name: string }) => s.name)).toEqual(['fetch', 'charge', 'approved']);
    expect(json.steps[0]).toMatchObject({ status: 'retrying', attempts: 1, until: iso(t0 + 10_000), finishedAt: null, durationMs: null, error: { name: 'Error', message: 'HTTP 503' } });
    // JSON carries the connector's text exactly; showing it safely is for whoever draws it.
    expect(json.steps[1]).toMatchObject({ status: 'failed', attempts: 3, durationMs: 90, error: { name: 'NonRetryableError', message } });
  });

  it('pages through every step with nextBefore, each step once, in order', async () => {
    const c = setUp();
    const { inv } = await durableInvocation(c.world, { steps: 11 });
    const seen: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=5${before === null ? '' : `&before=${encodeURIComponent(before)}`}`;
      const { status, json } = await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps${query}`);
      expect(status).toBe(200);
      expect(json.steps.length).toBeLessThanOrEqual(5);
      seen.push(...json.steps.map((s: { name: string; occurrence: number }) => `${s.name}#${s.occurrence}`));
      before = json.nextBefore;
      pages++;
    } while (before !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(['approved#1', ...Array.from({ length: 11 }, (_, i) => `send#${11 - i}`)]);
    // A page that ends exactly at the oldest step says there is no next one.
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps?limit=12`)).json.nextBefore).toBeNull();
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps?limit=11`)).json.nextBefore).toBe('2_send');
  });

  it('pages by steps whose names hold underscores, digits, spaces and other scripts', async () => {
    const c = setUp();
    const { inv, ref, lease, t0 } = await durableInvocation(c.world, { steps: 0, suspend: false });
    const names = ['12_34', 'send batch', 'ü_ß 名前', '_'];
    for (const name of names) {
      await c.world.store.journal.record(ref, lease, { name, occurrence: 1, attempts: 1, startedAt: t0, status: 'done', resultJson: 'null', finishedAt: t0 }, DEFAULT_JOURNAL_LIMITS);
    }
    const seen: string[] = [];
    for (let before: string | null = ''; before !== null; ) {
      const { json }: { json: { steps: Array<{ name: string }>; nextBefore: string | null } } = await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps?limit=1${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      seen.push(...json.steps.map((s) => s.name));
      before = json.nextBefore;
    }
    expect(seen).toEqual([...names].reverse().concat('approved'));
  });

  it('answers 404 for an unknown invocation and for another bot\'s, and an empty list for one without steps', async () => {
    const c = setUp();
    const { inv } = await durableInvocation(c.world, { botId: 'bot-b' });
    const unknown = await c.admin('GET', '/bots/bot-a/invocations/nope/steps');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ type: 'urn:gi:problem:not-found', detail: "No invocation 'nope' for bot 'bot-a'." });
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps`)).status).toBe(404);
    const plain = newInvocation({ createdAt: c.world.clock.now() });
    await c.world.store.invocations.create(plain);
    expect((await c.admin('GET', `/bots/bot-a/invocations/${plain.id}/steps`)).json).toEqual({ steps: [], nextBefore: null });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['before=yesterday', 'before'],
    ['before=0_send', 'before'],
    ['before=1_', 'before'],
    ['before=_send', 'before'],
    [`before=1_${'x'.repeat(201)}`, 'before'],
    ['before=1_a%00b', 'before'],
    ['before=1_a%0Ab', 'before'],
    ['before=99999999999999999_send', 'before'],
    ['before=1_a&before=2_b', 'before'],
  ])('refuses the query %s with a 400 naming %s', async (query, field) => {
    const c = setUp();
    const { inv } = await durableInvocation(c.world);
    const reply = await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('lists Waiting invocations with status=Waiting, and not as Running', async () => {
    const c = setUp();
    const { inv } = await durableInvocation(c.world);
    const running = newInvocation({ createdAt: c.world.clock.now() + 1 });
    await c.world.store.invocations.create(running);
    await c.world.store.invocations.claim(running, 'executor-1', 60_000, c.world.clock.now());
    expect((await c.admin('GET', '/bots/bot-a/invocations?status=Waiting')).json.invocations.map((s: { id: string }) => s.id)).toEqual([inv.id]);
    expect((await c.admin('GET', '/bots/bot-a/invocations?status=Running')).json.invocations.map((s: { id: string }) => s.id)).toEqual([running.id]);
    expect((await c.admin('GET', '/bots/bot-a/invocations')).json.invocations.map((s: { status: string }) => s.status)).toEqual(['Running', 'Waiting']);
  });

  it('cancels a Waiting invocation: its wait ends, its steps stay listed', async () => {
    const c = setUp();
    const { inv } = await durableInvocation(c.world);
    expect((await c.admin('DELETE', `/bots/bot-a/invocations/${inv.id}`)).json).toEqual({ invocationId: inv.id, status: 'Cancelled' });
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}`)).json).toMatchObject({ status: 'Cancelled', waiting: null, steps: 4 });
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}/steps`)).json.steps).toHaveLength(4);
  });

  it('needs the admin token', async () => {
    const c = setUp();
    const { inv } = await durableInvocation(c.world);
    expect((await c.call({ method: 'GET', path: `/admin/bots/bot-a/invocations/${inv.id}/steps` })).status).toBe(401);
  });
});
