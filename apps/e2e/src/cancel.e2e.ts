import { eventually } from '@gi/testing';
import { Api, send } from './api-client';
import { example, loops } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * Cancellation in the embedded service with one executor slot: a cancelled running connector must give
 * its slot back at once, or the next job could not run until the connector's 10-minute time limit.
 */
describe('cancellation (embedded service, one executor slot)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const pollUrl = (id: string) => `${service.baseUrl}/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${encodeURIComponent(id)}`;
  const cancelAsCaller = (id: string, bearer = token) => send(pollUrl(id), { method: 'DELETE', headers: { authorization: `Bearer ${bearer}` } });
  const startLoop = async () => {
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'loops', 'asyncResponse=true'), token, {});
    expect(started.status).toBe(202);
    return started.json.invocationId as string;
  };
  const statusOf = async (id: string) => (await api.admin('GET', `/bots/acme/invocations/${id}`)).json;
  const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    service = await startService({ env: { EXECUTOR_CONCURRENCY: '1' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    expect((await api.admin('PUT', '/bots/acme/integrations/loops', { entityName: 'Order', code: loops, timeoutSeconds: 600 })).status).toBe(200);
  });
  afterAll(() => service.dispose());

  it('stops a running connector at once: its poll answers 410 and the executor runs the next job', async () => {
    const id = await startLoop();
    await until(async () => (await statusOf(id)).status === 'Running', 'the loop runs');

    const cancelledAt = Date.now();
    const cancelled = await api.admin('DELETE', `/bots/acme/invocations/${id}`);
    expect([cancelled.status, cancelled.json]).toEqual([200, { invocationId: id, status: 'Cancelled' }]);
    const polled = await api.poll('acme', token, id, 'waitSeconds=0');
    expect(polled.status).toBe(410);
    expect(polled.headers.get('content-type')).toBe('application/problem+json');
    expect(polled.json).toEqual({
      type: 'urn:gi:problem:cancelled',
      title: 'Invocation cancelled',
      status: 410,
      detail: 'The invocation was cancelled through the control API before it finished.',
      invocationId: id,
    });

    // The only executor slot is free again: a sync call completes.
    const next = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 7 });
    expect([next.status, next.json]).toEqual([200, { Status: 'Accepted', Message: 'order 7' }]);
    console.log(`running connector cancelled: slot free again after ${Date.now() - cancelledAt} ms`);
    // Info lines leave in batches (up to 50 ms, later on a busy machine): waited for, up to 3 s.
    const logged = () => service.output.some((line) => line.includes(id) && line.includes('run stopped: the invocation was cancelled'));
    await eventually(logged, 3000).catch(() => undefined);
    expect(logged()).toBe(true);
    expect(await statusOf(id)).toMatchObject({ status: 'Cancelled', error: { code: 'cancelled' }, attempt: 1 });
  });

  it('drops a queued invocation that is cancelled by its caller: it never runs', async () => {
    const blocker = await startLoop();
    await until(async () => (await statusOf(blocker)).status === 'Running', 'the blocker runs');
    const queued = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, { orderId: 8 });
    const id = queued.json.invocationId as string;
    expect((await statusOf(id)).status).toBe('Queued');

    const cancelled = await cancelAsCaller(id);
    expect([cancelled.status, cancelled.json]).toEqual([200, { invocationId: id, status: 'Cancelled' }]);
    expect((await cancelAsCaller(id)).status).toBe(200);
    expect((await api.admin('DELETE', `/bots/acme/invocations/${blocker}`)).status).toBe(200);

    const polled = await api.poll('acme', token, id, 'waitSeconds=0');
    expect([polled.status, polled.json.detail]).toEqual([410, 'The invocation was cancelled by its caller before it finished.']);
    // The slot went to the next job, never to the cancelled one.
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 9 })).status).toBe(200);
    expect(await statusOf(id)).toMatchObject({ status: 'Cancelled', attempt: 0, startedAt: null });
  });

  it('answers a sync caller waiting on the cancelled invocation with 410 at once', async () => {
    const waiting = api.postJson(api.webhookUrl('acme', 'Order', 'loops'), token, {});
    let id = '';
    await until(async () => {
      const running = (await api.admin('GET', '/bots/acme/invocations?status=Running&integrationId=loops')).json.invocations;
      id = running[0]?.id ?? '';
      return id !== '';
    }, 'the sync call runs');
    expect((await cancelAsCaller(id)).status).toBe(200);
    const reply = await waiting;
    expect([reply.status, reply.json.type, reply.json.invocationId]).toEqual([410, 'urn:gi:problem:cancelled', id]);
  });

  it('refuses to cancel a finished invocation (409), another bot\'s (403 with its token, 404 for the admin) or an unknown one (404)', async () => {
    const done = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 10 });
    const id = done.headers.get('x-invocation-id')!;
    const finished = await cancelAsCaller(id);
    expect([finished.status, finished.json.type, finished.json.detail]).toEqual([
      409,
      'urn:gi:problem:already-finished',
      'The invocation already finished (Completed); there is nothing left to cancel.',
    ]);
    expect((await api.admin('DELETE', `/bots/acme/invocations/${id}`)).status).toBe(409);
    expect((await api.poll('acme', token, id, 'waitSeconds=0')).status).toBe(200);

    const other = await api.setUp('other', 'Order', 'ack', example('ack'));
    expect((await cancelAsCaller(id, other)).status).toBe(403);
    expect((await api.admin('DELETE', `/bots/other/invocations/${id}`)).status).toBe(404);
    const unknown = await cancelAsCaller('no-such-invocation');
    expect([unknown.status, unknown.json.type]).toEqual([404, 'urn:gi:problem:not-found']);
    const methods = await send(pollUrl(id), { method: 'PUT', headers: { authorization: `Bearer ${token}` } });
    expect([methods.status, methods.headers.get('allow')]).toEqual([405, 'GET, DELETE']);
  });

  it('lists cancelled invocations by status', async () => {
    const list = await api.admin('GET', '/bots/acme/invocations?status=Cancelled');
    expect(list.status).toBe(200);
    expect(list.json.invocations.length).toBeGreaterThanOrEqual(3);
    expect(list.json.invocations.every((i: { status: string }) => i.status === 'Cancelled')).toBe(true);
  });
});
