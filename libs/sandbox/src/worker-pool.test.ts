import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQuickJsRuntime } from './quickjs-connector.runtime';
import { DEFAULT_RUN_LIMITS, resolveEnvironment } from './sandbox-environment';
import { MiB, WORKER_MEMORY_BUDGET_BYTES } from './sandbox-options';
import { WorkerPool } from './worker-pool';

// Both a request of the runtime (entity) and an input of the pool (entityJson).
const run = { cacheKey: 'pool', code: '', entity: null, entityJson: 'null', rawBody: null, timeoutMs: 200, limits: DEFAULT_RUN_LIMITS, allowedHosts: [] };

describe('worker thread pool', () => {
  it('keeps the main event loop running while a connector spins', async () => {
    const runtime = await createQuickJsRuntime({ workers: 1 });
    try {
      expect(runtime.isolation).toBe('worker-threads');
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      const started = Date.now();
      const result = await runtime.run({ ...run, cacheKey: 'spin', code: 'while (true) {}', timeoutMs: 500 });
      clearInterval(timer);
      expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
      // About 50 ticks in 500 ms; a blocked loop would see none until the run ends.
      expect(ticks).toBeGreaterThan(20);
      expect(Date.now() - started).toBeLessThan(3000);
      // The worker survives and takes the next run.
      expect(await runtime.run({ ...run, cacheKey: 'ok', code: 'Context.SetResponseEntity({ ResponseBody: 1 });' })).toMatchObject({ kind: 'ok', responseBody: 1 });
    } finally {
      await runtime.close();
    }
  });

  it('cancels a queued run before it starts and a running one at once, leaving the worker healthy', async () => {
    const runtime = await createQuickJsRuntime({ workers: 1 });
    try {
      const spinning = new AbortController();
      const queued = new AbortController();
      // The second run waits on the worker's thread behind the spinning one and is cancelled before it gets to run.
      const first = runtime.run({ ...run, cacheKey: 'spin', code: 'while (true) {}', timeoutMs: 60_000, signal: spinning.signal });
      const second = runtime.run({ ...run, cacheKey: 'log', code: 'Context.Log("ran"); while (true) {}', timeoutMs: 60_000, signal: queued.signal });
      queued.abort();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      spinning.abort();
      expect(await first).toMatchObject({ kind: 'failed', reason: 'cancelled' });
      expect(Date.now() - started).toBeLessThan(2000);
      const cancelledEarly = await second;
      expect(cancelledEarly).toMatchObject({ kind: 'failed', reason: 'cancelled' });
      expect(cancelledEarly.logs.map((l) => l.message)).not.toContain('ran');
      expect(await runtime.run({ ...run, cacheKey: 'ok', code: 'Context.SetResponseEntity({ ResponseBody: 2 });' })).toMatchObject({ kind: 'ok', responseBody: 2 });
    } finally {
      await runtime.close();
    }
  });

  it('runs connectors of two workers side by side', async () => {
    const runtime = await createQuickJsRuntime({ workers: 2 });
    try {
      const spin = 'const end = Date.now() + 300; while (Date.now() < end) {} Context.SetResponseEntity({ ResponseBody: 1 });';
      const started = Date.now();
      const results = await Promise.all([1, 2].map((i) => runtime.run({ ...run, cacheKey: `s${i}`, code: spin, timeoutMs: 5000 })));
      expect(results.map((r) => r.kind)).toEqual(['ok', 'ok']);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await runtime.close();
    }
  });

  describe('with a worker that stops answering', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'gi-sandbox-'));
      // Says it is ready, then never answers: what a worker stuck in native code looks like.
      writeFileSync(join(dir, 'stuck.js'), "require('node:worker_threads').parentPort.postMessage([{ kind: 'ready' }]); setInterval(() => {}, 1000);");
      writeFileSync(join(dir, 'broken.js'), "throw new Error('cannot start');");
      // Answers each run at once with how many runs its message carried; a run's code says how long it "took".
      writeFileSync(
        join(dir, 'counting.js'),
        `const { parentPort } = require('node:worker_threads');
        parentPort.postMessage([{ kind: 'ready' }]);
        parentPort.on('message', (messages) => {
          const runs = messages.filter((m) => m.kind === 'run');
          parentPort.postMessage(runs.map((m) => ({ kind: 'result', id: m.id, result: { kind: 'ok', responseJson: JSON.stringify({ body: runs.length }), logs: [], durationMs: Number(m.input.code) } })));
        });`,
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('terminates it after the time limit and a grace period, and replaces it', async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 1, runsPerWorker: 2, env, script: { kind: 'file', filename: join(dir, 'stuck.js') }, killGraceMs: 100 });
      try {
        const started = Date.now();
        const [late, neighbour] = await Promise.all([pool.run({ ...run, timeoutMs: 100 }), pool.run({ ...run, timeoutMs: 60_000 })]);
        expect(late).toMatchObject({ kind: 'failed', reason: 'timeout' });
        expect(late.logs.map((l) => l.message)).toContain('The run was stopped by force.');
        expect(neighbour).toMatchObject({ kind: 'failed', reason: 'threw' });
        expect(neighbour.kind === 'failed' && neighbour.message).toMatch(/restarted/);
        expect(Date.now() - started).toBeLessThan(3000);
        // The replacement worker takes runs again (and is stopped the same way).
        expect(await pool.run({ ...run, timeoutMs: 50 })).toMatchObject({ kind: 'failed', reason: 'timeout' });
      } finally {
        await pool.close();
      }
    });

    it('gives a worker no more runs than their memory limits allow together', async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 1, runsPerWorker: 16, env, script: { kind: 'file', filename: join(dir, 'stuck.js') }, killGraceMs: 100 });
      try {
        const big = { ...run, timeoutMs: 100, limits: { ...DEFAULT_RUN_LIMITS, memoryBytes: WORKER_MEMORY_BUDGET_BYTES / 2 + MiB } };
        const [first, second] = await Promise.all([pool.run(big), pool.run(big)]);
        // Side by side, the second would have failed with its worker ("restarted"); it waited and ran on the replacement.
        for (const result of [first, second]) {
          expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
          expect(result.logs.map((l) => l.message)).toContain('The run was stopped by force.');
        }
      } finally {
        await pool.close();
      }
    });

    it("sends a quick connector's runs started together in one message to one worker, and spreads a slow one's", async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 2, runsPerWorker: 16, env, script: { kind: 'file', filename: join(dir, 'counting.js') }, killGraceMs: 100 });
      try {
        // Until both workers answer: two runs of a slow connector then go one to each.
        for (let ready = false; !ready; ) {
          const probes = await Promise.all([1, 2].map(() => pool.run({ ...run, cacheKey: 'probe', code: '50' })));
          ready = probes.every((probe) => probe.kind === 'ok' && probe.responseJson === '{"body":1}');
        }
        const batchSizes = async (code: string) => {
          for (let i = 0; i < 3; i++) await pool.run({ ...run, cacheKey: code, code }); // its run times become known
          const results = await Promise.all(Array.from({ length: 6 }, () => pool.run({ ...run, cacheKey: code, code })));
          return results.map((result) => (result.kind === 'ok' ? JSON.parse(result.responseJson ?? '{}').body : result.kind));
        };
        expect(await batchSizes('0.1')).toEqual([6, 6, 6, 6, 6, 6]);
        expect(await batchSizes('50')).toEqual([3, 3, 3, 3, 3, 3]);
      } finally {
        await pool.close();
      }
    });

    it('gives up with a clear error when workers cannot start', async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 1, runsPerWorker: 1, env, script: { kind: 'file', filename: join(dir, 'broken.js') }, killGraceMs: 100 });
      try {
        const result = await pool.run({ ...run });
        expect(result).toMatchObject({ kind: 'failed', reason: 'threw' });
        expect(result.kind === 'failed' && result.message).toMatch(/sandbox workers cannot start.*cannot start/);
      } finally {
        await pool.close();
      }
    });
  });
});
