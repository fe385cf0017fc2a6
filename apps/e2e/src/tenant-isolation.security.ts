import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { deleteBusTopology } from '@gi/testing';
import { Api, send } from './api-client';
import { CallbackReceiver } from './callback-receiver';
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

describe('tenant isolation: connections and waits (embedded service, MAX_CONNECTIONS 24, BOT_MAX_WAITS 4, FIRST_REQUEST_TIMEOUT_SECONDS 1)', () => {
  let service: ServiceProcess;
  let api: Api;
  let floodToken: string;
  let quietToken: string;
  const raw: Socket[] = [];

  beforeAll(async () => {
    service = await startService({ env: { MAX_CONNECTIONS: '24', BOT_MAX_WAITS: '4', FIRST_REQUEST_TIMEOUT_SECONDS: '1' } });
    api = new Api(service.baseUrl);
    floodToken = await api.setUp('flood', 'Order', 'waits', waits, { timeoutSeconds: 120 });
    quietToken = await api.setUp('quiet', 'Order', 'ack', example('ack'));
    expect((await api.admin('PUT', '/bots/quiet/integrations/waits', { entityName: 'Order', code: waits, timeoutSeconds: 120 })).status).toBe(200);
  });
  afterEach(() => {
    for (const socket of raw.splice(0)) socket.destroy();
  });
  afterAll(() => service.dispose());

  /** A raw connection to the service that has sent `head`; `closed` resolves with the ms it stayed open. */
  async function openRaw(head: string) {
    const socket = connect(Number(new URL(service.baseUrl).port), '127.0.0.1');
    raw.push(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
    if (head) socket.write(head);
    return { socket, received: () => received, closed };
  }

  it("answers a bot's long polls and sync calls past BOT_MAX_WAITS with 429 and Retry-After, while another bot waits as before", async () => {
    const started = await api.postJson(api.webhookUrl('flood', 'Order', 'waits', 'ms=60000&asyncResponse=true'), floodToken, {});
    const invocationId = started.json.invocationId as string;
    const held = [1, 2, 3, 4].map(() => api.poll('flood', floodToken, invocationId, 'waitSeconds=60'));
    // Until the four are held: a probe that gets in waits a second, one that does not gets 429.
    let refused = await api.poll('flood', floodToken, invocationId, 'waitSeconds=1');
    while (refused.status !== 429) refused = await api.poll('flood', floodToken, invocationId, 'waitSeconds=1');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.json).toMatchObject({ type: 'urn:gi:problem:rate-limited', status: 429, scope: 'bot', quota: 'maxWaits', limit: 4 });
    // A sync call (and a repeat of an Idempotency-Key) waits too: refused before anything is stored.
    const sync = await api.postJson(api.webhookUrl('flood', 'Order', 'waits', 'ms=10'), floodToken, {}, { 'idempotency-key': '"k-1"' });
    expect([sync.status, sync.json.quota]).toEqual([429, 'maxWaits']);
    // A poll that does not wait is answered.
    expect((await api.poll('flood', floodToken, invocationId, 'waitSeconds=0')).status).toBe(202);
    // The other bot is not touched: its long poll and its sync call are served.
    const other = await api.postJson(api.webhookUrl('quiet', 'Order', 'waits', 'ms=300&asyncResponse=true'), quietToken, {});
    expect((await api.poll('quiet', quietToken, other.json.invocationId as string, 'waitSeconds=30')).status).toBe(200);
    expect((await api.postJson(api.webhookUrl('quiet', 'Order', 'ack'), quietToken, { orderId: 3 })).status).toBe(200);
    // Cancelled, the held polls end (410) and give their places back.
    expect((await send(`${service.baseUrl}/api/Platform/flood/GetGenericIntegrationResponse?invocationId=${invocationId}`, { method: 'DELETE', headers: { authorization: `Bearer ${floodToken}` } })).status).toBe(200);
    expect((await Promise.all(held)).map((reply) => reply.status)).toEqual([410, 410, 410, 410]);
    expect((await api.postJson(api.webhookUrl('flood', 'Order', 'waits', 'ms=10'), floodToken, {})).status).toBe(200);
    const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/gi_quota_refusals_total\{scope="bot",quota="maxWaits"\} [1-9]/);
  }, 60_000);

  it('holds MAX_CONNECTIONS: 24 connections mid-request from a client without credentials, then 503 with Retry-After, logged once and counted', async () => {
    const holding = await Promise.all(Array.from({ length: 24 }, () => openRaw('GET /healthz HTTP/1.1\r\nHost: x\r\n')));
    // All 24 in the service: the next connections are refused, at once, with a problem document.
    const refused = await Promise.all(Array.from({ length: 10 }, () => openRaw('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')));
    await Promise.all(refused.map((client) => client.closed));
    for (const client of refused) {
      expect(client.received()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
      expect(client.received()).toMatch(/\r\nRetry-After: 1\r\n/);
      expect(client.received()).toContain('"type":"urn:gi:problem:unavailable"');
    }
    expect(holding.every((client) => !client.socket.destroyed)).toBe(true);
    for (const client of holding) client.socket.destroy();
    // Room again: /healthz answers, and the refusals were counted and logged (one line for the burst).
    await waitFor(async () => (await fetch(`${service.baseUrl}/healthz`).catch(() => null))?.status === 200);
    const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(Number(/^gi_http_connections_refused_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(10);
    const lines = service.output.filter((line) => line.includes('connections refused with 503'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 40, refused: 1, maxConnections: 24 });
  }, 60_000);

  it('makes room for new connections by closing idle keep-alive ones, so idle clients never lock others out', async () => {
    // 40 keep-alive connections, one after another, each left idle once answered: more than the 24 held.
    const idle = [];
    for (let i = 0; i < 40; i++) {
      const client = await openRaw('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(async () => client.received().includes('\r\n\r\n'));
      idle.push(client);
    }
    // Every one was served: the service closed idle ones to make room, never refused one.
    expect(idle.map((client) => /^HTTP\/1\.1 (\d+)/.exec(client.received())?.[1])).toEqual(Array(40).fill('200'));
    expect(idle.filter((client) => client.socket.destroyed).length).toBeGreaterThanOrEqual(40 - 24);
    expect(idle.filter((client) => !client.socket.destroyed).length).toBeLessThanOrEqual(24);
  }, 60_000);

  it('closes a new connection that sends nothing within FIRST_REQUEST_TIMEOUT_SECONDS (1 s), before the headers timeout (10 s)', async () => {
    const silent = await openRaw('');
    const closedAfter = await silent.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(5000);
    expect(silent.received()).toBe('');
  }, 30_000);
});

describe('tenant isolation: callbacks (embedded service, a loopback tarpit that accepts and never answers)', () => {
  let service: ServiceProcess;
  let api: Api;
  let receiver: CallbackReceiver;
  const tarpitSockets: Socket[] = [];
  const tarpit = createServer((socket) => {
    // Accepts, reads, never answers.
    tarpitSockets.push(socket);
    socket.on('error', () => undefined);
    socket.resume();
  });
  let tarpitUrl: string;

  beforeAll(async () => {
    receiver = await CallbackReceiver.start();
    await new Promise<void>((resolve) => tarpit.listen(0, '127.0.0.1', resolve));
    tarpitUrl = `http://127.0.0.1:${(tarpit.address() as { port: number }).port}/never`;
    service = await startService({ env: { CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1' } });
    api = new Api(service.baseUrl);
    for (const bot of ['flood', 'quiet']) {
      await api.setUp(bot, 'Order', 'ack', example('ack'));
      expect((await api.admin('POST', `/bots/${bot}/callback-secret`)).status).toBe(201);
    }
  });
  afterAll(async () => {
    await service.dispose();
    for (const socket of tarpitSockets) socket.destroy();
    await new Promise((resolve) => tarpit.close(resolve));
    await receiver.close();
  });

  it("delivers another bot's callback within seconds while a bot's 40 callbacks go to a receiver that never answers", async () => {
    const floodToken = (await api.admin('POST', '/bots/flood/tokens', {})).json.token as string;
    const quietToken = (await api.admin('POST', '/bots/quiet/tokens', {})).json.token as string;
    const accepted = await Promise.all(
      Array.from({ length: 40 }, () => api.postJson(api.webhookUrl('flood', 'Order', 'ack', 'asyncResponse=true'), floodToken, { orderId: 1 }, { 'callback-url': tarpitUrl })),
    );
    expect(accepted.every((reply) => reply.status === 202)).toBe(true);
    // The tarpit holds its share of the POSTs before the quiet bot's call finishes.
    await waitFor(async () => tarpitSockets.length >= 4);
    const started = Date.now();
    const reply = await api.postJson(api.webhookUrl('quiet', 'Order', 'ack'), quietToken, { orderId: 2 }, { 'callback-url': receiver.url('/quiet') });
    expect(reply.status).toBe(200);
    const [delivery] = await receiver.received('/quiet', 1, 30_000);
    const ms = delivery.at - started;
    console.log(`quiet bot's callback beside 40 held by a tarpit: delivered ${ms} ms after its call (tarpit connections: ${tarpitSockets.length})`);
    // In one queue with 8 POSTs at a time, 10 s each, it came after the tarpit's: 50 s and more.
    expect(ms).toBeLessThan(3000);
    // The tarpit holds at most its bot's share of the dispatcher, whatever it was sent.
    expect(tarpitSockets.filter((socket) => !socket.destroyed).length).toBeLessThanOrEqual(4);
  }, 60_000);
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
