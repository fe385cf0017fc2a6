import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';

/**
 * 1,000 async jobs of 0.2-2 s across 3 executors while a random executor is killed with SIGKILL 20 times
 * (each replaced at once). The jobs wait on a local HTTP server rather than spinning, so the run is
 * bounded by wall time, not by the 2 cores. Ledger: every accepted id completes, with one outcome.
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
    const extra = { CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', EXECUTOR_CONCURRENCY: '16' };
    const startExecutor = () => deployment.start('executor', ['--pools', 'default'], extra);

    const control = await deployment.start('control');
    const gateway = await deployment.start('gateway');
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
    const accepted: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const ms = 200 + Math.floor(Math.random() * 1800);
          return api.postJson(api.webhookUrl('acme', 'Order', 'sleepy', `asyncResponse=true&ms=${ms}&n=${batch * 100 + i}`), token, {});
        }),
      );
      for (const reply of replies) {
        expect(reply.status).toBe(202);
        accepted.push(reply.json.invocationId);
      }
    }

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

    const statusOf = async (id: string) => (await admin.admin('GET', `/bots/acme/invocations/${id}`)).json as { status?: string; attempt?: number; finishedAt?: string };
    const deadline = Date.now() + 120_000;
    let pending = accepted;
    while (pending.length > 0 && Date.now() < deadline) {
      const states: Array<Awaited<ReturnType<typeof statusOf>>> = [];
      for (let i = 0; i < pending.length; i += 100) states.push(...(await Promise.all(pending.slice(i, i + 100).map(statusOf))));
      pending = pending.filter((_id, i) => states[i].status !== 'Completed');
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const finals: Array<Awaited<ReturnType<typeof statusOf>>> = [];
    for (let i = 0; i < accepted.length; i += 100) finals.push(...(await Promise.all(accepted.slice(i, i + 100).map(statusOf))));
    const lastFinish = Math.max(...finals.map((f) => Date.parse(f.finishedAt ?? '0')));
    const retried = finals.filter((f) => (f.attempt ?? 0) > 1).length;
    console.log(
      `executor kills: accepted ${accepted.length}, completed ${finals.filter((f) => f.status === 'Completed').length}, lost ${pending.length}, ` +
        `re-run after a kill ${retried}, all done ${((lastFinish - killedAt[killedAt.length - 1]) / 1000).toFixed(1)} s after the last kill`,
    );
    // Every recorded outcome is logged once by the executor that recorded it, killed ones included.
    const recorded = new Map<string, number>();
    for (const line of services.flatMap((service) => service.output)) {
      if (!line.includes('"invocation finished"')) continue;
      const id = (JSON.parse(line) as { invocationId: string }).invocationId;
      recorded.set(id, (recorded.get(id) ?? 0) + 1);
    }
    const duplicates = [...recorded.values()].filter((n) => n > 1).length;
    console.log(`executor kills: outcomes recorded ${recorded.size}, duplicates ${duplicates}`);
    expect(duplicates).toBe(0);
    expect(new Set(accepted).size).toBe(1000);
    expect(pending).toEqual([]);
    expect(finals.every((f) => f.status === 'Completed')).toBe(true);
  }, 300_000);
});
