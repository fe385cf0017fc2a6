import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { busy } from './connectors';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';
import { completedCount, recordedInvocations } from './store-ledger';

/**
 * Restarts the RabbitMQ broker (rabbitmqctl stop_app / start_app) three times under steady async load
 * and checks the ledger in the store the services share: one invocation per call answered 202 and no
 * other, each Completed with its outcome recorded. Runs alone (the
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
    // Info, not debug: the ledger reads the store, never the services' log lines.
    const quiet = { LOG_LEVEL: 'info' };
    const control = await start('control', [], quiet);
    services = [control, ...(await Promise.all([start('gateway', [], quiet), start('executor', [], quiet), start('executor', [], quiet)]))];
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

    const deadline = Date.now() + 60_000;
    while (completedCount(dataDir) < accepted.length && Date.now() < deadline) await sleep(500);
    const recorded = recordedInvocations(dataDir);
    const lost = accepted.filter((id) => !recorded.some((row) => row.id === id && row.status === 'Completed'));
    console.log(
      `broker restarts: accepted ${accepted.length}, refused ${refused.length}, recorded ${recorded.length}, lost ${lost.length}, ` +
        `max attempt ${Math.max(...recorded.map((row) => row.attempt))}`,
    );
    expect(accepted.length).toBeGreaterThan(100);
    // One invocation per accepted call and no other (a refused call left none); each Completed once, its outcome recorded.
    expect(recorded.map((row) => row.id).sort()).toEqual([...accepted].sort());
    expect(lost).toEqual([]);
    expect(recorded.filter((row) => row.status !== 'Completed' || row.outcome?.status !== 'Completed')).toEqual([]);
    // Six broker stops and starts (each a blocking rabbitmqctl call of seconds on a busy machine), then up to 60 s of catching up.
  }, 240_000);
});
