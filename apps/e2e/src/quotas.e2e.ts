import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import type { Reply } from './api-client';
import { busy, example, loops } from './connectors';
import { distributedDeployment } from './distributed-env';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('quotas set through the control API (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  beforeAll(async () => {
    service = await startService();
    api = new Api(service.baseUrl);
  });
  afterAll(() => service.dispose());

  const mint = async (botId: string) => {
    const minted = await api.admin('POST', `/bots/${botId}/tokens`, {});
    return { token: minted.json.token as string, tokenId: minted.json.tokenId as string };
  };

  it('answers 429 with Retry-After over a bot\'s rate while a neighbour bot keeps its normal latency', async () => {
    const noisy = await api.setUp('noisy', 'Order', 'ack', example('ack'));
    const quiet = await api.setUp('quiet', 'Order', 'ack', example('ack'));
    const set = await api.admin('PUT', '/bots/noisy/quotas', { ratePerSecond: 5, burst: 5 });
    // The in-flight quota left unset takes the service's default (BOT_MAX_IN_FLIGHT, 10,000).
    expect(set.json).toMatchObject({ botId: 'noisy', quotas: { ratePerSecond: 5, burst: 5, maxInFlight: null }, effective: { ratePerSecond: 5, burst: 5, maxInFlight: 10_000 } });

    const timeQuiet = async () => {
      const started = Date.now();
      const reply = await api.postJson(api.webhookUrl('quiet', 'Order', 'ack'), quiet, { orderId: 1 });
      expect(reply.status).toBe(200);
      return Date.now() - started;
    };
    const idle: number[] = [];
    for (let i = 0; i < 10; i++) idle.push(await timeQuiet());

    // The noisy bot sends without pause while the quiet one is measured.
    const noisyReplies: Reply[] = [];
    let hammering = true;
    const hammer = (async () => {
      while (hammering) {
        const batch = await Promise.all(Array.from({ length: 10 }, () => api.postJson(api.webhookUrl('noisy', 'Order', 'ack'), noisy, { orderId: 2 })));
        noisyReplies.push(...batch);
      }
    })();
    const throttled: number[] = [];
    for (let i = 0; i < 10; i++) throttled.push(await timeQuiet());
    hammering = false;
    await hammer;

    const limited = noisyReplies.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(noisyReplies.length / 2);
    expect(noisyReplies.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].headers.get('content-type')).toBe('application/problem+json');
    expect(limited[0].json).toEqual({
      type: 'urn:gi:problem:rate-limited',
      title: 'Too many requests',
      status: 429,
      detail: 'The rate limit of 5 calls per second for this bot was exceeded.',
      scope: 'bot',
      quota: 'ratePerSecond',
      limit: 5,
    });
    console.log(
      `neighbour sync latency: median ${median(idle)} ms alone, ${median(throttled)} ms while the noisy bot got ${limited.length} of ${noisyReplies.length} calls answered 429`,
    );
    // Served, not queued behind the throttled bot: only the shared CPU slows it.
    expect(median(throttled)).toBeLessThan(1000);
    const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/gi_quota_refusals_total\{scope="bot",quota="ratePerSecond"\} \d+/);
  });

  it('limits invocations in flight per token and per bot, and admits again once they finish', async () => {
    await api.setUp('busybot', 'Order', 'busy', busy);
    const [a, b, c] = [await mint('busybot'), await mint('busybot'), await mint('busybot')];
    expect((await api.admin('PUT', '/bots/busybot/quotas', { maxInFlight: 3 })).status).toBe(200);
    const tokenQuotas = await api.admin('PUT', `/bots/busybot/tokens/${a.tokenId}/quotas`, { maxInFlight: 1 });
    expect(tokenQuotas.json).toEqual({ botId: 'busybot', tokenId: a.tokenId, quotas: { ratePerSecond: null, burst: null, maxInFlight: 1 }, effective: { ratePerSecond: null, burst: null, maxInFlight: 1 } });
    const start = (token: string) => api.postJson(api.webhookUrl('busybot', 'Order', 'busy', 'asyncResponse=true&ms=3000'), token, {});

    const first = await start(a.token);
    expect(first.status).toBe(202);
    const second = await start(a.token);
    expect([second.status, second.headers.get('retry-after'), second.json.scope, second.json.quota]).toEqual([429, '1', 'token', 'maxInFlight']);
    expect(second.json.detail).toBe('This token already has 1 invocation in flight (queued or running), its limit; try again once one finishes.');
    expect((await start(b.token)).status).toBe(202);
    expect((await start(c.token)).status).toBe(202);
    const overBot = await start(c.token);
    expect([overBot.status, overBot.json.scope, overBot.json.detail]).toEqual([
      429,
      'bot',
      'This bot already has 3 invocations in flight (queued or running), its limit; try again once one finishes.',
    ]);

    expect((await api.poll('busybot', a.token, first.json.invocationId, 'waitSeconds=30')).status).toBe(200);
    // The gateway reads the count again before refusing once its read is 250 ms old: until then a call may
    // still be refused, as the token's quota and nothing else.
    let again = await start(a.token);
    for (const deadline = Date.now() + 5_000; again.status === 429 && Date.now() < deadline; again = await start(a.token)) {
      expect([again.json.scope, again.json.quota]).toEqual(['token', 'maxInFlight']);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again.status).toBe(202);
    const shown = await api.admin('GET', '/bots/busybot/quotas');
    expect(shown.json.tokens).toEqual([{ tokenId: a.tokenId, quotas: { ratePerSecond: null, burst: null, maxInFlight: 1 }, effective: { ratePerSecond: null, burst: null, maxInFlight: 1 } }]);
  });

  it('refuses bad quotas with 400 and quotas of an unknown token with 404', async () => {
    const bad = await api.admin('PUT', '/bots/noisy/quotas', { burst: 3, maxInFlight: 0, speed: 1 });
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { field: string }) => e.field).sort()).toEqual(['(body)', 'burst', 'maxInFlight']);
    const burstAlone = await api.admin('PUT', '/bots/noisy/quotas', { burst: 3 });
    expect([burstAlone.status, burstAlone.json.detail]).toEqual([400, 'burst: a burst needs a ratePerSecond']);
    expect((await api.admin('GET', '/bots/noisy/tokens/no-such-token/quotas')).status).toBe(404);
    // Back to the defaults: no rate limit, the default in-flight quota.
    const reset = await api.admin('PUT', '/bots/noisy/quotas', {});
    expect(reset.json.effective).toEqual({ ratePerSecond: null, burst: null, maxInFlight: 10_000 });
  });
});

/**
 * Two gateway processes over RabbitMQ sharing one store: each enforces half of the bot's quotas, so
 * together they hold the limit a single gateway would.
 */
describe('quotas across two gateways (RabbitMQ, separate processes)', () => {
  const { dataDir, prefix, start } = distributedDeployment('quotas');
  let processes: ServiceProcess[] = [];
  let gateways: ServiceProcess[];
  let control: ServiceProcess;
  let token: string;

  const peersOf = async (gateway: ServiceProcess) => Number(/gi_gateway_peers (\d+)/.exec(await (await fetch(`${gateway.baseUrl}/metrics`)).text())?.[1]);

  beforeAll(async () => {
    control = await start('control');
    gateways = await Promise.all([start('gateway'), start('gateway')]);
    processes = [control, ...gateways, await start('executor', ['--pools', 'default'])];
    const admin = new Api(control.baseUrl);
    token = await admin.setUp('acme', 'Order', 'ack', example('ack'));
    // Each gateway learns of the other at its next heartbeat (every 2 s).
    const deadline = Date.now() + 10_000;
    while ((await peersOf(gateways[0])) !== 2 || (await peersOf(gateways[1])) !== 2) {
      if (Date.now() > deadline) throw new Error('the gateways did not see each other');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await deleteBusTopology(prefix, ['default'], 6);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('holds a bot\'s rate across both gateways', async () => {
    const admin = new Api(control.baseUrl);
    // A burst of 10 and 1 call per second: alone, each gateway would let 10 through.
    // Set before either gateway's first call of the bot, which reads them (no cached quotas to outlive).
    expect((await admin.admin('PUT', '/bots/acme/quotas', { ratePerSecond: 1, burst: 10 })).status).toBe(200);
    const started = Date.now();
    const replies = await Promise.all(
      gateways.map((gateway) => {
        const api = new Api(gateway.baseUrl);
        return Promise.all(Array.from({ length: 20 }, () => api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, {})));
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const accepted = replies.map((perGateway) => perGateway.filter((r) => r.status === 202).length);
    console.log(`rate 1/s burst 10 over two gateways: accepted ${accepted.join(' + ')} of 2 x 20 in ${seconds.toFixed(1)} s`);
    expect(replies.flat().every((r) => r.status === 202 || r.status === 429)).toBe(true);
    // Each gateway: its burst of 5 plus what 0.5 calls per second refilled meanwhile.
    for (const n of accepted) {
      expect(n).toBeGreaterThanOrEqual(5);
      expect(n).toBeLessThanOrEqual(5 + Math.ceil(seconds / 2));
    }
    expect((await admin.admin('PUT', '/bots/acme/quotas', {})).status).toBe(200);
  });

  it('holds a bot\'s limit of invocations in flight across both gateways, within one call per extra gateway', async () => {
    const admin = new Api(control.baseUrl);
    // A bot of its own, its quota set before either gateway's first call of it, which reads it.
    const loopsToken = await admin.setUp('spinning', 'Order', 'loops', loops, { timeoutSeconds: 600 });
    expect((await admin.admin('PUT', '/bots/spinning/quotas', { maxInFlight: 4 })).status).toBe(200);
    const replies = await Promise.all(
      gateways.map((gateway) => {
        const api = new Api(gateway.baseUrl);
        return Promise.all(Array.from({ length: 5 }, () => api.postJson(api.webhookUrl('spinning', 'Order', 'loops', 'asyncResponse=true'), loopsToken, {})));
      }),
    );
    const accepted = replies.flat().filter((r) => r.status === 202);
    try {
      console.log(`maxInFlight 4 over two gateways: accepted ${replies.map((r) => r.filter((x) => x.status === 202).length).join(' + ')} of 2 x 5`);
      // Within one call per extra gateway either way: a gateway that reads the count after the other's
      // calls are stored splits what is left, so it may take one fewer than an even share.
      expect(accepted.length).toBeGreaterThanOrEqual(3);
      expect(accepted.length).toBeLessThanOrEqual(5);
      expect(replies.flat().filter((r) => r.status === 429).every((r) => r.json.quota === 'maxInFlight')).toBe(true);
    } finally {
      // The loops would otherwise keep the executor busy for ten minutes.
      for (const reply of accepted) expect((await admin.admin('DELETE', `/bots/spinning/invocations/${reply.json.invocationId}`)).status).toBe(200);
    }
  });
});
