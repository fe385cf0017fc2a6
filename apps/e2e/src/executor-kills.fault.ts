import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';
import { completedCount, recordedInvocations } from './store-ledger';

/**
 * 1,000 async jobs of 0.2-2 s across 3 executors while a random executor is killed with SIGKILL 20 times
 * (each replaced at once). The jobs wait on a local HTTP server rather than spinning, so the run is
 * bounded by wall time, not by the 2 cores. Ledger, read from the store the services share: one
 * invocation per accepted call and no other, each Completed with the outcome of its own request.
 */
describe('executors killed during 1,000 jobs', () => {
  const deployment = distributedDeployment('kills');
  let services: ServiceProcess[] = [];
  let delayServer: Server;

  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    delayServer?.close();
    await deleteBusTopology(deployment.prefix, ['default'], 6).catch(() => undefined);
    rmSync(deployment.dataDir, { recursive: true, force: true });
  });

  it('completes 1000/1000 with no duplicate outcome', async () => {
    delayServer = createServer((req, res) => {
      const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
      setTimeout(() => res.end('{"ok":true}'), ms);
    });
    await new Promise<void>((resolve) => delayServer.listen(0, '127.0.0.1', resolve));
    const port = (delayServer.address() as { port: number }).port;
    // Info, not debug: the ledger reads the store, never the services' log lines.
    const quiet = { LOG_LEVEL: 'info' };
    const extra = { ...quiet, CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', EXECUTOR_CONCURRENCY: '16' };
    const startExecutor = () => deployment.start('executor', ['--pools', 'default'], extra);

    const control = await deployment.start('control', [], quiet);
    const gateway = await deployment.start('gateway', [], quiet);
    const executors = await Promise.all([startExecutor(), startExecutor(), startExecutor()]);
    services = [control, gateway, ...executors];
    const admin = new Api(control.baseUrl);
    const code = `
      const e = Context.GetRequestEntity();
      const ms = Number(/(?:^|&)ms=(\\d+)/.exec(e.RequestParams)[1]);
      await Context.Http.Request({ method: 'GET', url: 'http://127.0.0.1:${port}/sleep?ms=' + ms, timeoutMs: 10000 });
      e.ResponseBody = { slept: ms };
      Context.SetResponseEntity(e);`;
    const token = await admin.setUp('acme', 'Order', 'sleepy', code, { allowedHosts: ['127.0.0.1'] });

    const api = new Api(gateway.baseUrl);
    // Each accepted id with the sleep its request asked for: its outcome must say that sleep.
    const accepted = new Map<string, number>();
    for (let batch = 0; batch < 10; batch++) {
      const requests = Array.from({ length: 100 }, (_, i) => ({ ms: 200 + Math.floor(Math.random() * 1800), n: batch * 100 + i }));
      const replies = await Promise.all(requests.map(({ ms, n }) => api.postJson(api.webhookUrl('acme', 'Order', 'sleepy', `asyncResponse=true&ms=${ms}&n=${n}`), token, {})));
      replies.forEach((reply, i) => {
        expect(reply.status).toBe(202);
        accepted.set(reply.json.invocationId, requests[i].ms);
      });
    }
    expect(accepted.size).toBe(1000);

    // 20 kills, one a second while the jobs run, each victim replaced at once.
    const killedAt: number[] = [];
    for (let kill = 0; kill < 20; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const victim = Math.floor(Math.random() * executors.length);
      await executors[victim].stop('SIGKILL');
      killedAt.push(Date.now());
      executors[victim] = await startExecutor();
      services.push(executors[victim]);
    }

    const deadline = Date.now() + 120_000;
    while (completedCount(deployment.dataDir) < accepted.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1000));
    const recorded = recordedInvocations(deployment.dataDir);
    const lastFinish = Math.max(...recorded.map((row) => row.finishedAt ?? 0));
    const lost = [...accepted.keys()].filter((id) => !recorded.some((row) => row.id === id && row.status === 'Completed'));
    console.log(
      `executor kills: accepted ${accepted.size}, recorded ${recorded.length}, completed ${recorded.filter((row) => row.status === 'Completed').length}, ` +
        `lost ${lost.length}, re-run after a kill ${recorded.filter((row) => row.attempt > 1).length}, ` +
        `all done ${((lastFinish - killedAt[killedAt.length - 1]) / 1000).toFixed(1)} s after the last kill`,
    );
    // One invocation per accepted call and no other; each Completed once, with its own request's outcome.
    expect(recorded.map((row) => row.id).sort()).toEqual([...accepted.keys()].sort());
    expect(lost).toEqual([]);
    const wrong = recorded.filter((row) => row.status !== 'Completed' || row.outcome?.status !== 'Completed' || (row.outcome.responseBody as { slept?: number })?.slept !== accepted.get(row.id));
    expect(wrong).toEqual([]);
  }, 300_000);
});
