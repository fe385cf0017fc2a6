import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Cancellation } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { DEFAULT_RUN_LIMITS, resolveEnvironment } from '../sandbox-environment';
import { MiB, WORKER_MEMORY_BUDGET_BYTES } from '../sandbox-options';
import { CODES_PER_THREAD } from './worker-code';
import { WorkerPool } from './worker-pool';

// Both a request of the runtime (entity) and an input of the pool (entityJson).
const run = { cacheKey: 'pool', code: '', entity: null, entityJson: 'null', rawBody: null, timeoutMs: 200, limits: DEFAULT_RUN_LIMITS, allowedHosts: [] };

// Each test starts sandbox threads, each loading QuickJS: seconds apiece on a busy machine.
jest.setTimeout(30_000);

/**
 * Runtimes opened by the current test, closed after it whatever happened: a test that ran out of time
 * leaves its runs going, and their messages must not reach the next test (which may spy on every
 * thread's messages) nor their threads outlive it.
 */
const opened = new Set<QuickJsConnectorRuntime>();
async function openRuntime(...args: Parameters<typeof createQuickJsRuntime>): Promise<QuickJsConnectorRuntime> {
  const runtime = await createQuickJsRuntime(...args);
  opened.add(runtime);
  return runtime;
}
afterEach(async () => {
  const runtimes = [...opened];
  opened.clear();
  await Promise.all(runtimes.map((runtime) => runtime.close()));
});

describe('worker thread pool', () => {
  it('keeps the main event loop running while a connector spins', async () => {
    const runtime = await openRuntime({ workers: 1 });
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
    const runtime = await openRuntime({ workers: 1 });
    try {
      const spinning = new Cancellation();
      const queued = new Cancellation();
      // The second run waits on the worker's thread behind the spinning one and is cancelled before it gets to run.
      const first = runtime.run({ ...run, cacheKey: 'spin', code: 'while (true) {}', timeoutMs: 60_000, cancel: spinning });
      const second = runtime.run({ ...run, cacheKey: 'log', code: 'Context.Log("ran"); while (true) {}', timeoutMs: 60_000, cancel: queued });
      queued.request();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      spinning.request();
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

  describe('closing', () => {
    /** How each sandbox thread ended while `body` went on: on its own (exit code 0) or terminated. */
    const endings = async (body: () => Promise<void>) => {
      const terminated = jest.spyOn(Worker.prototype, 'terminate');
      try {
        await body();
        return terminated.mock.calls.length;
      } finally {
        terminated.mockRestore();
      }
    };

    /** A run that spins on its thread once it has started there (its progress tells when). */
    const spinOnThread = (runtime: QuickJsConnectorRuntime, cancel?: Cancellation) => {
      let onThread!: () => void;
      const started = new Promise<void>((resolve) => (onThread = resolve));
      const result = runtime.run({ ...run, cacheKey: 'spin', code: 'Context.SetProgress(1); while (true) {}', timeoutMs: 60_000, cancel, onProgress: () => onThread() });
      return { started, result };
    };

    it('lets every thread end on its own: idle, after runs that left work behind, with a cancellable run spinning', async () => {
      const runtime = await openRuntime({ workers: 2 });
      const terminations = await endings(async () => {
        const leftBehind = `for (let i = 0; i < 4; i++) crypto.subtle.digest('SHA-256', new Uint8Array(1 << 20)); Context.SetResponseEntity({ ResponseBody: 1 });`;
        expect(await runtime.run({ ...run, cacheKey: 'left', code: leftBehind, timeoutMs: 5000 })).toMatchObject({ kind: 'ok' });
        const spinning = spinOnThread(runtime, new Cancellation());
        await spinning.started;
        // Not terminated (counted below): it ended on its own before the grace period ran out.
        await runtime.close();
        expect(await spinning.result).toMatchObject({ kind: 'failed', message: expect.stringMatching(/closed during the run/) });
      });
      expect(terminations).toBe(0);
    });

    it('terminates a thread that does not end on its own in time: a run that cannot be cancelled spins there', async () => {
      const runtime = await openRuntime({ workers: 1 });
      const terminations = await endings(async () => {
        const spinning = spinOnThread(runtime);
        await spinning.started;
        await runtime.close();
        expect(await spinning.result).toMatchObject({ kind: 'failed', message: expect.stringMatching(/closed during the run/) });
      });
      expect(terminations).toBe(1);
    });
  });

  it('runs connectors of two workers side by side', async () => {
    const runtime = await openRuntime({ workers: 2 });
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

  describe('fairness', () => {
    /** Computes for `ms` without waiting on the host: its thread is held the whole time. */
    const computing = (ms: number) => `const end = Date.now() + ${ms}; while (Date.now() < end) {} Context.SetResponseEntity({ ResponseBody: ${ms} });`;
    const quick = 'Context.SetResponseEntity({ ResponseBody: 0 });';
    /** Until two runs started together go one to each thread: both threads have started. */
    async function bothThreadsReady(runtime: QuickJsConnectorRuntime): Promise<void> {
      for (let spread = false; !spread; ) {
        const runs = [1, 2].map((i) => runtime.run({ ...run, cacheKey: `warm${i}`, code: computing(50), timeoutMs: 5000 }));
        spread = runtime.load().busyThreads === 2;
        await Promise.all(runs);
      }
    }

    it('sends each result back as its run ends: four 1.5 s runs on two threads, the first done in about 1.5 s', async () => {
      const runtime = await openRuntime({ workers: 2 });
      try {
        await bothThreadsReady(runtime);
        const started = performance.now();
        const ended: number[] = [];
        const results = await Promise.all(
          [1, 2, 3, 4].map((i) =>
            runtime.run({ ...run, cacheKey: `long${i}`, code: computing(1500), timeoutMs: 20_000 }).then((result) => {
              ended.push(performance.now() - started);
              return result;
            }),
          ),
        );
        expect(results.map((r) => r.kind)).toEqual(['ok', 'ok', 'ok', 'ok']);
        // Held for the run after it on the same thread, the first result would come at about 3 s.
        expect(ended[0]).toBeGreaterThan(1400);
        expect(ended[0]).toBeLessThan(2400);
        expect(ended[3]).toBeGreaterThan(2900);
        expect(ended[3]).toBeLessThan(5000);
      } finally {
        await runtime.close();
      }
    }, 20_000);

    it('runs a quick connector on the free thread while the other one computes a long run', async () => {
      const runtime = await openRuntime({ workers: 2 });
      try {
        await bothThreadsReady(runtime);
        // The first thread computes 3 s; the second runs one 300 ms run, then is free.
        const long = runtime.run({ ...run, cacheKey: 'long', code: computing(3000), timeoutMs: 20_000 });
        const medium = runtime.run({ ...run, cacheKey: 'medium', code: computing(300), timeoutMs: 20_000 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        // Both threads hold a run now; a quick one waits for the first free thread, not behind the long run.
        const started = performance.now();
        expect(await runtime.run({ ...run, cacheKey: 'quick', code: quick, timeoutMs: 5000 })).toMatchObject({ kind: 'ok' });
        expect(performance.now() - started).toBeLessThan(1500);
        expect((await medium).kind).toBe('ok');
        expect((await long).kind).toBe('ok');
      } finally {
        await runtime.close();
      }
    }, 20_000);

    it("takes waiting runs in turns between tenants: another tenant's run goes next, not after a backlog", async () => {
      const runtime = await openRuntime({ workers: 1 });
      try {
        const ended: string[] = [];
        const runOf = (tenant: string, i: number) =>
          runtime.run({ ...run, tenant, cacheKey: `${tenant}/c`, code: computing(200), timeoutMs: 20_000 }).then((result) => {
            ended.push(`${tenant}${i}`);
            return result;
          });
        const backlog = [0, 1, 2, 3, 4, 5].map((i) => runOf('a', i));
        const other = runOf('b', 0);
        expect((await other).kind).toBe('ok');
        // One of A's runs held the thread; B's went next, not after A's five others.
        expect(ended).toEqual(['a0', 'b0']);
        await Promise.all(backlog);
        expect(ended).toEqual(['a0', 'b0', 'a1', 'a2', 'a3', 'a4', 'a5']);
      } finally {
        await runtime.close();
      }
    }, 20_000);

    it("holds a tenant to its share of the threads' runs, so runs waiting on the host leave room for the others", async () => {
      // One thread holds 16 runs; a tenant gets half of them.
      const runtime = await openRuntime({ workers: 1, tenantSharePercent: 50 });
      try {
        const waits = { ...run, tenant: 'a', cacheKey: 'a/waits', code: 'await new Promise((resolve) => setTimeout(resolve, 1500)); Context.SetResponseEntity({ ResponseBody: 1 });', timeoutMs: 20_000 };
        // More than the thread holds: without the share, 16 of them would fill it and the others wait in front of B's.
        const backlog = Array.from({ length: 20 }, () => runtime.run(waits));
        while (runtime.load().running < 8) await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(runtime.load()).toMatchObject({ running: 8, queued: 12 });
        const started = performance.now();
        expect(await runtime.run({ ...run, tenant: 'b', cacheKey: 'b/quick', code: quick, timeoutMs: 5000 })).toMatchObject({ kind: 'ok' });
        // Not after the first of A's 1.5 s waits.
        expect(performance.now() - started).toBeLessThan(1000);
        expect((await Promise.all(backlog)).map((r) => r.kind)).toEqual(Array(20).fill('ok'));
      } finally {
        await runtime.close();
      }
    }, 30_000);

    it('sends a quick result back at once when the run handed over after it on its thread turns out long', async () => {
      const runtime = await openRuntime({ workers: 1 });
      try {
        // Quick until an entity asks for 1.5 s: its runs are known quick, so two go to the thread together.
        const varies = { ...run, cacheKey: 'varies', code: 'const entity = Context.GetRequestEntity(); if (entity && entity.RequestBody.long) { const end = Date.now() + 1500; while (Date.now() < end) {} } Context.SetResponseEntity({ ResponseBody: 1 });', timeoutMs: 20_000 };
        for (let i = 0; i < 5; i++) await runtime.run(varies);
        const started = performance.now();
        const first = runtime.run(varies).then(() => performance.now() - started);
        const long = runtime.run({ ...varies, entity: { RequestParams: '', RequestHeaders: '', RequestBody: { long: true }, ResponseBody: null } });
        expect(await first).toBeLessThan(1000);
        expect((await long).kind).toBe('ok');
      } finally {
        await runtime.close();
      }
    }, 20_000);
  });

  /** The run messages posted to sandbox threads while `body` goes on; `edit` may change each before it is posted. */
  const runMessages = async (body: () => Promise<void>, edit: (message: Record<string, unknown>) => void = () => undefined) => {
    const posted: Array<Record<string, unknown>> = [];
    const original = Worker.prototype.postMessage;
    const spy = jest.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, messages: unknown, transfer?: Parameters<Worker['postMessage']>[1]) {
      for (const message of messages as Array<Record<string, unknown>>) {
        if (message.kind !== 'run' && message.kind !== 'code') continue;
        edit(message);
        posted.push({ ...message });
      }
      return original.call(this, messages, transfer);
    });
    try {
      await body();
    } finally {
      spy.mockRestore();
    }
    return posted;
  };
  describe("a request's raw body", () => {
    it('crosses to the thread once when it lies in the entity as sent, and reads as sent', async () => {
      const runtime = await openRuntime({ workers: 1 });
      try {
        const sent = `{ "orderId" : 7.0, "lines": [${'1, '.repeat(2000)}2] }`;
        const entityJson = `{"RequestParams":"","RequestHeaders":"","RequestBody":${sent},"ResponseBody":null}`;
        const code = `Context.SetResponseEntity({ ResponseBody: Context.GetRawRequestBody() === ${JSON.stringify(sent)} });`;
        const posted = await runMessages(async () => {
          expect(await runtime.run({ ...run, cacheKey: 'acme/raw@1', code, entityJson, rawBody: sent })).toMatchObject({ kind: 'ok', responseBody: true });
          expect(await runtime.run({ ...run, cacheKey: 'acme/raw@1', code, entityJson: '{"RequestBody":{"a":"1"}}', rawBody: sent })).toMatchObject({ kind: 'ok', responseBody: true });
        });
        const inputs = posted.map((m) => m.input as { rawBody: string | null; rawBodySpan: unknown });
        expect(inputs.map((input) => [input.rawBody, input.rawBodySpan])).toEqual([
          [null, [entityJson.indexOf(sent), entityJson.indexOf(sent) + sent.length]],
          [sent, null],
        ]);
      } finally {
        await runtime.close();
      }
    });
  });

  describe("a connector's code", () => {
    const reply = (n: number) => `Context.SetResponseEntity({ ResponseBody: ${n} });`;

    it('crosses to a thread with its first run only, and again when its cache key comes back with other code', async () => {
      const runtime = await openRuntime({ workers: 1 });
      try {
        // A bundle of a few hundred kilobytes, as a packaged TypeScript connector is.
        const bundle = `${'// a long bundle\n'.repeat(20_000)}${reply(1)}`;
        const posted = await runMessages(async () => {
          for (let i = 0; i < 3; i++) expect(await runtime.run({ ...run, cacheKey: 'acme/orders@1', code: bundle })).toMatchObject({ kind: 'ok', responseBody: 1 });
          expect(await runtime.run({ ...run, cacheKey: 'acme/orders@1', code: reply(2) })).toMatchObject({ kind: 'ok', responseBody: 2 });
          expect(await runtime.run({ ...run, cacheKey: 'acme/orders@1', code: reply(2) })).toMatchObject({ kind: 'ok', responseBody: 2 });
        });
        expect(posted.map((m) => m.code)).toEqual([bundle, undefined, undefined, reply(2), undefined]);
        expect(new Set(posted.map((m) => m.codeId)).size).toBe(2);
      } finally {
        await runtime.close();
      }
    });

    it('runs as sent when more connectors ran on the thread than it keeps codes of', async () => {
      const runtime = await openRuntime({ workers: 1 });
      try {
        const keys = Array.from({ length: CODES_PER_THREAD + 8 }, (_, i) => i);
        for (const round of [1, 2]) {
          for (const i of keys) expect(await runtime.run({ ...run, cacheKey: `bot/c${i}@1`, code: reply(i * round) })).toMatchObject({ kind: 'ok', responseBody: i * round });
        }
      } finally {
        await runtime.close();
      }
      // 80 runs, each compiling its code on the thread (the evicted ones again): seconds on a busy machine.
    }, 60_000);

    it('is asked for by a thread that lacks it, and the run then runs it', async () => {
      const runtime = await openRuntime({ workers: 1 });
      try {
        let dropped = 0;
        // The first run's message loses its code's text on the way: the pool still believes it sent it.
        const posted = await runMessages(
          async () => {
            expect(await runtime.run({ ...run, cacheKey: 'acme/lost@1', code: reply(7) })).toMatchObject({ kind: 'ok', responseBody: 7 });
            expect(await runtime.run({ ...run, cacheKey: 'acme/lost@1', code: reply(7) })).toMatchObject({ kind: 'ok', responseBody: 7 });
          },
          (message) => {
            if (message.kind === 'run' && message.code !== undefined && dropped++ === 0) delete message.code;
          },
        );
        expect(posted.map((m) => [m.kind, m.code])).toEqual([
          ['run', undefined],
          ['code', reply(7)],
          ['run', undefined],
        ]);
      } finally {
        await runtime.close();
      }
    });
  });

  describe('with a worker that stops answering', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'gi-sandbox-'));
      // Says it is ready, then never answers: what a worker stuck in native code looks like.
      writeFileSync(join(dir, 'stuck.js'), "require('node:worker_threads').parentPort.postMessage([{ kind: 'ready' }]); setInterval(() => {}, 1000);");
      // Says each run waits on the host, so the pool hands it more, then never answers.
      writeFileSync(
        join(dir, 'parked.js'),
        `const { parentPort } = require('node:worker_threads');
        parentPort.postMessage([{ kind: 'ready' }]);
        parentPort.on('message', (messages) => parentPort.postMessage(messages.filter((m) => m.kind === 'run').map((m) => ({ kind: 'waiting', id: m.id }))));`,
      );
      writeFileSync(join(dir, 'broken.js'), "throw new Error('cannot start');");
      // Answers each run at once with how many runs its message carried; a run's cache key says how long it "took".
      writeFileSync(
        join(dir, 'counting.js'),
        `const { parentPort } = require('node:worker_threads');
        parentPort.postMessage([{ kind: 'ready' }]);
        parentPort.on('message', (messages) => {
          const runs = messages.filter((m) => m.kind === 'run');
          parentPort.postMessage(runs.map((m) => ({ kind: 'result', id: m.id, result: { kind: 'ok', responseJson: JSON.stringify({ body: runs.length }), logs: [], durationMs: Number(m.input.cacheKey) } })));
        });`,
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('terminates it after the time limit and a grace period, and replaces it', async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 1, runsPerWorker: 2, env, script: { kind: 'file', filename: join(dir, 'parked.js') }, killGraceMs: 100 });
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

    it('keeps a run off a thread that computes, and starts it on the replacement of that thread once it is stopped', async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 1, runsPerWorker: 16, env, script: { kind: 'file', filename: join(dir, 'stuck.js') }, killGraceMs: 100 });
      try {
        const [first, second] = await Promise.all([pool.run({ ...run, timeoutMs: 100 }), pool.run({ ...run, timeoutMs: 100 })]);
        // Queued on the stuck thread, the second would have failed with it ("restarted"); it got a thread of its own.
        for (const result of [first, second]) {
          expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
          expect(result.logs.map((l) => l.message)).toContain('The run was stopped by force.');
        }
      } finally {
        await pool.close();
      }
    });

    it('gives a worker no more runs than their memory limits allow together', async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 1, runsPerWorker: 16, env, script: { kind: 'file', filename: join(dir, 'parked.js') }, killGraceMs: 100 });
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

    it("spreads a quick connector's runs started together over the threads, several in one message, and hands a slow one's to free threads one by one", async () => {
      const env = resolveEnvironment({}, true);
      const pool = new WorkerPool({ size: 2, runsPerWorker: 16, env, script: { kind: 'file', filename: join(dir, 'counting.js') }, killGraceMs: 100 });
      try {
        // Until both workers are ready: two runs of a slow connector then go one to each.
        for (let ready = false; !ready; ) {
          const probes = [1, 2].map(() => pool.run({ ...run, cacheKey: 'probe', code: '50' }));
          ready = pool.load().busyThreads === 2;
          await Promise.all(probes);
        }
        const batchSizes = async (code: string) => {
          for (let i = 0; i < 3; i++) await pool.run({ ...run, cacheKey: code, code }); // its run times become known
          const results = await Promise.all(Array.from({ length: 6 }, () => pool.run({ ...run, cacheKey: code, code })));
          return results.map((result) => (result.kind === 'ok' ? JSON.parse(result.responseJson ?? '{}').body : result.kind));
        };
        expect(await batchSizes('0.1')).toEqual([3, 3, 3, 3, 3, 3]);
        // No run queues on a thread behind a slow one: each waits for a thread to be free.
        expect(await batchSizes('50')).toEqual([1, 1, 1, 1, 1, 1]);
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
