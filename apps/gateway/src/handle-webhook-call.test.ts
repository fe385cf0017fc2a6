import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import { completionEvent } from '@gi/contracts';
import type { JobMessage } from '@gi/contracts';
import { SmallServices } from '@gi/testing';
import type { GatewayDeps } from './gateway.deps';
import { gatewayRouter } from './gateway.router';

const BODY = JSON.stringify({ orderId: 7 });
const PATH = '/api/Platform/bot-a/Order/ack/GenericIntegration';

/** The gateway over in-memory ports; `runs` plays the executor: it finishes each job it is handed. */
async function gateway(settings: Partial<GatewayDeps['settings']> = {}, runs?: (job: JobMessage) => Promise<void>) {
  const world = new SmallServices();
  const { token } = await world.bot();
  const jobs: JobMessage[] = [];
  await world.bus.consume('default', 4, async (job) => {
    jobs.push(job);
    await runs?.(job);
    return 'ack';
  });
  const deps: GatewayDeps = {
    store: world.store,
    bus: world.bus,
    tokens: world.tokens,
    waiter: world.waiter,
    clock: world.clock,
    logger: world.logger,
    settings: {
      platformSegment: 'Platform',
      platformVersion: [9, 19],
      syncTimeoutMs: 5_000,
      maxBodyBytes: 1024 * 1024,
      bodyTimeouts: { idleMs: 10_000, totalMs: 60_000 },
      maxJsonDepth: 64,
      invocationTtlMs: 3600_000,
      idempotencyKeyTtlMs: 3600_000,
      journalLimits: DEFAULT_JOURNAL_LIMITS,
      ...settings,
    },
  };
  const call = world.serve([gatewayRouter(deps)]);
  const post = (headers: Record<string, string | string[]> = {}, query = '') =>
    call({ method: 'POST', path: `${PATH}${query}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: BODY });
  return { world, jobs, post };
}

/** What an executor does with a job: claim, record the outcome (the request body back), announce it. */
const finish = (world: SmallServices) => async (job: JobMessage) => {
  const ref = { botId: job.botId, id: job.invocationId };
  const invocation = await world.store.invocations.claim(ref, 'executor', 60_000, world.clock.now());
  if (!invocation) return;
  await world.store.invocations.complete(ref, 'executor', { status: 'Completed', responseBody: { echoed: JSON.parse(invocation.entityJson).RequestBody } }, [], world.clock.now());
  await world.bus.publishCompletion(completionEvent(ref, 'Completed'));
};

describe('a webhook call (handleWebhookCall through the gateway router)', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('async: persists the invocation, publishes its job, answers 202 with where to poll', async () => {
    const g = await gateway();
    world = g.world;
    const reply = await g.post({}, '?asyncResponse=true');
    expect(reply.status).toBe(202);
    const { invocationId } = JSON.parse(reply.body);
    expect(reply.headers['x-invocation-id']).toBe(invocationId);
    expect(reply.headers.location).toBe(`/api/Platform/bot-a/GetGenericIntegrationResponse?invocationId=${invocationId}`);
    expect(g.jobs).toEqual([{ kind: 'job', version: 1, botId: 'bot-a', invocationId, pool: 'default' }]);
    const stored = await world.store.invocations.get({ botId: 'bot-a', id: invocationId });
    expect(stored).toMatchObject({ status: 'Queued', mode: 'async', entity: { RequestBody: { orderId: 7 } }, rawBody: BODY });
  });

  it('names invocations with time-ordered UUIDs (v7): calls made one after another sort in that order', async () => {
    const g = await gateway();
    world = g.world;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(JSON.parse((await g.post({}, '?asyncResponse=true')).body).invocationId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sync: waits for the completion event and answers the rendered outcome', async () => {
    const holder: { world?: SmallServices } = {};
    const g = await gateway({}, (job) => finish(holder.world as SmallServices)(job));
    world = holder.world = g.world;
    const reply = await g.post();
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(reply.body)).toEqual({ echoed: { orderId: 7 } });
    expect(reply.headers['x-invocation-id']).toBe(g.jobs[0].invocationId);
  });

  it('sync: 504 with the invocationId and its poll URL when the job does not finish in time; the job goes on', async () => {
    const g = await gateway({ syncTimeoutMs: 50 });
    world = g.world;
    const reply = await g.post();
    expect(reply.status).toBe(504);
    const problem = JSON.parse(reply.body);
    expect(problem).toMatchObject({ type: 'urn:gi:problem:timeout', invocationId: g.jobs[0].invocationId });
    expect(reply.headers.location).toContain(`invocationId=${g.jobs[0].invocationId}`);
    expect(await world.store.invocations.getState({ botId: 'bot-a', id: g.jobs[0].invocationId })).toMatchObject({ status: 'Queued' });
  });

  it('Prefer: respond-async, wait=N: the 202 of an async start once the wait runs out', async () => {
    const g = await gateway();
    world = g.world;
    const reply = await g.post({ prefer: 'respond-async, wait=0' });
    expect(reply.status).toBe(202);
    expect(reply.headers['preference-applied']).toBe('respond-async, wait=0');
    expect(JSON.parse(reply.body)).toEqual({ invocationId: g.jobs[0].invocationId, status: 'Running' });
  });

  it('an Idempotency-Key repeat runs nothing: 409 while the original runs, its outcome once finished', async () => {
    const g = await gateway();
    world = g.world;
    const first = await g.post({ 'idempotency-key': '"k-1"' }, '?asyncResponse=true');
    const { invocationId } = JSON.parse(first.body);
    const repeat = await g.post({ 'idempotency-key': '"k-1"' }, '?asyncResponse=true');
    expect(repeat.status).toBe(409);
    expect(JSON.parse(repeat.body)).toMatchObject({ type: 'urn:gi:problem:idempotency-key-in-use', invocationId });
    await finish(world)(g.jobs[0]);
    const after = await g.post({ 'idempotency-key': '"k-1"' }, '?asyncResponse=true');
    expect(after.status).toBe(200);
    expect(after.headers['x-invocation-id']).toBe(invocationId);
    expect(g.jobs).toHaveLength(1);
  });

  it('reads the Idempotency-Key header whatever the case of its name, and refuses it sent on two lines', async () => {
    const g = await gateway();
    world = g.world;
    const first = await g.post({ 'IDEMPOTENCY-KEY': '"k-2"' }, '?asyncResponse=true');
    const repeat = await g.post({ 'Idempotency-Key': '"k-2"' }, '?asyncResponse=true');
    expect([first.status, repeat.status]).toEqual([202, 409]);
    const twice = await g.post({ 'Idempotency-Key': ['"k-3"', '"k-3"'] }, '?asyncResponse=true');
    expect([twice.status, JSON.parse(twice.body).detail]).toEqual([400, 'The Idempotency-Key header may be sent only once.']);
    expect(g.jobs).toHaveLength(1);
  });

  it('refuses a Callback-Url while the bot has no signing secret, and stores nothing', async () => {
    const g = await gateway();
    world = g.world;
    const reply = await g.post({ 'callback-url': 'https://example.com/hook' }, '?asyncResponse=true');
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body).detail).toContain('(gi callback-secret rotate)');
    expect(await world.store.invocations.list('bot-a', { limit: 10 })).toEqual([]);
    expect(g.jobs).toEqual([]);
  });

  it('answers 503 with Retry-After and stores nothing while the broker is blocked (a resource alarm)', async () => {
    const g = await gateway();
    world = g.world;
    world.bus.isBlocked = () => true;
    const reply = await g.post({}, '?asyncResponse=true');
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('10');
    expect(JSON.parse(reply.body).detail).toContain('nothing was accepted');
    expect(await world.store.invocations.list('bot-a', { limit: 10 })).toEqual([]);
  });
});
