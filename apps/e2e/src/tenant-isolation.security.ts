import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api, send } from './api-client';
import { busy, example } from './connectors';
import { distributedDeployment } from './distributed-env';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * One bot against the others (docs/security.md, *Tenant isolation*): what one bot's token can make the
 * service do must not delay another bot's calls beyond the stated bounds. Each attack is made by bot
 * `flood`; bot `quiet` is timed, and its invocation read from the store.
 */

/** Waits the number of milliseconds in the `ms` query parameter without computing: like a slow downstream API. */
const waits = `
const entity = Context.GetRequestEntity();
const ms = Number(/(?:^|&)ms=(\\d+)/.exec(entity.RequestParams)?.[1] ?? 0);
await new Promise((resolve) => setTimeout(resolve, ms));
entity.ResponseBody = { waited: ms };
Context.SetResponseEntity(entity);
`;

/** Sends `count` async calls, `parallel` at a time, without checking each reply against the spec (speed). */
async function flood(url: string, token: string, count: number, parallel = 20): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const reply = await send(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' }, { checkSpec: false });
      statuses.push(reply.status);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return statuses;
}

/** A sync call of the quiet bot: its latency, and its queue wait as the store recorded it (started - created). */
async function timedQuietCall(api: Api, token: string, control: Api = api): Promise<{ status: number; ms: number; queuedMs: number }> {
  const started = performance.now();
  // At most 20 s: a call starved behind the flood answers 504 then, and fails the test at once.
  const reply = await api.postJson(api.webhookUrl('quiet', 'Order', 'ack'), token, { orderId: 1 }, { prefer: 'wait=20' });
  const ms = performance.now() - started;
  const invocation = (await control.admin('GET', `/bots/quiet/invocations/${reply.headers.get('x-invocation-id')}`)).json;
  return { status: reply.status, ms, queuedMs: Date.parse(invocation.startedAt) - Date.parse(invocation.createdAt) };
}

describe('tenant isolation: executor slots (embedded service, the default settings)', () => {
  let service: ServiceProcess;
  let api: Api;
  let floodToken: string;
  let burnToken: string;
  let quietToken: string;

  beforeAll(async () => {
    service = await startService();
    api = new Api(service.baseUrl);
    floodToken = await api.setUp('flood', 'Order', 'waits', waits, { timeoutSeconds: 120 });
    burnToken = await api.setUp('burn', 'Order', 'busy', busy, { timeoutSeconds: 120 });
    quietToken = await api.setUp('quiet', 'Order', 'ack', example('ack'));
    // Warm: the quiet connector has run once.
    expect((await timedQuietCall(api, quietToken)).status).toBe(200);
  });
  // SIGKILL: the flood's queued jobs need not drain (the next start would recover them; this one is thrown away).
  afterAll(async () => {
    await service.stop('SIGKILL');
    rmSync(service.dataDir, { recursive: true, force: true });
  });

  it("answers another bot's sync call within about one run time while a bot has 2,000 slow jobs queued", async () => {
    const RUN_MS = 4000;
    const accepted = await flood(api.webhookUrl('flood', 'Order', 'waits', `ms=${RUN_MS}&asyncResponse=true`), floodToken, 2000);
    expect(accepted.filter((status) => status === 202)).toHaveLength(2000);
    const quiet = await timedQuietCall(api, quietToken);
    console.log(`quiet bot's sync call behind 2,000 queued ${RUN_MS / 1000} s jobs of another bot: ${Math.round(quiet.ms)} ms (queued ${quiet.queuedMs} ms)`);
    expect(quiet.status).toBe(200);
    // First in, first out over all bots it waited for 2,000 / 64 runs of 4 s: over two minutes.
    expect(quiet.ms).toBeLessThan(RUN_MS);
    expect(quiet.queuedMs).toBeLessThan(RUN_MS);
    // The flood still runs: its bot holds its share of the executor.
    const listed = (await api.admin('GET', '/bots/flood/invocations?status=Running&limit=100')).json.invocations as unknown[];
    expect(listed.length).toBeGreaterThan(0);
  }, 120_000);

  it("answers another bot's sync call within about one run time while a bot's calls burn the sandbox threads' CPU", async () => {
    const RUN_MS = 2000;
    const accepted = await flood(api.webhookUrl('burn', 'Order', 'busy', `ms=${RUN_MS}&asyncResponse=true`), burnToken, 12, 12);
    expect(accepted.filter((status) => status === 202)).toHaveLength(12);
    // The sandbox threads are busy with the burning bot's runs before the quiet bot calls.
    await waitFor(async () => (await api.admin('GET', '/bots/burn/invocations?status=Completed&limit=100')).json.invocations.length >= 1);
    const quiet = await timedQuietCall(api, quietToken);
    console.log(`quiet bot's sync call behind 12 queued ${RUN_MS / 1000} s CPU-bound runs of another bot: ${Math.round(quiet.ms)} ms`);
    expect(quiet.status).toBe(200);
    // In turn behind the runs already computing: at most one run time (2 s), not 12 / 2 threads x 2 s.
    expect(quiet.ms).toBeLessThan(RUN_MS * 1.75);
  }, 120_000);
});

describe('tenant isolation: executor slots over RabbitMQ (gateway, control and one executor as processes)', () => {
  const { dataDir, prefix, start } = distributedDeployment('tenants');
  let processes: ServiceProcess[] = [];
  let api: Api;
  let control: Api;
  let floodToken: string;
  let quietToken: string;

  beforeAll(async () => {
    const [controlService, gateway, executor] = await Promise.all([start('control'), start('gateway', [], { LOG_LEVEL: 'info' }), start('executor', [], { LOG_LEVEL: 'info' })]);
    processes = [controlService, gateway, executor];
    control = new Api(controlService.baseUrl);
    api = new Api(gateway.baseUrl);
    floodToken = await control.setUp('flood', 'Order', 'waits', waits, { timeoutSeconds: 120 });
    quietToken = await control.setUp('quiet', 'Order', 'ack', example('ack'));
    expect((await timedQuietCall(api, quietToken, control)).status).toBe(200);
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    await deleteBusTopology(prefix, ['default'], 6);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers another bot's sync call within about one run time while a bot has 300 slow jobs in the pool's queue", async () => {
    const RUN_MS = 3000;
    const accepted = await flood(api.webhookUrl('flood', 'Order', 'waits', `ms=${RUN_MS}&asyncResponse=true`), floodToken, 300);
    expect(accepted.filter((status) => status === 202)).toHaveLength(300);
    const quiet = await timedQuietCall(api, quietToken, control);
    console.log(`quiet bot's sync call behind 300 queued ${RUN_MS / 1000} s jobs of another bot (RabbitMQ, EXECUTOR_CONCURRENCY 4): ${Math.round(quiet.ms)} ms (queued ${quiet.queuedMs} ms)`);
    expect(quiet.status).toBe(200);
    // First in, first out through the pool's one queue it waited for 300 / 4 runs of 3 s.
    expect(quiet.ms).toBeLessThan(RUN_MS);
  }, 120_000);
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
