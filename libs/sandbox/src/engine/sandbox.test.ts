import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ENGINE_STACK_BYTES, readEngineLayout } from './engine-layout';
import { EngineInstance } from './engine-instance';
import { findHeapBreak } from './heap-break';
import { heapEnd } from './memory-image';
import { ConnectorRun, type RunInput } from '../run/run-connector';
import { decodeResult } from '../run/run-verdict';
import { Sandbox } from './sandbox';
import { DEFAULT_RUN_LIMITS, resolveEnvironment } from '../sandbox-environment';

const input = (code: string, extra: Partial<RunInput> = {}): RunInput => ({
  cacheKey: 'bot/int@1',
  code,
  entityJson: JSON.stringify({ RequestParams: '', RequestHeaders: '', RequestBody: { orderId: 42 }, ResponseBody: null }),
  rawBody: null,
  timeoutMs: 2000,
  limits: DEFAULT_RUN_LIMITS,
  allowedHosts: [],
  ...extra,
});

/** Runs `run` in `sandbox`, then resets it the way the pool does. */
async function runIn(sandbox: Sandbox, run: RunInput) {
  const connectorRun = new ConnectorRun(sandbox, run);
  const result = connectorRun.start() ?? (await connectorRun.finish());
  sandbox.reset();
  return decodeResult(result, () => JSON.parse(run.entityJson));
}

describe('engine layout', () => {
  it("finds the static data below the engine's stack, and the heap above it", () => {
    const wasm = readFileSync(createRequire(require.resolve('quickjs-emscripten')).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));
    const layout = readEngineLayout(wasm);
    expect(layout.staticEnd).toBeGreaterThan(0);
    expect(layout.stackTop - layout.staticEnd).toBe(ENGINE_STACK_BYTES);
  });

  it('refuses a binary that is not laid out that way', () => {
    // A module with one global (i32 mutable, 1024) and a data segment at 2048: data above the stack's low end.
    const wasm = Uint8Array.from([
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
      0x05, 0x03, 0x01, 0x00, 0x01, // memory section: 1 memory, min 1 page
      0x06, 0x07, 0x01, 0x7f, 0x01, 0x41, 0x80, 0x08, 0x0b, // global section: mutable i32 = 1024
      0x0b, 0x08, 0x01, 0x00, 0x41, 0x80, 0x10, 0x0b, 0x01, 0x2a, // data section: 1 byte at 2048
    ]);
    expect(() => readEngineLayout(wasm)).toThrow(/not laid out as expected/);
  });
});

describe("the heap's end, found below the allocator's break", () => {
  const scanned = (instance: EngineInstance) => heapEnd(instance.memory, { ...instance.layout, breakAt: null });

  it('is where a scan of the whole memory finds it, in a new instance and as its heap grows past its first break', async () => {
    const instance = await EngineInstance.create();
    expect(instance.layout.breakAt).toEqual(expect.any(Number));
    expect(heapEnd(instance.memory, instance.layout)).toBe(scanned(instance));
    const runtime = instance.module.newRuntime();
    const context = runtime.newContext();
    const start = heapEnd(instance.memory, instance.layout);
    expect(start).toBe(scanned(instance));
    // Several MiB of strings kept, then some dropped: the heap grows far past where it began, and the memory with it.
    const grown = context.evalCode('globalThis.kept = Array.from({ length: 3000 }, (_, i) => "x".repeat(4000) + i); kept.length = 1000; kept.length');
    expect(context.dump(context.unwrapResult(grown))).toBe(1000);
    const end = heapEnd(instance.memory, instance.layout);
    expect(end - start).toBeGreaterThan(4 * 1024 * 1024);
    expect(end).toBe(scanned(instance));
    context.dispose();
    runtime.dispose();
  });

  /** Static words at 64, 128 and 256 that look like a break; `malloc` moves those in `moves` past the block, and the one at `creeps` a little. */
  const fakeEngine = (moves: number[], creeps?: number) => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const layout = { staticEnd: 1024, stackTop: 2048 };
    const words = new Uint32Array(memory.buffer);
    for (const at of [64, 128, 256]) words[at / 4] = 4096; // three words that look like a break
    new Uint8Array(memory.buffer)[3000] = 1; // the heap ends at 3001
    const allocator = {
      malloc: (bytes: number) => {
        for (const at of moves) words[at / 4] = 4096 + bytes + 16;
        if (creeps !== undefined) words[creeps / 4] += 8;
        return 4096;
      },
      free: () => {},
    };
    return { memory, layout, allocator };
  };

  it('is the one word of the static data that moves past a block allocated', () => {
    const { memory, layout, allocator } = fakeEngine([128]);
    expect(findHeapBreak(memory, layout, allocator)).toBe(128);
    // A word that grows, but not past the block (a counter, say), is not the break.
    const creeping = fakeEngine([256], 64);
    expect(findHeapBreak(creeping.memory, creeping.layout, creeping.allocator)).toBe(256);
  });

  it('is not guessed when no word moves, or several do, or nothing can be allocated: the whole memory is scanned then', () => {
    for (const moves of [[], [64, 256]]) {
      const { memory, layout, allocator } = fakeEngine(moves);
      expect(findHeapBreak(memory, layout, allocator)).toBeNull();
    }
    const { memory, layout } = fakeEngine([128]);
    expect(findHeapBreak(memory, layout, { malloc: () => 0, free: () => {} })).toBeNull();
    expect(heapEnd(memory, { ...layout, breakAt: null })).toBe(3001);
  });

  it('falls back to the whole memory when the word read is not a break inside it', () => {
    const { memory, layout } = fakeEngine([]);
    new Uint32Array(memory.buffer)[128 / 4] = 0xffffffff;
    expect(heapEnd(memory, { ...layout, breakAt: 128 })).toBe(3001);
    new Uint32Array(memory.buffer)[128 / 4] = 100; // below the heap's start
    expect(heapEnd(memory, { ...layout, breakAt: 128 })).toBe(3001);
  });
});

describe('sandbox memory image', () => {
  const env = resolveEnvironment({}, false);
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await Sandbox.create(env);
  });

  it('starts every run from the image: globals, prototypes and the Context API as they were', async () => {
    const code = `
      const seen = [typeof globalThis.leak, ({}).polluted === undefined, typeof Context.Log];
      globalThis.leak = 1; Object.prototype.polluted = true; Context.Log = null;
      Context.SetResponseEntity({ ResponseBody: seen });`;
    for (let i = 0; i < 3; i++) expect(await runIn(sandbox, input(code))).toMatchObject({ kind: 'ok', responseBody: ['undefined', true, 'function'] });
  });

  it('gives every run numbers of its own from Math.random', async () => {
    const code = 'Context.SetResponseEntity({ ResponseBody: [Math.random(), Math.random()] });';
    const draws = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const result = await runIn(sandbox, input(code));
      expect(result.kind).toBe('ok');
      draws.add(JSON.stringify(result.kind === 'ok' && result.responseBody));
    }
    expect(draws.size).toBe(20);
  });

  it("gives the first run of every new sandbox numbers of its own, compiled ahead or not", async () => {
    const code = 'Context.SetResponseEntity({ ResponseBody: [Math.random(), Math.random()] });';
    const firstDraws = async (compileAhead: boolean) => {
      const fresh = await Sandbox.create(env);
      if (compileAhead) expect(fresh.compileAhead({ cacheKey: 'bot/int@1', code })).toBe(true);
      const result = await runIn(fresh, input(code));
      return JSON.stringify(result.kind === 'ok' && result.responseBody);
    };
    const draws = [await firstDraws(false), await firstDraws(false), await firstDraws(true), await firstDraws(true)];
    expect(new Set(draws).size).toBe(4);
  });

  it('serves run after run with the connector compiled in, after runs that failed every way', async () => {
    const ack = 'const e = Context.GetRequestEntity(); Context.SetResponseEntity({ ResponseBody: e.RequestBody.orderId });';
    expect(sandbox.compileAhead({ cacheKey: 'bot/int@1', code: ack })).toBe(true);
    const failures = [
      input('for (;;) {}', { timeoutMs: 100 }),
      input('const a = []; for (;;) a.push("x".repeat(1024));', { limits: { ...DEFAULT_RUN_LIMITS, memoryBytes: 8 * 1024 * 1024 } }),
      input('function f() { return f() + 1; } f();'),
      input('await new Promise(() => {});'),
      input('Context.RaiseError("t", "m");'),
      input('throw new Error("boom");'),
    ];
    for (const failure of failures) {
      expect((await runIn(sandbox, failure)).kind).not.toBe('ok');
      const next = await runIn(sandbox, input(ack));
      expect([failure.code, next]).toEqual([failure.code, expect.objectContaining({ kind: 'ok', responseBody: 42 })]);
    }
  });

  it('runs a connector that waits on the host to its end, and is ready again afterwards', async () => {
    const code = `const text = await Context.ReadFile('f1'); Context.SetResponseEntity({ ResponseBody: text });`;
    const readFile = () => new Promise<Uint8Array>((resolve) => setTimeout(() => resolve(new TextEncoder().encode('hello')), 20));
    expect(await runIn(sandbox, input(code, { readFile }))).toMatchObject({ kind: 'ok', responseBody: 'hello' });
    expect(await runIn(sandbox, input('Context.SetResponseEntity({ ResponseBody: typeof text });'))).toMatchObject({ kind: 'ok', responseBody: 'undefined' });
  });

  it('compiles a connector ahead only once, before any run', async () => {
    await runIn(sandbox, input('1'));
    expect(() => sandbox.compileAhead({ cacheKey: 'bot/int@1', code: '1' })).toThrow(/never ran/);
  });
});
