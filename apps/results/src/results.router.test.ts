import { completionEvent } from '@gi/contracts';
import { eventually, newInvocation, SmallServices } from '@gi/testing';
import type { ResultsDeps } from './results.deps';
import { resultsRouter } from './results.router';

/** The results service over in-memory ports, with one async invocation of bot-a stored and queued. */
async function results() {
  const world = new SmallServices();
  const { token } = await world.bot();
  const invocation = newInvocation({ createdAt: world.clock.now() });
  await world.store.invocations.create(invocation);
  const deps: ResultsDeps = {
    store: world.store,
    tokens: world.tokens,
    waiter: world.waiter,
    bus: world.bus,
    clock: world.clock,
    settings: { platformSegment: 'Platform', platformVersion: [9, 19], defaultWaitSeconds: 0 },
  };
  const call = world.serve([resultsRouter(deps)]);
  const path = (query: string) => `/api/Platform/bot-a/GetGenericIntegrationResponse?invocationId=${invocation.id}${query}`;
  const auth = { authorization: `Bearer ${token}` };
  const poll = (query = '', headers: Record<string, string> = {}) => call({ method: 'GET', path: path(query), headers: { ...auth, ...headers } });
  const cancel = () => call({ method: 'DELETE', path: path(''), headers: auth });
  const ref = { botId: 'bot-a', id: invocation.id };
  const finish = async () => {
    await world.store.invocations.claim(ref, 'executor', 60_000, world.clock.now());
    await world.store.invocations.complete(ref, 'executor', { status: 'Completed', responseBody: { done: true } }, [], world.clock.now());
    await world.bus.publishCompletion(completionEvent(ref, 'Completed'));
  };
  return { world, poll, cancel, finish, ref };
}

describe('polls and cancellations (the results router)', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('answers 202 with where the run stands, an ETag and Retry-After; 304 while the ETag still matches', async () => {
    const r = await results();
    world = r.world;
    const pending = await r.poll();
    expect(pending.status).toBe(202);
    expect(JSON.parse(pending.body)).toMatchObject({ invocationId: r.ref.id, status: 'Queued', attempt: 0, startedAt: null });
    expect(pending.headers['retry-after']).toBe('5');
    const again = await r.poll('', { 'if-none-match': String(pending.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('holds a long poll until the completion event, then answers the outcome as the sync call would', async () => {
    const r = await results();
    world = r.world;
    const reads = jest.spyOn(r.world.store.invocations, 'getState');
    // Longer than the test's own timeout: only the event can end this poll in time.
    const polled = r.poll('&waitSeconds=30');
    // Finished only once the poll waits and its read in the wait (the second) has seen the run unfinished.
    await eventually(() => r.world.waiter.isWaiting(r.ref.id) && reads.mock.calls.length >= 2);
    expect((await reads.mock.results[1].value)?.status).toBe('Queued');
    await r.finish();
    const reply = await polled;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ done: true });
  });

  it('cancels an unfinished invocation for its caller: 200, then 410 to every poll', async () => {
    const r = await results();
    world = r.world;
    const cancelled = await r.cancel();
    expect(cancelled.status).toBe(200);
    expect(JSON.parse(cancelled.body)).toEqual({ invocationId: r.ref.id, status: 'Cancelled' });
    const reply = await r.poll();
    expect(reply.status).toBe(410);
    expect(JSON.parse(reply.body)).toMatchObject({ type: 'urn:gi:problem:cancelled', invocationId: r.ref.id });
  });

  it('404 for an invocation the bot does not have', async () => {
    const r = await results();
    world = r.world;
    const other = await r.world.store.invocations.get(r.ref);
    expect(other).not.toBeNull();
    const reply = await r.poll('x');
    expect(reply.status).toBe(404);
  });
});
