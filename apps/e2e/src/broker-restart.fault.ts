import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { busy } from './connectors';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';

/**
 * Restarts the RabbitMQ broker (rabbitmqctl stop_app / start_app) three times under steady async load
 * and checks the ledger: every invocation answered 202 completes, exactly once. Runs alone (the
 * `faults` jest project) because it takes the shared broker away from everything else.
 */
describe('broker restarts under load', () => {
  const { dataDir, prefix, start } = distributedDeployment('fault');
  let services: ServiceProcess[] = [];
  const rabbitmqctl = (...args: string[]) => execFileSync('rabbitmqctl', args, { stdio: 'ignore', timeout: 60_000 });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  afterAll(async () => {
    rabbitmqctl('start_app');
    await Promise.all(services.map((s) => s.stop()));
    await deleteBusTopology(prefix, ['default'], 6).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses no accepted invocation across 3 restarts, each completed with one outcome', async () => {
    const control = await start('control');
    services = [control, ...(await Promise.all([start('gateway'), start('executor'), start('executor')]))];
    const gateway = new Api(services[1].baseUrl);
    const admin = new Api(control.baseUrl);
    const token = await admin.setUp('acme', 'Order', 'busy', busy);

    // Steady load: one async call every 20 ms; a 2xx is a promise, anything else is an honest refusal.
    const accepted: string[] = [];
    const refused: number[] = [];
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        try {
          const reply = await gateway.postJson(gateway.webhookUrl('acme', 'Order', 'busy', `asyncResponse=true&ms=5&n=${i}`), token, {});
          if (reply.status === 202) accepted.push(reply.json.invocationId);
          else refused.push(reply.status);
        } catch {
          refused.push(0);
        }
        await sleep(20);
      }
    })();

    for (let restart = 0; restart < 3; restart++) {
      await sleep(1500);
      rabbitmqctl('stop_app');
      await sleep(2000);
      rabbitmqctl('start_app');
    }
    await sleep(2000);
    loading = false;
    await load;

    const statusOf = async (id: string) => (await admin.admin('GET', `/bots/acme/invocations/${id}`)).json as { status?: string; attempt?: number };
    const deadline = Date.now() + 60_000;
    let unfinished = accepted;
    while (unfinished.length > 0 && Date.now() < deadline) {
      const states = await Promise.all(unfinished.map(statusOf));
      unfinished = unfinished.filter((_id, i) => states[i].status !== 'Completed');
      if (unfinished.length > 0) await sleep(500);
    }
    const ours = await Promise.all(accepted.map(statusOf));
    console.log(`broker restarts: accepted ${accepted.length}, refused ${refused.length}, lost ${unfinished.length}, max attempt ${Math.max(...ours.map((r) => r.attempt ?? 0))}`);
    expect(accepted.length).toBeGreaterThan(100);
    expect(unfinished).toEqual([]);
    expect(ours.every((r) => r.status === 'Completed')).toBe(true);
    // One record per accepted call, each with one outcome (the store's conditional complete).
    expect(new Set(accepted).size).toBe(accepted.length);
  });
});
