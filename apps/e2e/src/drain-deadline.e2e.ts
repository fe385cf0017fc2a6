import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { distributedDeployment } from './distributed-env';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** Asks the test's API whether to go on (the first time for a tag it holds the request), then answers. */
const asksFirst = `
const entity = Context.GetRequestEntity();
const tag = /(?:^|&)tag=([a-z0-9-]+)/.exec(entity.RequestParams)[1];
const api = /(?:^|&)api=([0-9]+)/.exec(entity.RequestParams)[1];
const answer = await (await fetch('http://127.0.0.1:' + api + '/go?tag=' + tag)).json();
entity.ResponseBody = { tag, request: answer.request };
Context.SetResponseEntity(entity);
`;

/**
 * The downstream API of the test: the first request of each tag is held open (a run that would take
 * long), later ones are answered at once. It records each request's start and, for a held one, when
 * its client went away (the run was stopped).
 */
class HoldingApi {
  readonly requests = new Map<string, Array<{ at: number; closedAt?: number }>>();
  private readonly held = new Set<ServerResponse>();
  private readonly server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const tag = new URL(req.url ?? '/', 'http://x').searchParams.get('tag') ?? '';
    const seen = this.requests.get(tag) ?? [];
    this.requests.set(tag, seen);
    const entry: { at: number; closedAt?: number } = { at: Date.now() };
    seen.push(entry);
    if (seen.length > 1) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ request: seen.length }));
    this.held.add(res);
    res.once('close', () => {
      entry.closedAt = Date.now();
      this.held.delete(res);
    });
  });

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async until(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !predicate(); await new Promise((resolve) => setTimeout(resolve, 20))) {
      if (Date.now() > deadline) throw new Error('the downstream API did not see what was expected in time');
    }
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The JSON log lines a service wrote with message `msg`. */
const linesOf = (service: ServiceProcess, msg: string) =>
  service.output.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string };
      return entry.msg === msg ? [entry as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

/**
 * On SIGTERM an executor lets its runs finish for DRAIN_DEADLINE_SECONDS at most; then it hands back
 * those still going (stopped, lease released, job requeued) instead of being killed mid-run by the
 * orchestrator. Nothing is lost, nothing recorded twice, and the run starts again elsewhere at once.
 */
describe('the drain deadline of a stopping executor', () => {
  let downstream: HoldingApi;
  let port: number;
  beforeAll(async () => {
    downstream = new HoldingApi();
    port = await downstream.start();
  });
  afterAll(() => downstream.close());

  describe('distributed: two executors, the one running the calls is stopped', () => {
    const { dataDir, prefix, start } = distributedDeployment('drain');
    // A lease of 30 s: a run that was not handed back would wait that long to run again.
    const env = { LEASE_SECONDS: '30', DRAIN_DEADLINE_SECONDS: '2', CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' };
    const services: ServiceProcess[] = [];
    afterAll(async () => {
      await Promise.all(services.map((service) => service.stop()));
      await deleteBusTopology(prefix, ['default'], 6);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('hands back its runs at the deadline, exits, and another executor runs them at once, each recorded once', async () => {
      const [control, gateway, first] = await Promise.all([start('control', [], env), start('gateway', [], env), start('executor', ['--pools', 'default'], env)]);
      services.push(control, gateway, first);
      const token = await new Api(control.baseUrl).setUp('acme', 'Order', 'asks', asksFirst, { allowedHosts: [`127.0.0.1:${port}`] });
      const api = new Api(gateway.baseUrl);
      const url = (tag: string, query = '') => api.webhookUrl('acme', 'Order', 'asks', `tag=${tag}&api=${port}${query}`);
      const started = await api.postJson(url('dist-async', '&asyncResponse=true'), token, {});
      expect(started.status).toBe(202);
      const sync = api.postJson(url('dist-sync'), token, {});
      // Both run on the first executor, held by the downstream API.
      await downstream.until(() => downstream.requests.has('dist-async') && downstream.requests.has('dist-sync'));
      const second = await start('executor', ['--pools', 'default'], env);
      services.push(second);

      const stoppedAt = Date.now();
      const code = await first.stop('SIGTERM');
      const exitedAfter = Date.now() - stoppedAt;
      expect(code).toBe(0);
      // The deadline (2 s), the hand-back and the rest of the stop: well within a 30 s grace period (and
      // the 30 s the held request would take to fail).
      expect(exitedAfter).toBeLessThan(15_000);
      expect(linesOf(first, 'drain deadline passed; handing back the runs still going')).toEqual([expect.objectContaining({ runs: 2 })]);
      expect(linesOf(first, 'run handed back: the executor is stopping and its drain deadline passed')).toHaveLength(2);

      const answered = await sync;
      const againAfter = Math.max(...['dist-async', 'dist-sync'].map((tag) => (downstream.requests.get(tag)?.[1]?.at ?? Infinity) - stoppedAt));
      console.log(`drain deadline 2 s: the executor exited ${exitedAfter} ms after SIGTERM; both runs started again on the other executor within ${againAfter} ms of it`);
      expect([answered.status, answered.json]).toEqual([200, { tag: 'dist-sync', request: 2 }]);
      const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=20');
      expect([polled.status, polled.json]).toEqual([200, { tag: 'dist-async', request: 2 }]);
      for (const tag of ['dist-async', 'dist-sync']) {
        const [held, again] = downstream.requests.get(tag) ?? [];
        // The first run was stopped before the second began: never two runs at once.
        expect(held.closedAt).toBeDefined();
        expect(again.at).toBeGreaterThanOrEqual(held.closedAt as number);
        // At once: not after the 30 s lease.
        expect(again.at - stoppedAt).toBeLessThan(20_000);
        expect(downstream.requests.get(tag)).toHaveLength(2);
      }
      // One outcome each, from the second attempt.
      const listed = (await new Api(control.baseUrl).admin('GET', '/bots/acme/invocations?integrationId=asks&limit=10')).json.invocations as Array<{ status: string; attempt: number }>;
      expect(listed).toHaveLength(2);
      expect(listed.map(({ status, attempt }) => ({ status, attempt }))).toEqual([
        { status: 'Completed', attempt: 2 },
        { status: 'Completed', attempt: 2 },
      ]);
    }, 90_000);
  });

  describe('embedded', () => {
    let service: ServiceProcess | undefined;
    afterAll(() => service?.dispose());

    it('hands back its run at the deadline and exits; the invocation is Queued at once and runs again at the next start', async () => {
      const env = { DRAIN_DEADLINE_SECONDS: '2', CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' };
      service = await startService({ env });
      const dataDir = service.dataDir;
      const api = new Api(service.baseUrl);
      const token = await api.setUp('acme', 'Order', 'asks', asksFirst, { allowedHosts: [`127.0.0.1:${port}`] });
      const started = await api.postJson(api.webhookUrl('acme', 'Order', 'asks', `tag=embedded&api=${port}&asyncResponse=true`), token, {});
      expect(started.status).toBe(202);
      await downstream.until(() => downstream.requests.has('embedded'));

      const stoppedAt = Date.now();
      expect(await service.stop('SIGTERM')).toBe(0);
      const exitedAfter = Date.now() - stoppedAt;
      console.log(`drain deadline 2 s: the embedded service exited ${exitedAfter} ms after SIGTERM`);
      expect(exitedAfter).toBeLessThan(15_000);
      expect(downstream.requests.get('embedded')?.[0].closedAt).toBeDefined();
      // Handed back, not left Running under the stopped process's lease.
      const db = new Database(join(dataDir, 'store.db'), { readonly: true });
      try {
        expect(db.prepare('SELECT status, lease_owner, attempt FROM invocations WHERE id = ?').get(started.json.invocationId)).toEqual({ status: 'Queued', lease_owner: null, attempt: 1 });
      } finally {
        db.close();
      }

      service = await startService({ env, dataDir });
      const restarted = new Api(service.baseUrl);
      const polled = await restarted.poll('acme', token, started.json.invocationId, 'waitSeconds=20');
      expect([polled.status, polled.json]).toEqual([200, { tag: 'embedded', request: 2 }]);
      const shown = await restarted.admin('GET', `/bots/acme/invocations/${started.json.invocationId}`);
      expect(shown.json).toMatchObject({ status: 'Completed', attempt: 2 });
      expect(downstream.requests.get('embedded')).toHaveLength(2);
      await service.dispose();
      rmSync(dataDir, { recursive: true, force: true });
      service = undefined;
    }, 90_000);
  });
});
