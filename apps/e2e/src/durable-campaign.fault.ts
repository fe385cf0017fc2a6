import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteBusTopology, exampleConnector, startExampleApi, type ExampleApi } from '@gi/testing';
import { Api } from './api-client';
import { distributedDeployment } from './distributed-env';
import { startService, type ServiceProcess } from './service-process';

/**
 * The bulk campaign example (examples/connectors/bulk-campaign.js: a durable step per recipient with its
 * idempotency key sent to the provider) with 500 recipients, interrupted mid-way as a crash, a deploy
 * and a network partition would: SIGKILL, SIGTERM, and a lease lost while its executor is frozen. The
 * provider on loopback counts every call it gets and drops a repeat of an Idempotency-Key it has seen,
 * as real providers do. After recovery every recipient has its message exactly once: the steps
 * journalled before the interruption are never sent again, and the one step in flight at it is sent
 * again with the same key and dropped by the provider. Counts come from the provider and the store.
 */
const RECIPIENTS = Array.from({ length: 500 }, (_, i) => `+1555${String(i).padStart(7, '0')}`);
const TRUSTED = { CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' };
const deployment = { allowedHosts: ['127.0.0.1'], timeoutSeconds: 300 };

/** Waits until `check` holds, polling; fails after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What the provider saw: messages per recipient, calls in all, repeats it dropped. */
function ledger(provider: ExampleApi) {
  const calls = provider.calls.filter((call) => call.path === '/messages').length;
  const twice = RECIPIENTS.filter((to) => (provider.sent.get(to) ?? 0) > 1).length;
  const missing = RECIPIENTS.filter((to) => !provider.sent.has(to)).length;
  return { calls, sent: provider.sent.size, twice, missing, deduplicated: provider.deduplicated };
}

describe('a durable campaign interrupted mid-way (500 recipients)', () => {
  let provider: ExampleApi;
  beforeEach(async () => {
    provider = await startExampleApi();
  });
  afterEach(() => provider.close());

  /** Starts the campaign async; its invocation id. */
  async function launch(admin: Api, gateway: Api): Promise<{ id: string; token: string }> {
    const token = await admin.setUp('acme', 'Order', 'campaign', exampleConnector('bulk-campaign.js'), deployment);
    const accepted = await gateway.postJson(gateway.webhookUrl('acme', 'Order', 'campaign', 'asyncResponse=true'), token, {
      recipients: RECIPIENTS,
      text: 'Spring sale',
      apiBase: provider.base,
      pauseMs: 2,
    });
    expect(accepted.status).toBe(202);
    return { id: accepted.json.invocationId as string, token };
  }

  /** Waits for the campaign's outcome and checks the ledger: every recipient once, repeats only with their key. */
  async function settle(admin: Api, results: Api, run: { id: string; token: string }, interruptions: number, label: string) {
    const done = await results.poll('acme', run.token, run.id, 'waitSeconds=60');
    expect(done).toMatchObject({ status: 200, json: { Status: 'Completed', Sent: RECIPIENTS.length, Failed: [] } });
    const detail = (await admin.admin('GET', `/bots/acme/invocations/${run.id}`)).json as { status: string; attempt: number; steps: number };
    const counts = ledger(provider);
    console.log(`durable campaign, ${label}: ${JSON.stringify({ ...counts, attempts: detail.attempt, journal: detail.steps })}`);
    expect(counts.missing).toBe(0);
    expect(counts.twice).toBe(0);
    expect(counts.sent).toBe(RECIPIENTS.length);
    // Every call past one per recipient was a repeat the provider dropped by its key: the steps in flight at the interruptions.
    expect(counts.calls).toBe(RECIPIENTS.length + counts.deduplicated);
    expect(counts.deduplicated).toBeLessThanOrEqual(interruptions);
    expect(detail).toMatchObject({ status: 'Completed', attempt: interruptions + 1, steps: 2 * RECIPIENTS.length - 1 });
  }

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`embedded, one process ${signal === 'SIGKILL' ? 'killed' : 'stopped (a deploy)'} at about 150 sent, then started again`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'gi-durable-campaign-'));
      let service: ServiceProcess | undefined;
      try {
        service = await startService({ dataDir, env: { ...TRUSTED, DRAIN_DEADLINE_SECONDS: '1' } });
        const run = await launch(new Api(service.baseUrl), new Api(service.baseUrl));
        await until(() => provider.sent.size >= 150, 60_000, 'the campaign sends');
        await service.stop(signal);
        const before = ledger(provider);
        service = await startService({ dataDir, env: TRUSTED });
        const api = new Api(service.baseUrl);
        // A drained run that ended before the stop records one attempt; otherwise it resumes as attempt 2.
        const interrupted = before.sent < RECIPIENTS.length ? 1 : 0;
        await settle(api, api, run, interrupted, `embedded ${signal} at ${before.sent}`);
      } finally {
        await service?.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }, 180_000);
  }

  describe('distributed (RabbitMQ, executors of 5 s leases)', () => {
    const distributed = distributedDeployment('durable-campaign');
    let services: ServiceProcess[] = [];
    afterAll(async () => {
      await deleteBusTopology(distributed.prefix, ['default'], 6).catch(() => undefined);
      rmSync(distributed.dataDir, { recursive: true, force: true });
    });
    afterEach(async () => {
      for (const service of services) {
        if (service.child.signalCode === null && service.child.exitCode === null) service.child.kill('SIGCONT');
      }
      await Promise.all(services.map((s) => s.stop('SIGKILL')));
      services = [];
    });

    const startExecutor = async () => {
      const executor = await distributed.start('executor', ['--pools', 'default'], TRUSTED);
      services.push(executor);
      return executor;
    };

    async function begin() {
      const control = await distributed.start('control');
      const gateway = await distributed.start('gateway');
      const results = await distributed.start('results');
      services.push(control, gateway, results);
      const first = await startExecutor();
      const admin = new Api(control.baseUrl);
      const run = await launch(admin, new Api(gateway.baseUrl));
      await until(() => provider.sent.size >= 150, 60_000, 'the campaign sends');
      return { admin, results: new Api(results.baseUrl), run, first };
    }

    it('the executor running it killed at about 150 sent; another takes over', async () => {
      const { admin, results, run, first } = await begin();
      await first.stop('SIGKILL');
      const at = provider.sent.size;
      await startExecutor();
      await settle(admin, results, run, 1, `distributed SIGKILL at ${at}`);
    }, 180_000);

    it('the executor running it frozen past its lease (as a partition would cut it off); another takes over, and the frozen one, thawed, journals nothing more', async () => {
      const { admin, results, run, first } = await begin();
      first.child.kill('SIGSTOP');
      const at = provider.sent.size;
      await startExecutor();
      // The lease (5 s) runs out unrenewed; a sweep requeues the invocation and the new executor claims it
      // (attempt 2, in the store) and goes on sending. Only then is the frozen one thawed.
      const attempt = async () => ((await admin.admin('GET', `/bots/acme/invocations/${run.id}`)).json as { attempt: number }).attempt;
      await until(async () => (await attempt()) === 2, 60_000, 'the second executor claims the campaign');
      await until(() => provider.sent.size > at + 10, 60_000, 'the second executor resumes the campaign');
      first.child.kill('SIGCONT');
      await settle(admin, results, run, 1, `distributed lease lost at ${at}`);
    }, 180_000);
  });
});
