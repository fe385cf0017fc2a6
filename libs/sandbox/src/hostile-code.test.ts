import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { ConnectorRunResult, LogLine, RunLimits, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from './quickjs-connector.runtime';

/** How long a case may run, and the integration limits it runs under (the defaults otherwise). */
interface Bounds {
  timeoutMs?: number;
  limits?: Partial<RunLimits>;
}

/** Connector code written to break out or to break the executor; each case must end cleanly. */
type Case = [name: string, code: string, expected: Partial<ConnectorRunResult> & Record<string, unknown>, bounds?: Bounds];

const limit = (message: RegExp) => ({ kind: 'failed' as const, reason: 'limit' as const, message: expect.stringMatching(message) });
const cases: Case[] = [
  ['constructor chain to process', `return this.constructor.constructor('return process')();`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^ReferenceError: 'process' is not defined/) }],
  ['constructor chain through a Context function', `Context.SetResponseEntity({ ResponseBody: Context.Log.constructor('return typeof process + typeof require + typeof globalThis.Context')() });`, { kind: 'ok', responseBody: 'undefinedundefinedobject' }],
  ['async function constructor', `const AsyncFunction = (async () => {}).constructor; const r = await AsyncFunction('return typeof process')(); Context.SetResponseEntity({ ResponseBody: r });`, { kind: 'ok', responseBody: 'undefined' }],
  ['dynamic import', `await import('node:child_process');`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/could not load module/) }],
  ['require', `require('fs').readFileSync('/etc/passwd');`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^ReferenceError: 'require' is not defined/) }],
  [
    'globalThis probes for host objects',
    `const host = ['process', 'require', 'module', 'exports', 'Buffer', 'global', 'setImmediate', 'WebAssembly', 'XMLHttpRequest', 'Deno', 'Bun', '__dirname', 'os', 'std'];
     Context.SetResponseEntity({ ResponseBody: host.filter((name) => typeof globalThis[name] !== 'undefined') });`,
    { kind: 'ok', responseBody: [] },
  ],
  ['stack traces show no host frames', `Error.prepareStackTrace = (e, frames) => frames; const s = new Error('x').stack; Context.SetResponseEntity({ ResponseBody: [typeof s, /node:|\\.ts|internal\\//.test(String(s))] });`, { kind: 'ok', responseBody: ['string', false] }],
  ['Symbol tricks on the returned body', `Context.SetResponseEntity({ ResponseBody: { [Symbol.for('nodejs.util.inspect.custom')]: () => 'x', [Symbol.toPrimitive]: () => 1, ok: true } });`, { kind: 'ok', responseBody: { ok: true } }],
  ['prototype pollution through the returned body', `Context.SetResponseEntity({ ResponseBody: JSON.parse('{"a":{"__proto__":{"admin":true}},"constructor":{"prototype":{"admin":true}}}') });`, { kind: 'ok', responseBody: { a: {} } }],
  ['a thrown Context object', `throw Context;`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught /) }],
  ['a thrown host function', `throw Context.Log;`, { kind: 'failed', reason: 'threw' }],
  ['a thrown object with a hostile getter', `throw { get message() { while (true) {} } };`, { kind: 'failed', reason: 'timeout' }],
  ['a returned body whose toJSON throws', `Context.SetResponseEntity({ ResponseBody: { toJSON() { throw new Error('nope'); } } });`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^The ResponseBody cannot be sent: Error: nope/) }],
  ['a returned body whose getter loops', `Context.SetResponseEntity({ ResponseBody: { get x() { while (true) {} } } });`, { kind: 'failed', reason: 'timeout' }],
  ['a BigInt in the body', `Context.SetResponseEntity({ ResponseBody: { n: 1n } });`, { kind: 'failed', reason: 'threw' }],
  ['an endless loop', `for (;;) {}`, { kind: 'failed', reason: 'timeout' }],
  ['a loop that catches the interrupt', `for (;;) { try { for (;;) {} } catch (e) {} }`, { kind: 'failed', reason: 'timeout' }],
  ['a promise that never settles', `await new Promise(() => {});`, { kind: 'failed', reason: 'timeout' }],
  // QuickJS turns an interrupt thrown inside an async function into a rejected promise: a loop of such calls must still stop.
  ['an endless loop of async calls that swallow the interrupt', `for (;;) (async () => { for (let i = 0; i < 1000; i++); })();`, { kind: 'failed', reason: 'timeout' }],
  ['an endless loop of async calls inside try', `for (;;) { try { (async () => { for (let i = 0; i < 1000; i++); })().catch(() => {}); } catch (e) {} }`, { kind: 'failed', reason: 'timeout' }],
  // Each callback queues the next and keeps nothing: the flood holds the thread, never memory.
  ['a microtask flood', `const flood = () => { Promise.resolve().then(flood); }; flood(); await new Promise(() => {});`, { kind: 'failed', reason: 'timeout' }],
  // Each promise resolves to the next: the chain grows until the memory limit or the deadline ends it.
  ['a growing promise chain', `const flood = () => Promise.resolve().then(flood); flood(); await new Promise(() => {});`, { kind: 'failed', reason: expect.stringMatching(/^(timeout|limit)$/) }],
  ['an async recursion flood', `const f = async () => { await null; f(); f(); }; f(); await new Promise(() => {});`, { kind: 'failed', reason: 'timeout' }],
  ['a memory bomb', `const a = []; for (;;) a.push(new Uint8Array(1 << 20));`, { kind: 'failed', reason: 'limit', message: expect.stringMatching(/memory limit/) }, { timeoutMs: 20_000 }],
  ['a string bomb', `let s = 'x'; for (;;) s = s + s + String(s.length);`, { kind: 'failed' }, { timeoutMs: 20_000 }],
  ['a memory bomb of small objects', `const a = []; for (;;) a.push({ i: a.length });`, { kind: 'failed', reason: 'limit' }, { timeoutMs: 20_000 }],
  ['deep recursion', `function down(n) { return down(n + 1) + 1; } down(0);`, { kind: 'failed', reason: 'limit', message: expect.stringMatching(/stack overflow/) }],
  ['deep recursion through JSON', `let o = {}; for (let i = 0; i < 100000; i++) o = { o }; JSON.stringify(o);`, { kind: 'failed' }, { timeoutMs: 1000 }],
  ['a giant response', `Context.SetResponseEntity({ ResponseBody: 'x'.repeat(11 * 1024 * 1024) });`, { kind: 'failed', reason: 'limit', message: expect.stringMatching(/ResponseBody is larger/) }],
  ['a log flood', `for (let i = 0; i < 2e4; i++) Context.Log('spam '.repeat(100)); Context.SetResponseEntity({ ResponseBody: 'done' });`, limit(/log limit of 64 KiB/), { timeoutMs: 20_000 }],
  ['a log flood that catches the limit', `for (;;) try { Context.Log('spam'); } catch (e) {}`, limit(/log limit of 1 KiB/), { limits: { logBytes: 1024 } }],
  ['a progress value with a hostile valueOf', `Context.SetProgress({ valueOf() { for (;;) {} } });`, { kind: 'failed', reason: 'timeout' }],
  // The integration's own limits.
  ['a CPU burner allowed a long wall time', `for (;;) { try { for (;;) {} } catch (e) {} }`, limit(/CPU time limit of 100 ms/), { timeoutMs: 60_000, limits: { cpuMs: 100 } }],
  ['a microtask flood under a CPU limit', `const flood = () => { Promise.resolve().then(flood); }; flood(); await new Promise(() => {});`, limit(/CPU time limit of 100 ms/), { timeoutMs: 60_000, limits: { cpuMs: 100 } }],
  ['a memory bomb under a small memory limit', `const a = []; for (;;) a.push(new Uint8Array(1 << 16));`, limit(/memory limit of 8 MiB/), { limits: { memoryBytes: 8 * 1024 * 1024 } }],
  ['a body over a small ResponseBody limit', `Context.SetResponseEntity({ ResponseBody: 'x'.repeat(2048) });`, limit(/ResponseBody is larger than the limit of 1 KiB/), { limits: { responseBodyBytes: 1024 } }],
  ['a flood of host calls', `for (;;) Context.Http.Request({ url: 'https://example.com/' }).catch(() => {});`, limit(/more than 8 HTTP requests, file reads and crypto operations at once/)],
  ['a flood of host calls that catches the refusal', `for (;;) try { Context.Http.Request({ url: 'https://example.com/' }).catch(() => {}); } catch (e) {}`, limit(/more than 2 HTTP/), { limits: { pendingCalls: 2 } }],
  // crypto: work moved to the host is bounded and counted, keys stay in their run.
  ['a flood of crypto operations', `for (;;) crypto.subtle.digest('SHA-256', new Uint8Array(1));`, limit(/more than 8 HTTP requests, file reads and crypto operations at once/)],
  ['a digest of a huge input', `await crypto.subtle.digest('SHA-256', new Uint8Array(9 * 1024 * 1024));`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^QuotaExceededError: crypto.subtle.digest takes at most 8 MiB/) }],
  [
    'crypto work that tries to outrun the CPU limit',
    `const k = await crypto.subtle.importKey('raw', new Uint8Array(8), 'PBKDF2', false, ['deriveBits']); for (;;) await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(8), iterations: 1e6 }, k, 256);`,
    limit(/CPU time limit of 100 ms/),
    { timeoutMs: 10_000, limits: { cpuMs: 100 } },
  ],
  ['a crypto key kept for the next run', `globalThis.leaked = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);`, { kind: 'ok' }],
  // Code that closes its function body early is compiled ahead of its run; what runs then must reach nothing.
  ['statements outside the function body that loop', `}, (() => { for (;;) {} })(), async function () {`, { kind: 'failed', reason: 'timeout' }],
  ['statements outside the function body that call the host', `}, Context.Http.Request({ url: 'https://example.com/' }), Context.SetProgress(1), async function () {`, { kind: 'ok' }],
  // Data the host could not serialise, and texts larger than the host keeps.
  ['a ResponseBody nested 3,000 deep', `let v = []; for (let i = 0; i < 3000; i++) v = [v]; Context.SetResponseEntity({ ResponseBody: v });`, limit(/ResponseBody nests arrays and objects more than 1000 levels deep/)],
  ['a ResponseBody of objects nested 1,001 deep', `let v = {}; for (let i = 0; i < 1000; i++) v = { v }; Context.SetResponseEntity({ ResponseBody: v });`, limit(/more than 1000 levels deep/)],
  ['a RaiseError with 20 MiB texts', `const big = 'x'.repeat(20 * 1024 * 1024); Context.RaiseError(big, big);`, { kind: 'raised', title: expect.stringMatching(/^x{199}…$/), message: expect.stringMatching(/^x{1999}…$/) }, { timeoutMs: 20_000 }],
  ['a RaiseError with a huge object as its message', `const o = { a: 'x'.repeat(10 * 1024 * 1024) }; Context.RaiseError('t', o);`, { kind: 'raised', title: 't', message: expect.stringMatching(/^\{"a":"x{1993}…$/) }, { timeoutMs: 20_000 }],
  ['an error thrown with a 20 MiB message', `throw new Error('x'.repeat(20 * 1024 * 1024));`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Error: x{1992}… \(line 1/) }, { timeoutMs: 20_000 }],
  ['a thrown 20 MiB string', `throw 'x'.repeat(20 * 1024 * 1024);`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^Uncaught x{1990}…$/) }, { timeoutMs: 20_000 }],
  ['a 20 MiB log line', `Context.Log('x'.repeat(20 * 1024 * 1024));`, limit(/log limit of 64 KiB/), { timeoutMs: 20_000 }],
  ['a flood of empty log lines', `for (;;) Context.Log();`, limit(/more than 10,000 log lines/)],
  ['a flood of console lines that catches the limit', `for (;;) try { console.log(''); } catch (e) {}`, limit(/more than 10,000 log lines/)],
  ['a progress flood with large messages', `for (let i = 0; i < 100000; i++) Context.SetProgress(i / 1000, 'x'.repeat(1000)); Context.SetResponseEntity({ ResponseBody: 'done' });`, { kind: 'ok', responseBody: 'done' }, { timeoutMs: 20_000 }],
  ['a progress message of 20 MiB', `Context.SetProgress(1, 'x'.repeat(20 * 1024 * 1024)); Context.SetResponseEntity({ ResponseBody: 'done' });`, { kind: 'ok', responseBody: 'done' }, { timeoutMs: 20_000 }],
  ['an HTTP request body over 10 MiB', `try { await Context.Http.Request({ url: 'https://example.com/', method: 'POST', body: 'x'.repeat(11 * 1024 * 1024) }); } catch (e) { Context.SetResponseEntity({ ResponseBody: e.message }); }`, { kind: 'ok', responseBody: expect.stringMatching(/larger than 10 MiB/) }, { timeoutMs: 20_000 }],
  // Code nested more deeply than the engine can take, compiled ahead, at the run, or through eval.
  ['200 KB of nested parentheses', '('.repeat(100_000) + ')'.repeat(100_000), { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^SyntaxError: the code nests too deeply to be compiled/) }],
  ['100,000 nested blocks', '{'.repeat(100_000) + '}'.repeat(100_000), { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^SyntaxError: the code nests too deeply to be compiled/) }],
  ['deeply nested code given to eval', `eval('['.repeat(100000) + ']'.repeat(100000));`, { kind: 'failed', message: expect.stringMatching(/stack overflow/) }],
  ['deeply nested code given to the Function constructor', `new Function('return ' + '('.repeat(100000) + '1' + ')'.repeat(100000))();`, { kind: 'failed', message: expect.stringMatching(/stack overflow/) }],
  // The raw request body: Context stays frozen; copies are bounded by the run's memory.
  ['GetRawRequestBody replaced on the frozen Context', `try { Context.GetRawRequestBody = () => 'forged'; } catch (e) {} Context.SetResponseEntity({ ResponseBody: [Context.GetRawRequestBody(), Object.isFrozen(Context)] });`, { kind: 'ok', responseBody: [null, true] }],
  ['GetRawRequestBody with hostile options', `Context.GetRawRequestBody({ get encoding() { for (;;) {} } });`, { kind: 'failed', reason: 'timeout' }],
  ['tampering with JSON before the body is read', `JSON.stringify = () => '{"body":"forged"}'; Context.SetResponseEntity({ ResponseBody: 'real' });`, { kind: 'ok', responseBody: 'real' }],
  // The standard globals (docs/connectors.md): huge inputs, timers and listeners that outlive or block their run.
  ['a huge TextDecoder input', `new TextDecoder().decode(new Uint8Array(40 * 1024 * 1024));`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^RangeError: TextDecoder.decode: at most 32 Mi bytes per call/) }, { timeoutMs: 5000 }],
  ['a huge atob input', `atob('QUJD'.repeat(10 * 1024 * 1024));`, { kind: 'failed', reason: 'threw', message: expect.stringMatching(/^RangeError: atob: at most 32 Mi characters per call/) }, { timeoutMs: 5000 }],
  ['a 200 MiB TextEncoder input', `new TextEncoder().encode('x'.repeat(200 * 1024 * 1024));`, limit(/memory limit of 64 MiB/), { timeoutMs: 5000 }],
  ['an AbortSignal.timeout that would block a later run', `AbortSignal.timeout(1).onabort = () => { for (;;) {} };`, { kind: 'ok' }],
  ['an abort listener that loops', `const c = new AbortController(); c.signal.onabort = () => { for (;;) {} }; c.abort();`, { kind: 'failed', reason: 'timeout' }],
  ['an event listener that throws what a getter loops on', `const t = new EventTarget(); t.addEventListener('x', () => { throw { get message() { for (;;) {} }, toJSON() { for (;;) {} } }; }); t.dispatchEvent(new Event('x'));`, { kind: 'failed' }],
  ['structuredClone of 1,000,000 nested objects', `let o = {}; for (let i = 0; i < 1e6; i++) o = { o }; structuredClone(o);`, limit(/memory limit of 64 MiB/), { timeoutMs: 20_000 }],
  ['a getter that clones its own object', `const o = { get x() { return structuredClone(o); } }; structuredClone(o);`, limit(/stack overflow/)],
  ['structuredClone of a growing Map', `const m = new Map(); let i = 0; for (;;) { m.set(i++, { i }); if (i % 1000 === 0) structuredClone(m); }`, { kind: 'failed' }, { timeoutMs: 5000 }],
  // fetch: the same budgets as Context.Http.Request (more cases, against a local server: 'fetch in hostile code' below).
  ['a flood of fetches', `for (;;) fetch('https://example.com/').catch(() => {});`, limit(/more than 8 HTTP requests, file reads and crypto operations at once/)],
  ['a flood of fetches that catches the refusal', `for (;;) try { fetch('https://example.com/').catch(() => {}); } catch (e) {}`, limit(/more than 2 HTTP/), { limits: { pendingCalls: 2 } }],
  ['a fetch body over 10 MiB', `try { await fetch('https://example.com/', { method: 'POST', body: 'x'.repeat(11 * 1024 * 1024) }); } catch (e) { Context.SetResponseEntity({ ResponseBody: [e.name, e.message] }); }`, { kind: 'ok', responseBody: ['TypeError', expect.stringMatching(/larger than 10 MiB/)] }, { timeoutMs: 20_000 }],
  ['a Blob of 100 MiB under a small memory limit', `const parts = []; for (let i = 0; i < 100; i++) parts.push(new Uint8Array(1 << 20)); new Blob(parts);`, limit(/memory limit of 16 MiB/), { timeoutMs: 5000, limits: { memoryBytes: 16 * 1024 * 1024 } }],
  ['a header flood', `const h = new Headers(); for (;;) h.append('x-' + h.getSetCookie().length, 'v'.repeat(1000));`, { kind: 'failed' }, { timeoutMs: 2000 }],
];

/** Entities a store may hold (some accepted before any depth limit existed), run through connectors that read and echo them. */
type DataCase = [name: string, entity: () => WebhookEntity, code: string, expected: Partial<ConnectorRunResult> & Record<string, unknown>];
const nested = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth));
const entityWith = (body: unknown): WebhookEntity => ({ RequestParams: '', RequestHeaders: '', RequestBody: body, ResponseBody: null });
const ECHO = 'const e = Context.GetRequestEntity(); Context.SetResponseEntity({ ResponseBody: e.RequestBody });';
const READ = 'const e = Context.GetRequestEntity(); Context.SetResponseEntity({ ResponseBody: Array.isArray(e.RequestBody) });';
const dataCases: DataCase[] = [
  ['a body nested 4,000 deep, read', () => entityWith(nested(4000)), READ, { kind: 'ok', responseBody: true }],
  ['a body nested 4,000 deep, not read', () => entityWith(nested(4000)), `Context.SetResponseEntity({ ResponseBody: 'ok' });`, { kind: 'ok', responseBody: 'ok' }],
  ['a body nested 2,500 deep, echoed', () => entityWith(nested(2500)), ECHO, limit(/ResponseBody nests arrays and objects more than 1000 levels deep/)],
  ['a body nested 999 deep, echoed', () => entityWith(nested(999)), ECHO, { kind: 'ok', responseBody: nested(999) }],
  ['a body nested 100,000 deep', () => entityWith(nested(100_000)), READ, limit(/request entity cannot be handed to the connector/)],
];

describe('hostile connector code', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(() => runtime.close());

  const run = (code: string, { timeoutMs = 300, limits }: Bounds = {}) =>
    runtime.run({ cacheKey: 'hostile', code, entity: null, timeoutMs, limits, allowedHosts: [] });

  it.each(dataCases)('%s: ends cleanly, and the next run is fine', async (...[, entity, code, expected]: DataCase) => {
    const result = await runtime.run({ cacheKey: 'hostile-data', code, entity: entity(), timeoutMs: 5000, allowedHosts: [] });
    expect(result).toMatchObject(expected);
    expect(await run('Context.SetResponseEntity({ ResponseBody: 1 });')).toMatchObject({ kind: 'ok', responseBody: 1 });
  }, 30_000);
  it('tampering with the standard globals stays in its run', async () => {
    const code = `
      if (Context.GetRequestEntity().RequestBody.tamper) {
        TextEncoder.prototype.encode = TextDecoder.prototype.decode = URL.prototype.toString = AbortController.prototype.abort = EventTarget.prototype.dispatchEvent = () => 'forged';
        globalThis.atob = globalThis.btoa = globalThis.structuredClone = globalThis.setTimeout = () => 'forged';
        Object.defineProperty(AbortSignal, 'timeout', { value: () => 'forged' });
        globalThis.DOMException = Event.prototype.preventDefault = null;
      }
      Context.SetResponseEntity({ ResponseBody: [new TextEncoder().encode('a')[0], atob(btoa('b')), structuredClone({ c: 1 }).c, String(new URL('https://d.example/')), typeof AbortSignal.timeout(1000).aborted, typeof DOMException, typeof Event.prototype.preventDefault] });`;
    const call = (cacheKey: string, tamper: boolean) => runtime.run({ cacheKey, code, entity: { RequestParams: '', RequestHeaders: '', RequestBody: { tamper }, ResponseBody: null }, timeoutMs: 2000, allowedHosts: [] });
    const intact = { kind: 'ok', responseBody: [97, 'b', 1, 'https://d.example/', 'boolean', 'function', 'function'] };
    expect(await call('hostile-tamper', true)).toMatchObject({ kind: 'ok', responseBody: ['f', 'forged', null, 'forged', 'undefined', 'object', 'object'] });
    // The same connector's next run (its sandbox), and another connector's: the globals are as the standard has them.
    expect(await call('hostile-tamper', false)).toMatchObject(intact);
    expect(await call('hostile-tamper-other', false)).toMatchObject(intact);
  });

  it('tampering with fetch, Response, Headers and Blob stays in its run', async () => {
    const code = `
      if (Context.GetRequestEntity().RequestBody.tamper) {
        Response.prototype.json = Headers.prototype.get = Blob.prototype.text = Request.prototype.clone = () => 'forged';
        Object.defineProperty(Response, 'json', { value: () => 'forged' });
        globalThis.fetch = () => 'forged';
        Object.prototype.then = (resolve) => resolve('forged');
      }
      const result = [await new Response('{"a":1}').json(), new Headers({ a: '1' }).get('a'), await new Blob(['b']).text(), typeof Response.json({}), fetch.name, [new Request('https://e.example/').clone()].map((c) => c.url ?? c)[0]];
      delete Object.prototype.then;
      Context.SetResponseEntity({ ResponseBody: result });`;
    const call = (cacheKey: string, tamper: boolean) => runtime.run({ cacheKey, code, entity: { RequestParams: '', RequestHeaders: '', RequestBody: { tamper }, ResponseBody: null }, timeoutMs: 2000, allowedHosts: [] });
    const intact = { kind: 'ok', responseBody: [{ a: 1 }, '1', 'b', 'object', 'fetch', 'https://e.example/'] };
    expect(await call('hostile-fetch-tamper', true)).toMatchObject({ kind: 'ok', responseBody: ['forged', 'forged', 'forged', 'string', '', 'forged'] });
    expect(await call('hostile-fetch-tamper', false)).toMatchObject(intact);
    expect(await call('hostile-fetch-tamper-other', false)).toMatchObject(intact);
  });

  it("keeps a run's raw body and the lines it hands over while it runs to that run alone", async () => {
    const code = `
      const mine = Context.GetRawRequestBody();
      globalThis.leaked = mine;
      Context.Log('body ' + mine);
      await new Promise((resolve) => setTimeout(resolve, 700));
      Context.SetResponseEntity({ ResponseBody: mine });`;
    const batches: Record<string, LogLine[]> = { a: [], b: [] };
    const results = await Promise.all(
      (['a', 'b'] as const).map((name) =>
        runtime.run({ cacheKey: 'hostile-raw', code, entity: null, rawBody: `secret-${name}`, timeoutMs: 5000, allowedHosts: [], onLogs: (lines) => batches[name].push(...lines) }),
      ),
    );
    expect(results).toMatchObject([{ kind: 'ok', responseBody: 'secret-a' }, { kind: 'ok', responseBody: 'secret-b' }]);
    expect(batches.a.map((line) => line.message)).toEqual(['body secret-a']);
    expect(batches.b.map((line) => line.message)).toEqual(['body secret-b']);
    expect(await runtime.run({ cacheKey: 'hostile-raw', code: 'Context.SetResponseEntity({ ResponseBody: [typeof leaked, Context.GetRawRequestBody()] });', entity: null, timeoutMs: 5000, allowedHosts: [] })).toMatchObject({
      kind: 'ok',
      responseBody: ['undefined', null],
    });
  }, 30_000);

  it.each(cases)('%s: ends cleanly, and the next run is fine', async (...[, code, expected, bounds]: Case) => {
    // Twice: the second run meets the code compiled ahead of it.
    await run(code, bounds);
    const result = await run(code, bounds);
    expect(result).toMatchObject(expected);
    const logBytes = result.logs.reduce((n, line) => n + Buffer.byteLength(line.message), 0);
    expect(logBytes).toBeLessThan(70 * 1024);
    expect(await run('Context.SetResponseEntity({ ResponseBody: typeof process + typeof leaked });')).toMatchObject({
      kind: 'ok',
      responseBody: 'undefinedundefined',
    });
  }, 30_000);
});

/**
 * A local server that redirects where it is told, answers /slow only after 3 s (noting when a
 * connection closes first), and /bomb with 1 GiB of zeros gzipped into 1 MiB.
 */
function startServer(): Promise<{ server: Server; base: string; closed: string[]; hits: string[] }> {
  const closed: string[] = [];
  const hits: string[] = [];
  // 16 gzip members of 64 MiB of zeros each (one gzip stream may hold several).
  const member = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(req.url ?? '');
    if (url.pathname === '/redirect') {
      res.writeHead(302, { Location: url.searchParams.get('to') ?? '/' });
      res.end();
    } else if (url.pathname === '/bomb') {
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' });
      res.end(bomb);
    } else if (url.pathname === '/slow') {
      res.on('close', () => closed.push(req.url ?? ''));
      setTimeout(() => res.end('late'), 3000).unref();
    } else res.end('ok');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, closed, hits })));
}

describe('fetch in hostile code', () => {
  let local: Awaited<ReturnType<typeof startServer>>;
  /** Trusts the local server's address, as a real downstream API would be trusted; nothing else. */
  let trusting: QuickJsConnectorRuntime;
  /** The production policy. */
  let strict: QuickJsConnectorRuntime;
  beforeAll(async () => {
    local = await startServer();
    trusting = await createQuickJsRuntime({ workers: 1, http: { trustedAddresses: ['127.0.0.1'] } });
    strict = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(async () => {
    await Promise.all([trusting.close(), strict.close()]);
    local.server.closeAllConnections();
    await new Promise((resolve) => local.server.close(resolve));
  });

  /** A connector that fetches `url` and answers with the error's name and message. */
  const tryFetch = (url: string) => `try { await fetch('${url}'); Context.SetResponseEntity({ ResponseBody: 'fetched' }); } catch (e) { Context.SetResponseEntity({ ResponseBody: [e.name, e.message] }); }`;
  const refused = (message: RegExp) => ({ kind: 'ok', responseBody: ['TypeError', expect.stringMatching(message)] });
  const GUARD = /private, loopback or link-local/;

  it.each([
    ['decimal IPv4', 'http://2130706433:9/x', '127.0.0.1'],
    ['hexadecimal IPv4', 'http://0x7f000001:9/x', '127.0.0.1'],
    ['octal IPv4', 'http://0177.0.0.1:9/x', '127.0.0.1'],
    ['short IPv4', 'http://127.1:9/x', '127.0.0.1'],
    ['IPv6 loopback', 'http://[::1]:9/x', '[::1]'],
    ['IPv4 mapped in IPv6', 'http://[::ffff:127.0.0.1]:9/x', '[::ffff:7f00:1]'],
    ['IPv4-compatible IPv6', 'http://[::127.0.0.1]:9/x', '[::7f00:1]'],
    ['NAT64 of a private address', 'http://[64:ff9b::a00:1]/x', '[64:ff9b::a00:1]'],
    ['a private network', 'http://10.0.0.1/x', '10.0.0.1'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['a name that resolves to loopback', 'http://localhost:9/x', 'localhost'],
  ])('refuses %s before connecting', async (_name, url, host) => {
    expect(await strict.run({ cacheKey: 'hostile-fetch', code: tryFetch(url), entity: null, timeoutMs: 5000, allowedHosts: [host] })).toMatchObject(refused(GUARD));
  });

  it.each([
    ['IPv6 loopback', 'http://[::1]:9/x', '[::1]'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['a private address in decimal', 'http://167772161/x', '10.0.0.1'],
    ['a private address mapped in IPv6', 'http://[::ffff:10.0.0.1]/x', '[::ffff:a00:1]'],
  ])('refuses a redirect to %s', async (_name, target, host) => {
    const code = tryFetch(`${local.base}/redirect?to=${encodeURIComponent(target)}`);
    expect(await trusting.run({ cacheKey: 'hostile-fetch', code, entity: null, timeoutMs: 5000, allowedHosts: ['127.0.0.1', host] })).toMatchObject(refused(GUARD));
  });

  it('refuses a redirect to a host that is not allowed, whatever its address', async () => {
    const code = tryFetch(`${local.base}/redirect?to=${encodeURIComponent('http://evil.example/')}`);
    expect(await trusting.run({ cacheKey: 'hostile-fetch', code, entity: null, timeoutMs: 5000, allowedHosts: ['127.0.0.1'] })).toMatchObject(refused(/The host 'evil.example' is not in this integration's allowed hosts/));
  });

  it('stops a decompression bomb at the response limit, counted on the decompressed bytes', async () => {
    const before = process.memoryUsage().rss;
    const code = `try { const r = await fetch('${local.base}/bomb'); Context.SetResponseEntity({ ResponseBody: (await r.text()).length }); } catch (e) { Context.SetResponseEntity({ ResponseBody: [e.name, e.message] }); }`;
    const result = await trusting.run({ cacheKey: 'hostile-fetch', code, entity: null, timeoutMs: 10_000, allowedHosts: ['127.0.0.1'] });
    expect(result).toMatchObject(refused(/is larger than the limit of 5 MiB/));
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * 1024 * 1024);
  }, 30_000);

  it('never lets a fetch outlive its run: the connection closes, and nothing reaches the next run', async () => {
    local.closed.length = 0;
    const code = `
      if (Context.GetRequestEntity().RequestBody.first) {
        fetch('${local.base}/slow?ended').then((r) => { globalThis.leaked = 'late'; Context.SetResponseEntity({ ResponseBody: 'late' }); });
        // Long enough for the request to reach the server.
        await new Promise((resolve) => setTimeout(resolve, 300));
        Context.SetResponseEntity({ ResponseBody: 'done' });
      } else {
        await new Promise((resolve) => setTimeout(resolve, 3500));
        Context.SetResponseEntity({ ResponseBody: typeof leaked });
      }`;
    const call = (first: boolean, timeoutMs = 10_000) => trusting.run({ cacheKey: 'hostile-fetch-outlive', code, entity: { RequestParams: '', RequestHeaders: '', RequestBody: { first }, ResponseBody: null }, timeoutMs, allowedHosts: ['127.0.0.1'] });
    expect(await call(true)).toMatchObject({ kind: 'ok', responseBody: 'done' });
    expect(local.hits).toContain('/slow?ended');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(local.closed).toEqual(['/slow?ended']);
    // A run that times out while it waits on a fetch: the same.
    const timedOut = await trusting.run({ cacheKey: 'hostile-fetch-outlive', code: `await fetch('${local.base}/slow?timeout');`, entity: null, timeoutMs: 300, allowedHosts: ['127.0.0.1'] });
    expect(timedOut).toMatchObject({ kind: 'failed', reason: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(local.closed).toEqual(['/slow?ended', '/slow?timeout']);
    // The next run of the same sandbox waits past the moment the first answer would have come.
    expect(await call(false)).toMatchObject({ kind: 'ok', responseBody: 'undefined' });
  }, 20_000);
});
