import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { example } from './connectors';
import { distributedDeployment } from './distributed-env';
import type { ServiceProcess } from './service-process';

jest.setTimeout(120_000);

/** Sync calls offered per second: far below what one executor does here (hundreds), so neither config is saturated. */
const RATE = 40;
const SECONDS = 3;
/** Each config is measured this many times, alternating; the best of its runs counts (a busy machine slows some runs, not all). */
const ROUNDS = 3;

interface Latencies {
  p50: number;
  /** The tail: p90, not p99, which of 120 calls is their second slowest, and on a shared machine one stall decides it. */
  p90: number;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * "More executors never make sync calls slower": the same offered rate of sync calls, with one executor
 * and with two, alternating; two executors may not be slower than one beyond a margin for the machine's
 * noise (p50 and p90 at most 1.5 times one executor's, plus 5 ms).
 */
describe('sync call latency with one and with two executors, at the same offered rate', () => {
  const { dataDir, prefix, start } = distributedDeployment('scaling');
  const executorEnv = { EXECUTOR_CONCURRENCY: '8', SANDBOX_WORKERS: '1', LOG_LEVEL: 'info' };
  let control: ServiceProcess;
  let gateway: ServiceProcess;
  let first: ServiceProcess;
  let second: ServiceProcess | null = null;
  let token: string;

  beforeAll(async () => {
    control = await start('control');
    [gateway, first] = await Promise.all([start('gateway', [], { LOG_LEVEL: 'info' }), start('executor', ['--pools', 'default'], executorEnv)]);
    token = await new Api(control.baseUrl).setUp('acme', 'Order', 'ack', example('ack'));
  });

  afterAll(async () => {
    await Promise.all([control, gateway, first, second].filter((s): s is ServiceProcess => s !== null).map((s) => s.stop()));
    await deleteBusTopology(prefix, ['default'], 6);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Offers RATE sync calls a second for SECONDS (open loop: a slow answer does not slow the offer). */
  async function measure(): Promise<Latencies> {
    const api = new Api(gateway.baseUrl);
    const url = api.webhookUrl('acme', 'Order', 'ack');
    const calls: Array<Promise<number>> = [];
    const begun = Date.now();
    for (let i = 0; i < RATE * SECONDS; i++) {
      const due = begun + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const sent = performance.now();
      calls.push(
        api.postJson(url, token, { orderId: i }).then((reply) => {
          expect(reply.status).toBe(200);
          return performance.now() - sent;
        }),
      );
    }
    const sorted = (await Promise.all(calls)).sort((a, b) => a - b);
    return { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9) };
  }

  /**
   * A second executor, warmed like the first (its consumer attached, the connector compiled, its code
   * optimised): a cold process would measure its start, not the scaling.
   */
  async function startSecond(): Promise<ServiceProcess> {
    const started = await start('executor', ['--pools', 'default'], executorEnv);
    await measure();
    return started;
  }

  const best = (runs: Latencies[]): Latencies => ({ p50: Math.min(...runs.map((r) => r.p50)), p90: Math.min(...runs.map((r) => r.p90)) });

  it('answers sync calls no slower with two executors than with one', async () => {
    await measure(); // warm-up: compiled connector, connections, JIT
    const one: Latencies[] = [];
    const two: Latencies[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      one.push(await measure());
      second = await startSecond();
      two.push(await measure());
      await second.stop();
      second = null;
    }
    const [a, b] = [best(one), best(two)];
    const shown = (l: Latencies) => `p50 ${l.p50.toFixed(1)} ms, p90 ${l.p90.toFixed(1)} ms`;
    console.log(`sync calls at ${RATE}/s: 1 executor ${shown(a)}; 2 executors ${shown(b)} (runs: ${JSON.stringify({ one, two })})`);
    expect(b.p50).toBeLessThanOrEqual(1.5 * a.p50 + 5);
    expect(b.p90).toBeLessThanOrEqual(1.5 * a.p90 + 5);
  });
});
