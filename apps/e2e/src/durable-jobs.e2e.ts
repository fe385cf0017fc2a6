import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteBusTopology, startExampleApi, type ExampleApi } from '@gi/testing';
import { Api, type Reply } from './api-client';
import { distributedDeployment } from './distributed-env';
import { execFile } from 'node:child_process';
import { ADMIN_TOKEN, CLI, ROOT, startService, type ServiceProcess } from './service-process';

/** Waits above this many seconds suspend the run: short enough for tests that sleep a few seconds. */
const DURABLE = { SUSPEND_AFTER_SECONDS: '1', CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' };
const deployment = { allowedHosts: ['127.0.0.1'], timeoutSeconds: 60 };

/** Polls `read` until `done` says its reply is the state waited for, or fails after `ms`. */
async function waitFor(read: () => Promise<Reply>, done: (reply: Reply) => boolean, ms = 20_000): Promise<Reply> {
  const deadline = Date.now() + ms;
  for (;;) {
    const reply = await read();
    if (done(reply)) return reply;
    if (Date.now() > deadline) throw new Error(`state not reached within ${ms} ms; last reply ${reply.status} ${JSON.stringify(reply.json)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A step that posts a message through the example provider (which counts each call it gets), then sleeps, then another step. */
const sleeper = (base: string) => `
  const entity = Context.GetRequestEntity();
  const { n, sleepMs } = entity.RequestBody;
  const post = (to) => async ({ idempotencyKey }) => {
    const reply = await fetch('${base}/messages', { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey }, body: JSON.stringify({ to }) });
    return (await reply.json()).id;
  };
  const before = await Context.Step('before', post('before-' + n));
  await Context.Sleep('nap', sleepMs);
  const after = await Context.Step('after', post('after-' + n));
  entity.ResponseBody = { before, after };
  Context.SetResponseEntity(entity);`;

const APPROVAL = `
  const entity = Context.GetRequestEntity();
  const { timeout, gate } = entity.RequestBody;
  if (gate) await Context.Step('gate', async () => (await fetch(gate)).status);
  const decision = await Context.WaitForEvent('approved', { timeout });
  entity.ResponseBody = { decision };
  Context.SetResponseEntity(entity);`;

const QUICK = `const e = Context.GetRequestEntity(); e.ResponseBody = { quick: true }; Context.SetResponseEntity(e);`;

/** Calls of the example provider for one recipient (the step's work, however often it was done). */
const callsFor = (provider: ExampleApi, to: string) => provider.calls.filter((call) => call.path === '/messages' && JSON.parse(call.body).to === to).length;

describe('durable jobs, embedded', () => {
  let provider: ExampleApi;
  let service: ServiceProcess;
  let dataDir: string;
  let admin: Api;
  let api: Api;
  let token: string;
  let otherToken: string;

  const start = async (env: Record<string, string> = {}) => {
    service = await startService({ dataDir, env: { ...DURABLE, EXECUTOR_CONCURRENCY: '1', ...env } });
    admin = new Api(service.baseUrl);
    api = new Api(service.baseUrl);
  };

  beforeAll(async () => {
    provider = await startExampleApi();
    dataDir = mkdtempSync(join(tmpdir(), 'gi-durable-'));
    await start();
    token = await admin.setUp('acme', 'Order', 'sleeper', sleeper(provider.base), deployment);
    for (const [id, code] of [
      ['approval', APPROVAL],
      ['quick', QUICK],
    ]) {
      expect((await admin.admin('PUT', `/bots/acme/integrations/${id}`, { entityName: 'Order', code, ...deployment })).status).toBe(200);
    }
    otherToken = await admin.setUp('other', 'Order', 'quick', QUICK, deployment);
  });
  afterAll(async () => {
    await service?.stop();
    await provider?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start202 = async (integration: string, body: unknown) => {
    const accepted = await api.postJson(api.webhookUrl('acme', 'Order', integration, 'asyncResponse=true'), token, body);
    expect(accepted.status).toBe(202);
    return accepted.json.invocationId as string;
  };
  const waiting = (id: string, kind: string) => waitFor(() => api.poll('acme', token, id, 'waitSeconds=0'), (r) => r.status === 202 && r.json.waiting?.for === kind);
  const eventUrl = (id: string, name = 'approved', botId = 'acme') => `${api.baseUrl}/api/Platform/${botId}/GenericIntegrationEvent?invocationId=${encodeURIComponent(id)}&name=${encodeURIComponent(name)}`;

  it('a sleep frees the only executor slot: another call is answered while it waits, then the run resumes without repeating its first step', async () => {
    const id = await start202('sleeper', { n: 1, sleepMs: 3000 });
    const slept = await waiting(id, 'sleep');
    expect(slept.json).toMatchObject({ status: 'Running', steps: 2, waiting: { for: 'sleep', name: 'nap', until: expect.any(String) }, latestSteps: [{ name: 'nap', kind: 'sleep', status: 'waiting' }, { name: 'before', status: 'done', attempts: 1 }] });
    expect(Number(slept.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // EXECUTOR_CONCURRENCY=1: had the sleep held the slot, this call would wait for it.
    const quick = await api.postJson(api.webhookUrl('acme', 'Order', 'quick'), token, {});
    expect(quick).toMatchObject({ status: 200, json: { quick: true } });
    // ...and the sleeper still waits after it was answered: the quick call did not wait for the sleep.
    expect((await api.poll('acme', token, id, 'waitSeconds=0')).json).toMatchObject({ waiting: { for: 'sleep' } });

    const done = await api.poll('acme', token, id, 'waitSeconds=30');
    expect(done).toMatchObject({ status: 200, json: { before: expect.stringMatching(/^m-/), after: expect.stringMatching(/^m-/) } });
    expect(callsFor(provider, 'before-1')).toBe(1);
    expect(callsFor(provider, 'after-1')).toBe(1);
    const detail = (await admin.admin('GET', `/bots/acme/invocations/${id}`)).json;
    expect(detail).toMatchObject({ status: 'Completed', attempt: 2, steps: 3 });
  }, 60_000);

  it('a sync call whose run suspends is answered when the run ends', async () => {
    const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'sleeper'), token, { n: 2, sleepMs: 1500 });
    expect(reply).toMatchObject({ status: 200, json: { before: expect.any(String), after: expect.any(String) } });
    expect(callsFor(provider, 'before-2')).toBe(1);
  }, 30_000);

  it('a wait survives a restart of the service: the run resumes from its journal and completes', async () => {
    const id = await start202('sleeper', { n: 3, sleepMs: 4000 });
    await waiting(id, 'sleep');
    await service.stop('SIGKILL');
    await start();
    const done = await api.poll('acme', token, id, 'waitSeconds=30');
    expect(done).toMatchObject({ status: 200, json: { before: expect.any(String), after: expect.any(String) } });
    expect(callsFor(provider, 'before-3')).toBe(1);
    expect(callsFor(provider, 'after-3')).toBe(1);
  }, 60_000);

  it('the TypeScript twin of the campaign example, deployed by gi as an author would, sends each recipient once with its key and pauses durably between batches', async () => {
    const gi = (...args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, GI_URL: service.baseUrl, GI_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 30_000 }, (error, out, err) =>
          error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
        ),
      );
    await gi('connector', 'deploy', 'examples/connectors/bulk-campaign.ts', '--bot', 'acme', '--integration', 'campaign-ts', '--entity', 'Order', '--allowed-host', '127.0.0.1');
    const recipients = ['ts-1', 'ts-2', 'ts-3'];
    const id = await start202('campaign-ts', { recipients, text: 'Hi', apiBase: provider.base, pauseMs: 0, batchSize: 2, batchPause: 1500 });
    expect((await waiting(id, 'sleep')).json).toMatchObject({ waiting: { name: 'batch pause' } });
    expect(await api.poll('acme', token, id, 'waitSeconds=30')).toMatchObject({ status: 200, json: { Status: 'Completed', Sent: 3, Failed: [] } });
    for (const to of recipients) expect(callsFor(provider, to)).toBe(1);
    const keys = provider.calls.filter((call) => recipients.includes(JSON.parse(call.body).to)).map((call) => call.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(3);
  }, 60_000);

  it('WaitForEvent: the event URL resumes the run with its payload', async () => {
    const id = await start202('approval', { timeout: '1 minute' });
    await waiting(id, 'event');
    const sent = await api.postJson(eventUrl(id), token, { by: 'ada' });
    expect(sent).toMatchObject({ status: 202, json: { invocationId: id, name: 'approved', status: 'resumed' } });
    expect(await api.poll('acme', token, id, 'waitSeconds=30')).toMatchObject({ status: 200, json: { decision: { by: 'ada' } } });
    // Finished: a late event is refused, not kept.
    expect(await api.postJson(eventUrl(id), token, { by: 'late' })).toMatchObject({ status: 409, json: { title: 'Invocation already finished' } });
  }, 30_000);

  it('WaitForEvent: without an event the wait times out with null', async () => {
    const id = await start202('approval', { timeout: 1500 });
    expect(await api.poll('acme', token, id, 'waitSeconds=30')).toMatchObject({ status: 200, json: { decision: null } });
  }, 30_000);

  it('WaitForEvent: an event that comes before the run waits for it is kept and taken', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const gate = createServer((_req, res) => {
      arrived();
      void held.then(() => res.end('ok'));
    });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    try {
      const id = await start202('approval', { timeout: '1 minute', gate: `http://127.0.0.1:${(gate.address() as { port: number }).port}/` });
      await reached;
      // The run is in its first step: no wait exists yet.
      expect(await api.postJson(eventUrl(id), token, { early: true })).toMatchObject({ status: 202, json: { status: 'kept' } });
      release();
      expect(await api.poll('acme', token, id, 'waitSeconds=30')).toMatchObject({ status: 200, json: { decision: { early: true } } });
    } finally {
      release();
      gate.close();
    }
  }, 30_000);

  it('the event URL takes only a token of the invocation\'s bot, and names an invocation of that bot', async () => {
    const id = await start202('approval', { timeout: '1 minute' });
    await waiting(id, 'event');
    expect((await api.postJson(eventUrl(id), undefined, {})).status).toBe(401);
    expect((await api.postJson(eventUrl(id), 'not-a-token', {})).status).toBe(401);
    expect((await api.postJson(eventUrl(id), otherToken, {})).status).toBe(403);
    // Another bot's path with its own token: the invocation is not its own.
    expect((await api.postJson(eventUrl(id, 'approved', 'other'), otherToken, {})).status).toBe(404);
    expect((await api.postJson(eventUrl('no-such-invocation'), token, {})).status).toBe(404);
    expect((await api.postJson(eventUrl(id, ''), token, {})).status).toBe(400);
    expect((await api.postJson(eventUrl(id, 'x'.repeat(201)), token, {})).status).toBe(400);
    expect((await api.call(eventUrl(id), token, { body: '{"broken": ', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await api.call(eventUrl(id), token, { method: 'GET' })).status).toBe(405);
    // Still waiting: none of those reached it.
    expect((await api.poll('acme', token, id, 'waitSeconds=0')).json).toMatchObject({ waiting: { for: 'event' } });
    // A waiting invocation can be cancelled.
    expect((await api.call(`${api.baseUrl}/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${id}`, token, { method: 'DELETE' })).status).toBe(200);
    expect((await api.poll('acme', token, id, 'waitSeconds=0')).status).toBe(410);
  }, 30_000);
});

describe('durable jobs, embedded, the journal refusing what does not fit', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  let modes: Server;
  let modeUrl: string;
  beforeAll(async () => {
    let asked = 0;
    modes = createServer((_req, res) => res.end(asked++ === 0 ? 'sleep' : 'step'));
    await new Promise<void>((resolve) => modes.listen(0, '127.0.0.1', resolve));
    modeUrl = `http://127.0.0.1:${(modes.address() as { port: number }).port}/`;
    service = await startService({ env: { ...DURABLE, STEP_RESULT_MAX_SIZE: '1kb' } });
    api = new Api(service.baseUrl);
    // The first run sleeps (the test's server says so, outside any step); the resumed one is told to call a
    // step by the same name: the code no longer matches its journal.
    const drifting = `
      const e = Context.GetRequestEntity();
      const mode = await (await fetch(e.RequestBody.modeUrl)).text();
      if (mode === 'sleep') await Context.Sleep('x', 1500);
      else await Context.Step('x', () => 1);
      e.ResponseBody = { done: true };
      Context.SetResponseEntity(e);`;
    const large = `
      const e = Context.GetRequestEntity();
      try { await Context.Step('big', () => 'x'.repeat(2000)); } catch (error) { e.ResponseBody = { refused: String(error.message) }; }
      Context.SetResponseEntity(e);`;
    token = await api.setUp('acme', 'Order', 'drifting', drifting, deployment);
    expect((await api.admin('PUT', '/bots/acme/integrations/large', { entityName: 'Order', code: large, ...deployment })).status).toBe(200);
  });
  afterAll(async () => {
    await service?.dispose();
    modes?.close();
  });

  it('a journal entry of another kind than the call fails the run, naming the step', async () => {
    const accepted = await api.postJson(api.webhookUrl('acme', 'Order', 'drifting', 'asyncResponse=true'), token, { modeUrl });
    const id = accepted.json.invocationId as string;
    expect((await api.poll('acme', token, id, 'waitSeconds=30')).status).toBe(500);
    const detail = (await api.admin('GET', `/bots/acme/invocations/${id}`)).json as { logs: Array<{ message: string }> };
    expect(detail.logs.map((line) => line.message).join('\n')).toMatch(/no longer matches this invocation's journal: "x" #1 is journalled as a sleep .* but the code now makes a step/);
  }, 30_000);

  it('a step result over STEP_RESULT_MAX_SIZE fails the step with a message that names the limit', async () => {
    const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'large'), token, {});
    expect(reply.status).toBe(200);
    expect(reply.json.refused).toMatch(/big.*1 KiB|STEP_RESULT_MAX_SIZE/);
  }, 30_000);
});

describe('durable jobs, distributed (gateway, results, control and two executors over RabbitMQ)', () => {
  const distributed = distributedDeployment('durable');
  let provider: ExampleApi;
  let services: ServiceProcess[] = [];
  let gateway: Api;
  let results: Api;
  let token: string;

  beforeAll(async () => {
    provider = await startExampleApi();
    const control = await distributed.start('control');
    const gatewayService = await distributed.start('gateway');
    const resultsService = await distributed.start('results');
    const executors = await Promise.all([1, 2].map(() => distributed.start('executor', ['--pools', 'default'], DURABLE)));
    services = [control, gatewayService, resultsService, ...executors];
    const admin = new Api(control.baseUrl);
    token = await admin.setUp('acme', 'Order', 'sleeper', sleeper(provider.base), deployment);
    expect((await admin.admin('PUT', '/bots/acme/integrations/approval', { entityName: 'Order', code: APPROVAL, ...deployment })).status).toBe(200);
    gateway = new Api(gatewayService.baseUrl);
    results = new Api(resultsService.baseUrl);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await provider?.close();
    await deleteBusTopology(distributed.prefix, ['default'], 6).catch(() => undefined);
    rmSync(distributed.dataDir, { recursive: true, force: true });
  });

  it('a sync call whose run suspends is answered by whichever executor resumes it', async () => {
    const reply = await gateway.postJson(gateway.webhookUrl('acme', 'Order', 'sleeper'), token, { n: 10, sleepMs: 2000 });
    expect(reply).toMatchObject({ status: 200, json: { before: expect.any(String), after: expect.any(String) } });
    expect(callsFor(provider, 'before-10')).toBe(1);
  }, 30_000);

  it('an async run sleeps, resumes and completes; an event sent to the gateway resumes a waiting one', async () => {
    const slept = await gateway.postJson(gateway.webhookUrl('acme', 'Order', 'sleeper', 'asyncResponse=true'), token, { n: 11, sleepMs: 2000 });
    const approval = await gateway.postJson(gateway.webhookUrl('acme', 'Order', 'approval', 'asyncResponse=true'), token, { timeout: '1 minute' });
    const approvalId = approval.json.invocationId as string;
    await waitFor(() => results.poll('acme', token, approvalId, 'waitSeconds=0'), (r) => r.json.waiting?.for === 'event');
    const event = `${gateway.baseUrl}/api/Platform/acme/GenericIntegrationEvent?invocationId=${approvalId}&name=approved`;
    expect(await gateway.postJson(event, token, { ok: 1 })).toMatchObject({ status: 202, json: { status: 'resumed' } });
    expect(await results.poll('acme', token, approvalId, 'waitSeconds=30')).toMatchObject({ status: 200, json: { decision: { ok: 1 } } });
    expect(await results.poll('acme', token, slept.json.invocationId as string, 'waitSeconds=30')).toMatchObject({ status: 200, json: { before: expect.any(String) } });
    expect(callsFor(provider, 'before-11')).toBe(1);
  }, 60_000);
});
