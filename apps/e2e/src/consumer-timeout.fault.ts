import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';

const rabbitEnv = (key: string) => execFileSync('rabbitmqctl', ['eval', `application:get_env(rabbit, ${key}).`], { encoding: 'utf8' }).trim();
const setRabbitEnv = (key: string, value: string) => execFileSync('rabbitmqctl', ['eval', `application:set_env(rabbit, ${key}, ${value}).`], { stdio: 'ignore' });

/**
 * A job that outlives the broker's consumer timeout (lowered to 3 s for this test; the broker default
 * is 30 min): the broker closes the consumer's channel and redelivers the message, but the invocation's
 * lease is held, so it is neither lost nor run a second time.
 */
describe('a job longer than the broker consumer timeout', () => {
  const deployment = distributedDeployment('ctimeout');
  let services: ServiceProcess[] = [];
  let delayServer: Server;
  const saved = { consumer_timeout: rabbitEnv('consumer_timeout'), channel_tick_interval: rabbitEnv('channel_tick_interval') };

  afterAll(async () => {
    for (const [key, value] of Object.entries(saved)) {
      const match = /^\{ok,(\d+)\}$/.exec(value);
      if (match) setRabbitEnv(key, match[1]);
    }
    await Promise.all(services.map((s) => s.stop()));
    delayServer?.close();
    await deleteBusTopology(deployment.prefix, ['default'], 6).catch(() => undefined);
    rmSync(deployment.dataDir, { recursive: true, force: true });
  });

  it('completes once, with one attempt', async () => {
    delayServer = createServer((_req, res) => setTimeout(() => res.end('{}'), 9000));
    await new Promise<void>((resolve) => delayServer.listen(0, '127.0.0.1', resolve));
    const port = (delayServer.address() as { port: number }).port;
    // Channels read these when they open: set them before the executors connect.
    setRabbitEnv('consumer_timeout', '3000');
    setRabbitEnv('channel_tick_interval', '1000');
    const extra = { CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' };
    const control = await deployment.start('control');
    services = [control, await deployment.start('gateway'), ...(await Promise.all([0, 1].map(() => deployment.start('executor', [], extra))))];
    const admin = new Api(control.baseUrl);
    const code = `
      const e = Context.GetRequestEntity();
      await Context.Http.Request({ method: 'GET', url: 'http://127.0.0.1:${port}/slow', timeoutMs: 20000 });
      e.ResponseBody = { done: true };
      Context.SetResponseEntity(e);`;
    const token = await admin.setUp('acme', 'Order', 'slow', code, { allowedHosts: ['127.0.0.1'], timeoutSeconds: 30 });

    const api = new Api(services[1].baseUrl);
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'slow', 'asyncResponse=true'), token, {});
    expect(started.status).toBe(202);
    const polled = await new Api(services[1].baseUrl).poll('acme', token, started.json.invocationId, 'waitSeconds=30');
    expect([polled.status, polled.json]).toEqual([200, { done: true }]);
    // Give a redelivery time to show up, then check it never became a second run.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const detail = (await admin.admin('GET', `/bots/acme/invocations/${started.json.invocationId}`)).json;
    expect(detail).toMatchObject({ status: 'Completed', attempt: 1 });
    const logs = services.flatMap((s) => s.output);
    const recorded = logs.filter((line) => line.includes(started.json.invocationId) && line.includes('"invocation finished"'));
    expect(recorded).toHaveLength(1);
    // The scenario really happened: the broker closed a consumer channel for the late acknowledgement.
    expect(logs.some((line) => line.includes('delivery acknowledgement on channel') && line.includes('timed out'))).toBe(true);
  }, 120_000);
});
