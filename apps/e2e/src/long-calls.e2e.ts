import { Api, send } from './api-client';
import { busy } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** Reports 50 % progress at once, then stays busy for `ms` (query) and answers. */
const halfway = `
const entity = Context.GetRequestEntity();
Context.SetProgress(50, "halfway");
const ms = Number(/(?:^|&)ms=(\\d+)/.exec(entity.RequestParams)?.[1] ?? 0);
const end = Date.now() + ms;
while (Date.now() < end) {}
entity.ResponseBody = { done: true };
Context.SetResponseEntity(entity);
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('long calls: hybrid wait, hang-ups and running status (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const url = (integration: string, query = '') => api.webhookUrl('acme', 'Order', integration, query);
  const post = (integration: string, query: string, headers: Record<string, string> = {}) => api.postJson(url(integration, query), token, {}, headers);
  const invocationsOf = async (integrationId: string) =>
    (await api.admin('GET', `/bots/acme/invocations?integrationId=${integrationId}&limit=100`)).json.invocations as Array<{
      id: string;
      status: string;
      attempt: number;
    }>;

  beforeAll(async () => {
    service = await startService({ env: { SYNC_TIMEOUT_SECONDS: '2', EXECUTOR_CONCURRENCY: '2' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'busy', busy);
    for (const [id, code] of [
      ['hangup', busy],
      ['fresh', busy],
      ['seasoned', busy],
      ['measured', busy],
      ['halfway', halfway],
    ]) {
      expect((await api.admin('PUT', `/bots/acme/integrations/${id}`, { entityName: 'Order', code })).status).toBe(200);
    }
  });
  afterAll(() => service.dispose());

  describe('Prefer (RFC 7240) on a sync call', () => {
    it('respond-async, wait=N: the result when it comes within N seconds', async () => {
      const reply = await post('busy', 'ms=100', { Prefer: 'respond-async, wait=2' });
      expect([reply.status, reply.json]).toEqual([200, { done: true, ms: 100 }]);
      expect(reply.headers.get('preference-applied')).toBe('wait=2');
    });

    it('respond-async, wait=N: else 202 with the invocationId and Location, like an async start', async () => {
      const reply = await post('busy', 'ms=1500', { Prefer: 'respond-async, wait=0' });
      expect(reply.status).toBe(202);
      expect(reply.json).toEqual({ invocationId: expect.any(String), status: 'Running' });
      expect(reply.headers.get('location')).toBe(`/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${reply.json.invocationId}`);
      expect(reply.headers.get('preference-applied')).toBe('respond-async, wait=0');
      const polled = await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=20');
      expect([polled.status, polled.json]).toEqual([200, { done: true, ms: 1500 }]);
    });

    it('caps the wait at SYNC_TIMEOUT_SECONDS', async () => {
      const started = Date.now();
      const reply = await post('busy', 'ms=3000', { Prefer: 'respond-async, wait=600' });
      expect(reply.status).toBe(202);
      expect(reply.headers.get('preference-applied')).toBe('respond-async, wait=2');
      // It waited (about 2 s) before giving up on the result.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect((await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=20')).status).toBe(200);
    });

    it('respond-async alone makes the call asynchronous', async () => {
      const reply = await post('busy', 'ms=500', { Prefer: 'respond-async' });
      expect([reply.status, reply.json]).toEqual([202, { invocationId: expect.any(String), status: 'Running' }]);
      expect(reply.headers.get('preference-applied')).toBe('respond-async');
      expect((await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=20')).json).toEqual({ done: true, ms: 500 });
    });

    it('wait=N alone shortens the sync wait: 504 with the invocationId after N seconds', async () => {
      const reply = await post('busy', 'ms=1500', { Prefer: 'wait=0' });
      expect([reply.status, reply.json.type]).toEqual([504, 'urn:gi:problem:timeout']);
      expect(reply.headers.get('preference-applied')).toBe('wait=0');
      expect((await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=20')).status).toBe(200);
    });
  });

  it('a sync caller that hangs up does not cancel its job: it is listed, pollable, and a repeat of its Idempotency-Key gets its outcome', async () => {
    const before = (await invocationsOf('hangup')).length;
    // The caller hangs up 500 ms into a 1.5 s run.
    const hangingUp = fetch(url('hangup', 'ms=1500'), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'Idempotency-Key': 'hangup-1' },
      body: JSON.stringify({ orderId: 1 }),
      signal: AbortSignal.timeout(500),
    });
    await expect(hangingUp).rejects.toThrow();

    // Through the control API (what `gi invocations list` shows): the run goes on.
    const runs = await invocationsOf('hangup');
    expect(runs).toHaveLength(before + 1);
    const [run] = runs;
    expect(['Queued', 'Running']).toContain(run.status);
    const polled = await api.poll('acme', token, run.id, 'waitSeconds=20');
    expect([polled.status, polled.json]).toEqual([200, { done: true, ms: 1500 }]);
    // Through the Idempotency-Key: a repeat of the request gets the outcome of the same invocation.
    const repeat = await api.postJson(url('hangup', 'ms=1500'), token, { orderId: 1 }, { 'Idempotency-Key': 'hangup-1' });
    expect([repeat.status, repeat.json, repeat.headers.get('x-invocation-id')]).toEqual([200, { done: true, ms: 1500 }, run.id]);
    // Run once, to its end.
    const after = await invocationsOf('hangup');
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({ id: run.id, status: 'Completed', attempt: 1 });
  });

  describe('poll replies while running', () => {
    it('carry status, attempt, startedAt and progress, an ETag, and 304 while nothing changed', async () => {
      const started = await post('halfway', 'asyncResponse=true&ms=2500');
      const id = started.json.invocationId as string;
      let polled = await api.poll('acme', token, id, 'waitSeconds=0');
      for (let i = 0; i < 40 && !polled.json.progress; i++) {
        await sleep(50);
        polled = await api.poll('acme', token, id, 'waitSeconds=0');
      }
      expect(polled.status).toBe(202);
      expect(polled.json).toEqual({
        invocationId: id,
        status: 'Running',
        message: 'The job is not yet complete.',
        attempt: 1,
        startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        progress: { percent: 50, message: 'halfway' },
      });
      const etag = polled.headers.get('etag');
      expect(etag).toMatch(/^"[\w-]+"$/);

      const pollUrl = `${service.baseUrl}/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${id}&waitSeconds=0`;
      const conditional = (tag: string) => send(pollUrl, { headers: { authorization: `Bearer ${token}`, 'if-none-match': tag } });
      const unchanged = await conditional(etag!);
      expect([unchanged.status, unchanged.text, unchanged.headers.get('etag')]).toEqual([304, '', etag]);
      expect(Number(unchanged.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await conditional('"something-else"')).status).toBe(202);

      // Once done, the old ETag no longer matches: the result comes in full, with its own ETag.
      const done = await api.poll('acme', token, id, 'waitSeconds=20');
      expect(done.status).toBe(200);
      const finished = await conditional(etag!);
      expect([finished.status, finished.json]).toEqual([200, { done: true }]);
      expect((await conditional(finished.headers.get('etag')!)).status).toBe(304);
    });

    it('says Queued while the job waits for an executor', async () => {
      // EXECUTOR_CONCURRENCY is 2: two long jobs keep the pool busy, the third waits.
      const blockers = await Promise.all(Array.from({ length: 2 }, () => post('busy', 'asyncResponse=true&ms=1500')));
      const queued = await post('busy', 'asyncResponse=true&ms=1');
      const polled = await api.poll('acme', token, queued.json.invocationId, 'waitSeconds=0');
      expect(polled.json).toMatchObject({ status: 'Queued', attempt: 0, startedAt: null });
      for (const reply of [...blockers, queued]) expect((await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=30')).status).toBe(200);
    });

    it('computes Retry-After from the integration\'s recent run times', async () => {
      // No history: the default 5 s.
      const fresh = await post('fresh', 'asyncResponse=true&ms=800');
      expect((await api.poll('acme', token, fresh.json.invocationId, 'waitSeconds=0')).headers.get('retry-after')).toBe('5');
      // A run of 2.6 s: the median minus what the running one has already taken (2 or 3 s).
      const measuredFirst = await post('measured', 'asyncResponse=true&ms=2600');
      expect((await api.poll('acme', token, measuredFirst.json.invocationId, 'waitSeconds=20')).status).toBe(200);
      const measured = await post('measured', 'asyncResponse=true&ms=2600');
      const hint = Number((await api.poll('acme', token, measured.json.invocationId, 'waitSeconds=0')).headers.get('retry-after'));
      expect(hint).toBeGreaterThanOrEqual(2);
      expect(hint).toBeLessThanOrEqual(3);
      // Short runs: at least 1 s.
      for (let i = 0; i < 3; i++) expect((await post('seasoned', 'ms=10')).status).toBe(200);
      const seasoned = await post('seasoned', 'asyncResponse=true&ms=1000');
      expect((await api.poll('acme', token, seasoned.json.invocationId, 'waitSeconds=0')).headers.get('retry-after')).toBe('1');
      for (const reply of [fresh, measured, seasoned]) await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=20');
    });
  });
});
