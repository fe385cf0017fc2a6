import { rmSync } from 'node:fs';
import { deleteBusTopology, TEST_AMQP_URL } from '@gi/testing';
import { Api, send } from './api-client';
import type { Reply } from './api-client';
import { busy } from './connectors';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';
import { TcpProxy } from './tcp-proxy';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `/readyz` until `expected(reply)` holds; the last reply otherwise. */
async function readinessUntil(service: ServiceProcess, expected: (reply: Reply) => boolean, timeoutMs = 15_000): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await send(`${service.baseUrl}/readyz`);
    if (expected(reply) || Date.now() > deadline) return reply;
    await wait(100);
  }
}

/**
 * A broker outage, without stopping the broker other tests share: the services of this deployment
 * reach RabbitMQ through a loopback proxy the test cuts and restores. Their store (a SQLite file) stays.
 */
describe('a broker outage (the services reach RabbitMQ through a proxy the test cuts)', () => {
  const { dataDir, prefix, start } = distributedDeployment('outage');
  let proxy: TcpProxy;
  let gateway: ServiceProcess;
  let control: ServiceProcess;
  let executor: ServiceProcess;
  let token: string;

  beforeAll(async () => {
    proxy = await TcpProxy.to(TEST_AMQP_URL);
    // The sweepers' republish stays at its default (60 s): whatever runs sooner was published by its
    // gateway. A sync call waits 20 s at most: a wait for the sweepers would end in 504.
    const env = { AMQP_URL: proxy.via(TEST_AMQP_URL), REPUBLISH_AFTER_SECONDS: '60', SYNC_TIMEOUT_SECONDS: '20' };
    control = await start('control', [], env);
    [gateway, executor] = await Promise.all([start('gateway', [], env), start('executor', ['--pools', 'default'], env)]);
    const admin = new Api(control.baseUrl);
    token = await admin.setUp('acme', 'Order', 'busy', busy);
  });

  afterAll(async () => {
    await Promise.all([gateway, control, executor].map((service) => service?.stop()));
    await proxy?.close();
    await deleteBusTopology(prefix, ['default'], 6);
    rmSync(dataDir, { recursive: true, force: true });
  });

  afterEach(() => proxy.restore());

  it("takes the gateway and the executor out of service but keeps control (store only) ready, and says which dependency failed", async () => {
    for (const service of [gateway, control, executor]) expect((await readinessUntil(service, (reply) => reply.status === 200)).status).toBe(200);
    proxy.cut();
    const gatewayDown = await readinessUntil(gateway, (reply) => reply.status === 503);
    const executorDown = await readinessUntil(executor, (reply) => reply.status === 503);
    expect([gatewayDown.status, gatewayDown.json]).toEqual([503, { status: 'not ready', checks: expect.objectContaining({ broker: 'unreachable', store: 'ok' }) }]);
    expect([executorDown.status, executorDown.json]).toEqual([503, { status: 'not ready', checks: expect.objectContaining({ broker: 'unreachable', store: 'ok' }) }]);
    // While the broker is away, control answers ready: its readiness covers the store alone.
    const controlReady = await send(`${control.baseUrl}/readyz`);
    expect([controlReady.status, controlReady.json]).toEqual([200, { status: 'ready', checks: { store: 'ok' } }]);
    expect((await new Api(control.baseUrl).admin('GET', '/bots/acme/webhook')).status).toBe(200);

    proxy.restore();
    expect((await readinessUntil(gateway, (reply) => reply.status === 200)).status).toBe(200);
    expect((await readinessUntil(executor, (reply) => reply.status === 200)).status).toBe(200);
  });

  it('runs what was accepted during the outage within seconds of the broker coming back, each once', async () => {
    const api = new Api(gateway.baseUrl);
    const url = (ms: number) => api.webhookUrl('acme', 'Order', 'busy', `ms=${ms}`);
    // A run under way when the broker goes: it goes on, and is recorded once.
    const running = await api.postJson(`${url(1500)}&asyncResponse=true`, token, {});
    expect(running.status).toBe(202);
    proxy.cut();
    const cutAt = Date.now();
    await readinessUntil(gateway, (reply) => reply.status === 503);

    const accepted = await Promise.all(Array.from({ length: 6 }, () => api.postJson(`${url(10)}&asyncResponse=true`, token, {})));
    expect(accepted.map((reply) => reply.status)).toEqual(Array(6).fill(202));
    // Sync callers wait through the outage.
    const syncCalls = Array.from({ length: 2 }, () => api.postJson(url(10), token, {}).then((reply) => ({ reply, at: Date.now() })));
    await wait(2000);

    proxy.restore();
    const restoredAt = Date.now();
    const ids = [running, ...accepted].map((reply) => reply.json.invocationId as string);
    const polls = await Promise.all(ids.map((id) => api.poll('acme', token, id, 'waitSeconds=20').then((reply) => ({ reply, at: Date.now() }))));
    const answered = await Promise.all(syncCalls);

    for (const { reply } of [...polls, ...answered]) expect([reply.status, reply.json]).toEqual([200, { done: true, ms: expect.any(Number) }]);
    // Within seconds of the broker's return (the sweepers would have republished them after 60 s).
    const latest = Math.max(...[...polls, ...answered].map(({ at }) => at)) - restoredAt;
    console.log(`broker outage of ${restoredAt - cutAt} ms: the last of ${ids.length + answered.length} calls was answered ${latest} ms after the broker came back`);
    expect(latest).toBeLessThan(10_000);

    // Nothing lost, nothing run twice: the store holds one Completed outcome per call, each from its first run.
    const listed = (await new Api(control.baseUrl).admin('GET', '/bots/acme/invocations?integrationId=busy&limit=100')).json.invocations as Array<{ id: string; status: string; attempt: number }>;
    expect(listed).toHaveLength(ids.length + answered.length);
    expect(new Set(listed.map((invocation) => invocation.id)).size).toBe(listed.length);
    for (const id of ids) expect(listed.find((invocation) => invocation.id === id)).toMatchObject({ status: 'Completed', attempt: 1 });
    expect(listed.every((invocation) => invocation.status === 'Completed' && invocation.attempt === 1)).toBe(true);
  });
});
