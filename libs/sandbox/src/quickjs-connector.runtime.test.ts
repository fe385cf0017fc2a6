import type { ConnectorRunRequest, Progress, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from './quickjs-connector.runtime';

const entity = (body: unknown = { orderId: 42 }): WebhookEntity => ({
  RequestParams: 'a=1',
  RequestHeaders: 'Content-Type=application%2Fjson',
  RequestBody: body,
  ResponseBody: null,
});

const STANDARD_SNIPPET = `
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
entity.ResponseBody = { Status: "Accepted", Message: \`order \${entity.RequestBody.orderId}\` };
Context.SetResponseEntity(entity);
`;

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('QuickJS connector runtime (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ maxLogBytes: 200, maxResponseBytes: 1000, workers });
    expect(runtime.isolation).toBe(workers ? 'worker-threads' : 'in-process');
  });
  afterAll(() => runtime.close());

  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: 'bot/int@1', code, entity: entity(), timeoutMs: 2000, allowedHosts: [], ...extra });

  describe('the standard snippet', () => {
    it('acknowledges with the order id', async () => {
      const result = await run(STANDARD_SNIPPET);
      expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Accepted', Message: 'order 42' } });
      expect(result.durationMs).toBeGreaterThanOrEqual(0);
    });

    it('raises "Missing entity" when the request entity is null, and stops there', async () => {
      const result = await run(STANDARD_SNIPPET, { entity: null });
      expect(result).toMatchObject({ kind: 'raised', title: 'Missing entity', message: 'The request entity is null' });
    });
  });

  describe('Context', () => {
    it('returns the same entity object on every call within a run', async () => {
      const result = await run('return; ', {});
      expect(result.kind).toBe('ok');
      const same = await run('Context.SetResponseEntity({ ResponseBody: Context.GetRequestEntity() === Context.GetRequestEntity() });');
      expect(same).toMatchObject({ kind: 'ok', responseBody: true });
    });

    it('counts mutations of the request entity without SetResponseEntity', async () => {
      const result = await run('Context.GetRequestEntity().ResponseBody = { done: true };');
      expect(result).toMatchObject({ kind: 'ok', responseBody: { done: true } });
    });

    it('prefers the entity given to SetResponseEntity, read when the run ends', async () => {
      const code = `
        const e = { ResponseBody: { n: 1 } };
        Context.GetRequestEntity().ResponseBody = 'ignored';
        Context.SetResponseEntity(e);
        e.ResponseBody.n = 2;`;
      expect(await run(code)).toMatchObject({ kind: 'ok', responseBody: { n: 2 } });
    });

    it('gives the request entity ResponseBody when the connector touches nothing', async () => {
      expect(await run('1 + 1;', { entity: { ...entity(), ResponseBody: 'preset' } })).toMatchObject({ kind: 'ok', responseBody: 'preset' });
      expect(await run('1 + 1;', { entity: null })).toMatchObject({ kind: 'ok', responseBody: undefined });
    });

    it('hands the connector a copy: the host entity is never changed', async () => {
      const original = entity();
      await run('Context.GetRequestEntity().RequestBody.orderId = 7;', { entity: original });
      expect(original.RequestBody).toEqual({ orderId: 42 });
    });

    it('refuses a SetResponseEntity argument that is not an object', async () => {
      const result = await run('Context.SetResponseEntity("text");');
      expect(result).toMatchObject({ kind: 'failed', reason: 'threw' });
      expect(result.kind === 'failed' && result.message).toMatch(/SetResponseEntity expects the entity object.*\(line 1, column \d+\)/);
    });

    it('supports top-level await and return', async () => {
      const code = `
        const value = await new Promise((resolve) => resolve(5));
        Context.SetResponseEntity({ ResponseBody: { value } });
        return;
        Context.SetResponseEntity({ ResponseBody: 'not reached' });`;
      expect(await run(code)).toMatchObject({ kind: 'ok', responseBody: { value: 5 } });
    });

    it('RaiseError stops the following statements', async () => {
      const code = `
        Context.RaiseError('Bad input', 'orderId is missing');
        Context.Log('not reached');
        Context.SetResponseEntity({ ResponseBody: 'not reached' });`;
      const result = await run(code);
      expect(result).toMatchObject({ kind: 'raised', title: 'Bad input', message: 'orderId is missing' });
      expect(result.logs.map((l) => l.message)).not.toContain('not reached');
    });

    it('RaiseError still ends the run when the connector catches it', async () => {
      const code = `
        try { Context.RaiseError('Caught', 'still raised'); } catch (e) {}
        Context.SetResponseEntity({ ResponseBody: 'after catch' });`;
      expect(await run(code)).toMatchObject({ kind: 'raised', title: 'Caught', message: 'still raised' });
    });

    it('captures Log and console.log lines, objects as JSON', async () => {
      const result = await run(`Context.Log('hello', { a: 1 }, [2], 3); console.log('via console'); console.error('bad');`);
      expect(result.logs.map(({ level, message }) => ({ level, message }))).toEqual([
        { level: 'info', message: 'hello {"a":1} [2] 3' },
        { level: 'info', message: 'via console' },
        { level: 'error', message: 'bad' },
      ]);
      expect(typeof result.logs[0].at).toBe('number');
    });

    it('caps the log volume with a final "log truncated" line', async () => {
      const result = await run(`for (let i = 0; i < 100; i++) Context.Log('line ' + i + ' ' + 'x'.repeat(20));`);
      expect(result.kind).toBe('ok');
      const total = result.logs.slice(0, -1).reduce((n, l) => n + Buffer.byteLength(l.message), 0);
      expect(total).toBeLessThanOrEqual(200);
      expect(result.logs[result.logs.length - 1].message).toMatch(/Log truncated/);
    });

    it('reports progress through onProgress', async () => {
      const seen: Progress[] = [];
      const result = await run(`Context.SetProgress(10, 'started'); Context.SetProgress(150); Context.SetProgress(50, { step: 2 });`, {
        onProgress: (p) => seen.push(p),
      });
      expect(result.kind).toBe('ok');
      expect(seen).toEqual([{ percent: 10, message: 'started' }, { percent: 100 }, { percent: 50, message: '{"step":2}' }]);
    });

    it('survives an onProgress listener that throws', async () => {
      const result = await run(`Context.SetProgress(10);`, {
        onProgress: () => {
          throw new Error('listener broke');
        },
      });
      expect(result.kind).toBe('ok');
    });
  });

  describe('failures', () => {
    it('reports a thrown error with its line, and logs it at level error', async () => {
      const result = await run(`const a = 1;\nconst b = null;\nb.field;`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'threw' });
      expect(result.kind === 'failed' && result.message).toBe("TypeError: cannot read property 'field' of null (line 3, column 2)");
      expect(result.logs).toContainEqual(expect.objectContaining({ level: 'error', message: expect.stringContaining('TypeError') }));
    });

    it('reports a thrown non-error value', async () => {
      const result = await run(`throw { code: 7 };`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: 'Uncaught {"code":7}' });
    });

    it('reports a syntax error with its line', async () => {
      const result = await run(`const a = 1;\nconst = 2;`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'threw' });
      expect(result.kind === 'failed' && result.message).toMatch(/^SyntaxError: .*\(line 2, column \d+\)$/);
    });

    it('ends an infinite loop at the time limit', async () => {
      const started = Date.now();
      const result = await run('while (true) {}', { timeoutMs: 100 });
      expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('does not start a run that is cancelled already', async () => {
      const controller = new AbortController();
      controller.abort();
      const result = await run('Context.Log("ran"); Context.SetResponseEntity({ ResponseBody: 1 });', { signal: controller.signal });
      expect(result).toMatchObject({ kind: 'failed', reason: 'cancelled' });
      expect(result.logs.map((l) => l.message)).not.toContain('ran');
    });

    it('ends an infinite loop even when the connector catches everything', async () => {
      const result = await run('for (;;) { try { while (true) {} } catch (e) {} }', { timeoutMs: 100 });
      expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
    });

    it('ends at once a run that waits on a promise nothing can settle', async () => {
      const started = Date.now();
      const result = await run('await new Promise(() => {});', { timeoutMs: 10_000 });
      expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
      expect(result.kind === 'failed' && result.message).toMatch(/can never settle/);
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('stops a microtask flood at the time limit', async () => {
      const result = await run('const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});', { timeoutMs: 200 });
      expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
    });

    it('stops a memory bomb at the memory limit', async () => {
      const result = await run('const a = []; while (true) a.push({ i: a.length, s: "x" + a.length });', { timeoutMs: 20_000 });
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit' });
      expect(result.kind === 'failed' && result.message).toMatch(/memory limit of 64 MiB/);
    });

    it('stops deep recursion', async () => {
      const result = await run('const f = (n) => f(n + 1) + 1; f(0);');
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit' });
      expect(result.kind === 'failed' && result.message).toMatch(/stack overflow/);
    });

    it('refuses a ResponseBody larger than the limit', async () => {
      const result = await run(`Context.SetResponseEntity({ ResponseBody: 'x'.repeat(5000) });`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit' });
    });

    it('reports a ResponseBody that is not JSON', async () => {
      const result = await run(`const o = {}; o.self = o; Context.SetResponseEntity({ ResponseBody: o });`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'threw' });
      expect(result.kind === 'failed' && result.message).toMatch(/^The ResponseBody cannot be sent: TypeError/);
    });
  });

  describe('isolation', () => {
    it('keeps nothing of one run for the next', async () => {
      await run('globalThis.leak = 1; Object.prototype.polluted = true; Context.Log = null;');
      const result = await run(
        `Context.SetResponseEntity({ ResponseBody: [typeof leak, ({}).polluted === undefined, typeof Context.Log] });`,
      );
      expect(result).toMatchObject({ kind: 'ok', responseBody: ['undefined', true, 'function'] });
    });

    it('has no require, process, import(), fetch or host objects', async () => {
      const code = `
        let importResult;
        try { await import('fs'); importResult = 'loaded'; } catch (e) { importResult = 'refused'; }
        const escape = (() => { try { return this.constructor.constructor('return typeof process')(); } catch (e) { return 'threw'; } })();
        Context.SetResponseEntity({ ResponseBody: {
          require: typeof require, process: typeof process, fetch: typeof fetch, Buffer: typeof Buffer,
          importResult, escape, globals: Object.getOwnPropertyNames(globalThis).filter((n) => !/^[A-Z]/.test(n)).sort(),
        } });`;
      const result = await run(code);
      expect(result).toMatchObject({
        kind: 'ok',
        responseBody: { require: 'undefined', process: 'undefined', fetch: 'undefined', Buffer: 'undefined', importResult: 'refused', escape: 'undefined' },
      });
      const globals = (result as { responseBody: { globals: string[] } }).responseBody.globals;
      expect(globals).toEqual(
        ['console', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN', 'parseFloat', 'parseInt', 'undefined', 'unescape'].sort(),
      );
    });

    it('drops __proto__ keys from the returned body', async () => {
      const result = await run(`Context.SetResponseEntity({ ResponseBody: JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') });`);
      expect(result).toMatchObject({ kind: 'ok', responseBody: { ok: 1 } });
      const body = (result as { responseBody: object }).responseBody;
      expect(Object.getOwnPropertyNames(body)).toEqual(['ok']);
      expect((Object.getPrototypeOf(body) as { polluted?: boolean }).polluted).toBeUndefined();
      expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    });
  });

  describe('compile', () => {
    it('accepts code that compiles, including top-level await and return', () => {
      expect(runtime.compile(STANDARD_SNIPPET)).toEqual({ ok: true });
      expect(runtime.compile('await null; return 1;')).toEqual({ ok: true });
    });

    it("gives line and column in the author's code", () => {
      expect(runtime.compile('const a = 1;\nlet x = ;\n')).toEqual({
        ok: false,
        message: "SyntaxError: unexpected token in expression: ';'",
        line: 2,
        column: 9,
      });
      const firstLine = runtime.compile('const = 1;');
      expect(firstLine).toMatchObject({ ok: false, line: 1 });
    });

    it('does not run the code', async () => {
      expect(runtime.compile('while (true) {}')).toEqual({ ok: true });
    });
  });
});
