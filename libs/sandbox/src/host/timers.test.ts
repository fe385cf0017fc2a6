import type { ConnectorRunRequest } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { MAX_TIMERS } from './timer-queue';

describe.each([
  ['in-process', 0],
  ['on a worker thread', 1],
])('timers (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  let key = 0;
  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: `bot/timers@${++key}`, code, entity: null, timeoutMs: 5000, allowedHosts: [], ...extra });
  const answer = (code: string) => `Context.SetResponseEntity({ ResponseBody: await (async () => { ${code} })() });`;

  it('fires timeouts in order of due time, then of setting, each after the microtasks of the one before', async () => {
    const result = await run(
      answer(`
        const order = [];
        await new Promise((done) => {
          // Delays far apart: on a loaded machine the calls themselves may be milliseconds apart.
          setTimeout(() => order.push('b'), 200);
          setTimeout(() => { order.push('a1'); Promise.resolve().then(() => order.push('a1 microtask')); }, 50);
          setTimeout(() => order.push('a2'), 50);
          setTimeout(() => order.push('zero'), 0);
          queueMicrotask(() => order.push('microtask'));
          setTimeout(done, 400);
        });
        return order;`),
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: ['microtask', 'zero', 'a1', 'a1 microtask', 'a2', 'b'] });
  });

  it('passes extra arguments, clears timeouts and intervals, and repeats intervals', async () => {
    const result = await run(
      answer(`
        const seen = [];
        const cleared = setTimeout(() => seen.push('cleared'), 5);
        clearTimeout(cleared);
        clearTimeout(12345); clearTimeout(undefined); clearInterval('x');
        let ticks = 0;
        await new Promise((done) => {
          const interval = setInterval((a, b) => { ticks++; if (ticks === 3) { clearInterval(interval); setTimeout(done, 20, a + b); } }, 2, 'x', 'y');
        });
        return { seen, ticks, ids: typeof setTimeout(() => {}, 1) };`),
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: { seen: [], ticks: 3, ids: 'number' } });
  });

  it('waits without counting the wait as CPU time', async () => {
    const started = Date.now();
    const result = await run(`await new Promise((r) => setTimeout(r, 1500)); Context.SetResponseEntity({ ResponseBody: 'slept' });`, { limits: { cpuMs: 1000 } });
    expect(result).toMatchObject({ kind: 'ok', responseBody: 'slept' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });

  it('counts the wait as wall time: a timer past the deadline ends the run at the deadline', async () => {
    const started = Date.now();
    const result = await run(`await new Promise((r) => setTimeout(r, 60_000));`, { timeoutMs: 300 });
    expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('ends the run when the connector settles: pending timers are dropped and never fire into a later run', async () => {
    const code = `
      const entity = Context.GetRequestEntity();
      if (entity.RequestBody.first) { setTimeout(() => Context.Log('late'), 50); setInterval(() => Context.Log('tick'), 1); return; }
      await new Promise((r) => setTimeout(r, 150));`;
    const request = { cacheKey: 'bot/leak@1', code, timeoutMs: 2000, allowedHosts: [] };
    const first = await runtime.run({ ...request, entity: { RequestParams: '', RequestHeaders: '', RequestBody: { first: true }, ResponseBody: null } });
    expect(first).toMatchObject({ kind: 'ok' });
    const second = await runtime.run({ ...request, entity: { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null } });
    expect(second).toMatchObject({ kind: 'ok' });
    expect([...first.logs, ...second.logs].map((line) => line.message)).not.toContain('late');
    expect(second.logs.map((line) => line.message)).toEqual([]);
  });

  it('fails the run with an error a timer callback throws', async () => {
    const result = await run(`setTimeout(() => { throw new RangeError('bad tick'); }, 1); await new Promise((r) => setTimeout(r, 100));`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught error in a timer callback: RangeError: bad tick/) });
  });

  it('fails the run with an error a queueMicrotask callback throws', async () => {
    const result = await run(`queueMicrotask(() => { throw new Error('bad microtask'); }); await new Promise((r) => setTimeout(r, 50));`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught error in a queueMicrotask callback: Error: bad microtask/) });
  });

  it('refuses code strings and non-functions', async () => {
    const result = await run(answer(`const errors = []; for (const f of [() => setTimeout('1+1', 1), () => setInterval(null), () => queueMicrotask(1)]) { try { f(); } catch (e) { errors.push(e instanceof TypeError); } } return errors;`));
    expect(result).toMatchObject({ kind: 'ok', responseBody: [true, true, true] });
  });

  it(`ends the run when it sets more than ${MAX_TIMERS} timers at once`, async () => {
    const result = await run(`for (let i = 0; ; i++) setTimeout(() => {}, 100_000);`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/more than 10000 timers/) });
  });

  it('keeps a loop of set and cleared timers within bounds', async () => {
    const result = await run(answer(`for (let i = 0; i < 50_000; i++) clearTimeout(setTimeout(() => {}, 10)); return 'done';`));
    expect(result).toMatchObject({ kind: 'ok', responseBody: 'done' });
  });

  it('gives performance.now() from the start of the run, and a time origin', async () => {
    const result = await run(answer(`const a = performance.now(); await new Promise((r) => setTimeout(r, 30)); const b = performance.now(); return [a >= 0 && a < 1000, b - a >= 25, Math.abs(performance.timeOrigin - Date.now()) < 5000];`));
    expect(result).toMatchObject({ kind: 'ok', responseBody: [true, true, true] });
  });
});
