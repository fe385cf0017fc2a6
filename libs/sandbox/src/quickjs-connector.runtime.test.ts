import { Cancellation, type ConnectorRunRequest, type Progress, type WebhookEntity } from '@gi/domain';
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
    runtime = await createQuickJsRuntime({ limits: { logBytes: 200, responseBodyBytes: 1000 }, workers });
    expect(runtime.isolation).toBe(workers ? 'worker-threads' : 'in-process');
  });
  afterAll(() => runtime.close());

  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: 'bot/int@1', code, entity: entity(), timeoutMs: 2000, allowedHosts: [], ...extra });

  describe('the standard snippet', () => {
    it('acknowledges with the order id', async () => {
      const result = await run(STANDARD_SNIPPET);
      expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Accepted', Message: 'order 42' } });
    });

    it('reports how long the connector ran: at least its 50 ms of busy work, at most the call around it', async () => {
      const started = performance.now();
      // Date.now() in the sandbox counts whole milliseconds: waiting until 51 ms later spends more than 50.
      const result = await run('const until = Date.now() + 51; while (Date.now() < until);');
      const elapsed = performance.now() - started;
      expect(result.kind).toBe('ok');
      expect(result.durationMs).toBeGreaterThanOrEqual(50);
      expect(result.durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));
      // The first run on a fresh worker thread starts QuickJS there: seconds on a busy machine.
    }, 20_000);

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

    it('ends the run when the log passes its limit, keeping the lines up to it', async () => {
      const result = await run(`for (let i = 0; i < 100; i++) try { Context.Log('line ' + i + ' ' + 'x'.repeat(20)); } catch (e) {}`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/log limit of 200 bytes/) });
      const total = result.logs.slice(0, -1).reduce((n, l) => n + Buffer.byteLength(l.message), 0);
      expect(total).toBe(200);
      expect(result.logs[0].message).toBe('line 0 xxxxxxxxxxxxxxxxxxxx');
      expect(result.logs[result.logs.length - 1]).toMatchObject({ level: 'error', message: expect.stringMatching(/log limit/) });
    });

    it('reports progress through onProgress: the first update at once, the latest when the interval or the run ends', async () => {
      const seen: Progress[] = [];
      const result = await run(`Context.SetProgress(10, 'started'); Context.SetProgress(150); Context.SetProgress(50, { step: 2 });`, {
        onProgress: (p) => seen.push(p),
      });
      expect(result.kind).toBe('ok');
      expect(seen).toEqual([{ percent: 10, message: 'started' }, { percent: 50, message: '{"step":2}' }]);
      seen.length = 0;
      await run(`Context.SetProgress(150);`, { onProgress: (p) => seen.push(p) });
      expect(seen).toEqual([{ percent: 100 }]);
    });

    it('delivers a progress update held back once its interval is over, while the run waits', async () => {
      const seen: Array<Progress & { at: number }> = [];
      const started = Date.now();
      let readEndedAt = Infinity;
      const code = `Context.SetProgress(1); Context.SetProgress(2, 'held'); await Context.ReadFile('f1'); Context.SetResponseEntity({ ResponseBody: 'done' });`;
      const readFile = () =>
        new Promise<Uint8Array>((resolve) =>
          setTimeout(() => {
            readEndedAt = Date.now() - started;
            resolve(new Uint8Array(0));
          }, 3000),
        );
      const result = await run(code, { readFile, timeoutMs: 10_000, onProgress: (p) => seen.push({ ...p, at: Date.now() - started }) });
      expect(result.kind).toBe('ok');
      expect(seen.map(({ percent, message }) => ({ percent, message }))).toEqual([{ percent: 1, message: undefined }, { percent: 2, message: 'held' }]);
      // Delivered once its second was over, while the run still waited: not only when the run ended.
      expect(seen[1].at).toBeGreaterThanOrEqual(900);
      expect(seen[1].at).toBeLessThan(readEndedAt);
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
      const cancel = new Cancellation();
      cancel.request();
      const result = await run('Context.Log("ran"); Context.SetResponseEntity({ ResponseBody: 1 });', { cancel });
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

  describe('limits of the run', () => {
    const waitingReader = (ms: number) => () => new Promise<Uint8Array>((resolve) => setTimeout(() => resolve(new TextEncoder().encode('{}')), ms));

    it('ends the run at its own memory limit, and the next run has its own', async () => {
      const bomb = 'const a = []; while (true) a.push({ i: a.length, s: "x" + a.length });';
      const small = await run(bomb, { timeoutMs: 20_000, limits: { memoryBytes: 8 * 1024 * 1024 } });
      expect(small).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/memory limit of 8 MiB \(limits.memoryMiB\)/) });
      const sized = 'const a = new Uint8Array(16 * 1024 * 1024); Context.SetResponseEntity({ ResponseBody: a.length });';
      expect(await run(sized, { limits: { memoryBytes: 8 * 1024 * 1024 } })).toMatchObject({ kind: 'failed', reason: 'limit' });
      expect(await run(sized)).toMatchObject({ kind: 'ok', responseBody: 16 * 1024 * 1024 });
    });

    it('stops a loop of async calls at its limit, though QuickJS turns the interrupt into their rejections', async () => {
      // Inside an async function the uncatchable interrupt becomes a rejected promise, which the loop ignores.
      for (const code of ['for (;;) (async () => { for (let i = 0; i < 1000; i++); })();', 'for (;;) { try { (async () => { for (;;); })().catch(() => {}); } catch (e) {} }', 'const f = async () => { for (;;); }; for (;;) { try { f(); } catch (e) {} }']) {
        const started = Date.now();
        const result = await run(code, { timeoutMs: 300 });
        expect(result).toMatchObject({ kind: 'failed', reason: 'timeout', message: expect.stringMatching(/did not finish within its time limit of 300 ms/) });
        // Stopped by the engine itself, not by terminating a worker thread 2 s past the limit.
        expect(Date.now() - started).toBeLessThan(1500);
        expect(result.logs.map((line) => line.message)).not.toContain('The run was stopped by force.');
      }
    });

    it('ends a busy connector at its CPU time limit, long before its wall time', async () => {
      const started = Date.now();
      const result = await run('for (;;) { try { while (true) {} } catch (e) {} }', { timeoutMs: 60_000, limits: { cpuMs: 200 } });
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/CPU time limit of 200 ms \(limits.cpuSeconds\)/) });
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('does not count waiting on the host as CPU time', async () => {
      const code = `for (let i = 0; i < 3; i++) await Context.ReadFile('f1'); Context.SetResponseEntity({ ResponseBody: 'read' });`;
      expect(await run(code, { limits: { cpuMs: 100 }, readFile: waitingReader(100) })).toMatchObject({ kind: 'ok', responseBody: 'read' });
    });

    it('ends the run at its own ResponseBody and log limits', async () => {
      const body = await run(`Context.SetResponseEntity({ ResponseBody: 'x'.repeat(20) });`, { limits: { responseBodyBytes: 10 } });
      expect(body).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/larger than the limit of 10 bytes \(limits.responseBodyKiB\)/) });
      const log = await run(`Context.Log('0123456789'); Context.Log('more'); Context.SetResponseEntity({ ResponseBody: 'not reached' });`, { limits: { logBytes: 12 } });
      expect(log).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/log limit of 12 bytes/) });
      expect(log.logs.map((l) => l.message).slice(0, 2)).toEqual(['0123456789', 'mo']);
    });

    it('ends the run at one host call more than its pendingCalls limit, even when the connector catches it', async () => {
      const code = `
        try { await Promise.all([Context.ReadFile('f1'), Context.ReadFile('f1'), Context.ReadFile('f1')]); } catch (e) {}
        Context.SetResponseEntity({ ResponseBody: 'not reached' });`;
      const result = await run(code, { limits: { pendingCalls: 2 }, readFile: waitingReader(10) });
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/more than 2 HTTP requests, file reads and crypto operations at once \(limits.pendingCalls\)/) });
      const fits = `await Promise.all([Context.ReadFile('f1'), Context.ReadFile('f1')]); Context.SetResponseEntity({ ResponseBody: 'both' });`;
      expect(await run(fits, { limits: { pendingCalls: 2 }, readFile: waitingReader(10) })).toMatchObject({ kind: 'ok', responseBody: 'both' });
    });

    it('refuses limits that are not positive or exceed what a worker can hold', async () => {
      await expect(run('1', { limits: { cpuMs: 0 } })).rejects.toThrow(/cpuMs must be a positive number/);
      await expect(run('1', { limits: { memoryBytes: 4 * 1024 ** 3 } })).rejects.toThrow(/memoryBytes must be at most 1536 MiB/);
    });
  });

  describe('compiled code per version', () => {
    it('compiles a connector ahead, and still runs each call in a fresh sandbox', async () => {
      const code = `
        globalThis.count = (globalThis.count ?? 0) + 1;
        Object.prototype.polluted = (Object.prototype.polluted ?? 0) + 1;
        Context.SetResponseEntity({ ResponseBody: [count, ({}).polluted] });`;
      for (let i = 0; i < 5; i++) {
        expect(await run(code, { cacheKey: 'bot/counter@1' })).toMatchObject({ kind: 'ok', responseBody: [1, 1] });
      }
    });

    it('runs the new code when a key comes back with other code', async () => {
      for (const n of [1, 1, 2, 2]) {
        expect(await run(`Context.SetResponseEntity({ ResponseBody: ${n} });`, { cacheKey: 'bot/edited@1' })).toMatchObject({ kind: 'ok', responseBody: n });
      }
    });

    it('runs statements after an early-closed function body within the run only, with Context, every time', async () => {
      const code = `}, (globalThis.early = (globalThis.early ?? 0) + 1), Context.Log('outside the body'), async function () {
        Context.SetResponseEntity({ ResponseBody: globalThis.early });`;
      for (let i = 0; i < 3; i++) {
        const result = await run(code, { cacheKey: 'bot/early@1' });
        expect(result).toMatchObject({ kind: 'ok', responseBody: 1 });
        expect(result.logs.map((l) => l.message)).toEqual(['outside the body']);
      }
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

    it('has no require, process, import() or host objects; fetch is the standard one', async () => {
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
        responseBody: { require: 'undefined', process: 'undefined', fetch: 'function', Buffer: 'undefined', importResult: 'refused', escape: 'undefined' },
      });
      const globals = (result as { responseBody: { globals: string[] } }).responseBody.globals;
      // ECMAScript's own, console, and the standard globals of docs/connectors.md.
      const standard = ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask', 'performance', 'navigator', 'self', 'atob', 'btoa', 'structuredClone', 'reportError', 'fetch'];
      expect(globals).toEqual(
        ['console', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN', 'parseFloat', 'parseInt', 'undefined', 'unescape', ...standard, 'crypto'].sort(),
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

    const tooDeep = /^SyntaxError: the code nests too deeply to be compiled \(stack overflow\)/;
    it.each([
      ['200 KB of nested parentheses', '('.repeat(100_000) + ')'.repeat(100_000), tooDeep],
      ['nested arrays', 'x = ' + '['.repeat(100_000) + ']'.repeat(100_000), tooDeep],
      ['nested blocks', '{'.repeat(100_000) + '}'.repeat(100_000), tooDeep],
      ['nested calls', 'f('.repeat(100_000) + ')'.repeat(100_000), tooDeep],
      ['nested template literals', '`${'.repeat(50_000) + '1' + '}`'.repeat(50_000), tooDeep],
      ['a chain of unary operators', 'x = ' + '!'.repeat(200_000) + '1', tooDeep],
      // QuickJS words these as the syntax error its parser met once out of stack.
      ['nested objects', 'x = ' + '{a:'.repeat(50_000) + '1' + '}'.repeat(50_000), /^SyntaxError: /],
      ['nested functions', 'function f() {'.repeat(50_000) + '}'.repeat(50_000), /^SyntaxError: /],
    ])('refuses %s with a compile error, runs no such code, and goes on', async (_, code, message) => {
      expect(runtime.compile(code)).toEqual({ ok: false, message: expect.stringMatching(message), line: expect.any(Number), column: expect.any(Number) });
      expect(runtime.compile(STANDARD_SNIPPET)).toEqual({ ok: true });
      const result = await run(code);
      expect(result).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(message) });
      expect(await run(STANDARD_SNIPPET)).toMatchObject({ kind: 'ok' });
    });

    it('accepts code nested as deeply as real code is', () => {
      const nested = (depth: number) => 'x = ' + '['.repeat(depth) + ']'.repeat(depth) + ';\n' + 'if (a) {'.repeat(depth) + '}'.repeat(depth);
      expect(runtime.compile(nested(60))).toEqual({ ok: true });
    });
  });
});
