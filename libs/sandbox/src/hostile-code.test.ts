import type { ConnectorRunResult, RunLimits } from '@gi/domain';
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
    `const host = ['process', 'require', 'module', 'exports', 'Buffer', 'global', 'setTimeout', 'setImmediate', 'fetch', 'WebAssembly', 'XMLHttpRequest', 'Deno', 'Bun', '__dirname', 'os', 'std'];
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
  ['a microtask flood', `const flood = () => Promise.resolve().then(flood); flood(); await new Promise(() => {});`, { kind: 'failed', reason: 'timeout' }],
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
  ['a microtask flood under a CPU limit', `const flood = () => Promise.resolve().then(flood); flood(); await new Promise(() => {});`, limit(/CPU time limit of 100 ms/), { timeoutMs: 60_000, limits: { cpuMs: 100 } }],
  ['a memory bomb under a small memory limit', `const a = []; for (;;) a.push(new Uint8Array(1 << 16));`, limit(/memory limit of 8 MiB/), { limits: { memoryBytes: 8 * 1024 * 1024 } }],
  ['a body over a small ResponseBody limit', `Context.SetResponseEntity({ ResponseBody: 'x'.repeat(2048) });`, limit(/ResponseBody is larger than the limit of 1 KiB/), { limits: { responseBodyBytes: 1024 } }],
  ['a flood of host calls', `for (;;) Context.Http.Request({ url: 'https://example.com/' }).catch(() => {});`, limit(/more than 8 HTTP requests and file reads at once/)],
  ['a flood of host calls that catches the refusal', `for (;;) try { Context.Http.Request({ url: 'https://example.com/' }).catch(() => {}); } catch (e) {}`, limit(/more than 2 HTTP/), { limits: { pendingCalls: 2 } }],
  // Code that closes its function body early is compiled ahead of its run; what runs then must reach nothing.
  ['statements outside the function body that loop', `}, (() => { for (;;) {} })(), async function () {`, { kind: 'failed', reason: 'timeout' }],
  ['statements outside the function body that call the host', `}, Context.Http.Request({ url: 'https://example.com/' }), Context.SetProgress(1), async function () {`, { kind: 'ok' }],
  ['tampering with JSON before the body is read', `JSON.stringify = () => '{"body":"forged"}'; Context.SetResponseEntity({ ResponseBody: 'real' });`, { kind: 'ok', responseBody: 'real' }],
];

describe('hostile connector code', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(() => runtime.close());

  const run = (code: string, { timeoutMs = 300, limits }: Bounds = {}) =>
    runtime.run({ cacheKey: 'hostile', code, entity: null, timeoutMs, limits, allowedHosts: [] });

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
