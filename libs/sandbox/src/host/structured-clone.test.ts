import fc from 'fast-check';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { caught, sameFunctionOnBothSides } from './globals.fixture';

/**
 * `describe(value)`: a JSON description of a value that tells apart everything structuredClone
 * keeps or drops (kinds, prototypes, own properties and their enumerability, bytes, shared and
 * cyclic references as ids); `build(description)` makes the value again. The same text runs in
 * Node and in a connector: a value is described once, built on both sides, cloned by each side's
 * structuredClone, and the clones' descriptions compared.
 */
const KIT = String.raw`
const number = (n) => (Object.is(n, -0) ? '-0' : Number.isNaN(n) || !Number.isFinite(n) ? String(n) : n);
function describe(root) {
  const ids = new Map();
  const protoName = (o) => {
    const p = Object.getPrototypeOf(o);
    if (p === null) return 'null';
    const c = Object.getOwnPropertyDescriptor(p, 'constructor');
    return c && typeof c.value === 'function' ? c.value.name : 'other';
  };
  const d = (v) => {
    switch (typeof v) {
      case 'undefined': return ['u'];
      case 'number': return ['n', number(v)];
      case 'string': return ['s', v];
      case 'boolean': return ['b', v];
      case 'bigint': return ['big', String(v)];
      case 'symbol': return ['symbol'];
      case 'function': return ['function'];
    }
    if (v === null) return ['null'];
    if (ids.has(v)) return ['ref', ids.get(v)];
    const id = ids.size;
    ids.set(v, id);
    const tag = Object.prototype.toString.call(v).slice(8, -1);
    const out = { id, tag, proto: protoName(v) };
    const props = (skip = () => false) => Object.getOwnPropertyNames(v).filter((k) => !skip(k)).map((k) => {
      const p = Object.getOwnPropertyDescriptor(v, k);
      return [k, p.enumerable, 'value' in p ? d(p.value) : ['accessor']];
    });
    if (ArrayBuffer.isView(v)) Object.assign(out, { buffer: d(v.buffer), byteOffset: v.byteOffset, length: tag === 'DataView' ? v.byteLength : v.length });
    else if (tag === 'ArrayBuffer') Object.assign(out, { bytes: Array.from(new Uint8Array(v)), resizable: v.resizable, max: v.maxByteLength });
    else if (tag === 'Map') out.entries = Array.from(v, ([k, x]) => [d(k), d(x)]);
    else if (tag === 'Set') out.entries = Array.from(v, d);
    else if (tag === 'Date') out.time = number(v.getTime());
    else if (tag === 'RegExp') Object.assign(out, { source: v.source, flags: v.flags, lastIndex: v.lastIndex });
    else if (tag === 'Error') Object.assign(out, { name: v.name, props: props((k) => k === 'stack'), hasStack: typeof Object.getOwnPropertyDescriptor(v, 'stack')?.value === 'string' });
    else if (['Number', 'String', 'Boolean', 'BigInt'].includes(tag)) Object.assign(out, { value: d(v.valueOf()), props: props() });
    else out.props = props();
    return out;
  };
  return d(root);
}
function build(root) {
  const made = new Map();
  const b = (x) => {
    if (Array.isArray(x)) {
      switch (x[0]) {
        case 'u': return undefined;
        case 'n': return Number(x[1]);
        case 's': case 'b': return x[1];
        case 'big': return BigInt(x[1]);
        case 'null': return null;
        case 'ref': return made.get(x[1]);
      }
      throw new Error('cannot build ' + x[0]);
    }
    let v;
    switch (x.tag) {
      case 'Array': v = []; break;
      case 'ArrayBuffer': v = x.resizable ? new ArrayBuffer(x.bytes.length, { maxByteLength: x.max }) : new ArrayBuffer(x.bytes.length); new Uint8Array(v).set(x.bytes); break;
      case 'Map': v = new Map(); break;
      case 'Set': v = new Set(); break;
      case 'Date': v = new Date(Number(x.time)); break;
      case 'RegExp': v = new RegExp(x.source, x.flags); v.lastIndex = x.lastIndex; break;
      case 'Number': case 'String': case 'Boolean': case 'BigInt': v = Object(b(x.value)); break;
      case 'DataView': v = new DataView(b(x.buffer), x.byteOffset, x.length); break;
      case 'Object': v = x.proto === 'null' ? Object.create(null) : {}; break;
      default: v = new globalThis[x.tag](b(x.buffer), x.byteOffset, x.length);
    }
    made.set(x.id, v);
    if (x.tag === 'Map') for (const [k, e] of x.entries) v.set(b(k), b(e));
    if (x.tag === 'Set') for (const e of x.entries) v.add(b(e));
    for (const [k, enumerable, e] of x.props || []) {
      if (k === 'length' && Array.isArray(v)) v.length = b(e);
      else if (!Object.getOwnPropertyDescriptor(v, k)) Object.defineProperty(v, k, { value: b(e), enumerable, writable: true, configurable: true });
    }
    return v;
  };
  return b(root);
}`;

const kit = new Function(`${KIT}; return { describe, build };`)() as { describe: (value: unknown) => unknown; build: (description: unknown) => unknown };
/** The clone, built from a description and described: the same text on both sides. */
const CLONE_DESCRIBED = `(input) => { ${KIT}; return describe(structuredClone(build(input))); }`;

describe('structuredClone', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());
  const { run, inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'clone');
  const same = async (fn: string, input: unknown = null) => expect(await inSandbox(fn, input)).toEqual(await inNode(fn, input));

  const anything = fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withSparseArray: true,
    withTypedArray: true,
    withObjectString: true,
    maxDepth: 4,
  });

  it('clones any value as Node does (fast-check anything: boxed values, dates, maps, sets, typed arrays, sparse arrays, null prototypes)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anything, { maxLength: 8 }), async (values) => {
        const description = kit.describe(values);
        expect(kit.describe(kit.build(description))).toEqual(description);
        await same(CLONE_DESCRIBED, description);
      }),
      { numRuns: 80 },
    );
  });

  it('keeps shared and cyclic references, views sharing the clone of their buffer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anything, { maxLength: 5 }), async (values) => {
        const buffer = new ArrayBuffer(16);
        const root: Record<string, unknown> = { values, again: values, views: [new Uint8Array(buffer, 2, 4), new DataView(buffer, 8), new Float64Array(buffer, 8, 1)], keyed: new Map<unknown, unknown>([[values, values]]) };
        root.self = root;
        (root.keyed as Map<unknown, unknown>).set(root, new Set([root, values]));
        await same(CLONE_DESCRIBED, kit.describe(root));
      }),
      { numRuns: 30 },
    );
  });

  it('reads getters, and skips properties deleted on the way, in the order Node does', async () => {
    await same(`() => {
      const log = [];
      const spy = (name, inner) => ({ get a() { log.push(name + '.a'); return inner; }, get b() { log.push(name + '.b'); delete this.c; return 1; }, c: 3 });
      const value = spy('root', spy('child', [spy('leaf', 0)]));
      value.map = new Map([[spy('key', 1), spy('value', 2)]]);
      value.set = new Set([spy('member', 3)]);
      const clone = structuredClone(value);
      return [log, Object.keys(clone), Object.getOwnPropertyDescriptor(clone, 'a').enumerable, 'c' in clone];
    }`);
  });

  it('clones errors as Node does: the standard kinds by name, message, cause, stack', async () => {
    await same(`() => [
      new Error('m', { cause: { x: [1] } }), new TypeError('t'), Object.assign(new RangeError('r'), { name: 'Custom' }), Object.assign(new Error('n'), { name: 'SyntaxError' }),
      new AggregateError([1], 'agg'), new (class MyError extends Error {})('mine'), Object.defineProperty(new Error('g'), 'message', { get() { return 'getter'; } }),
      Object.defineProperty(new Error('c'), 'cause', { get() { return 'getter'; } }), Object.assign(new URIError('u'), { message: 42 }), new EvalError(), new ReferenceError('ref'),
    ].map((e) => { const c = structuredClone(e); return [Object.prototype.toString.call(c), c.constructor.name, c.name, c.message, Object.getOwnPropertyNames(c).sort(), c.cause, c.stack === e.stack]; })`);
  });

  it('resets lastIndex, keeps flags, and keeps what Node keeps of wrappers, dates and class instances', async () => {
    await same(`() => {
      const r = /a(?<n>b)/dgimsuy; r.lastIndex = 3;
      class Point { #secret = 1; constructor() { this.x = 1; } get y() { return 2; } }
      const values = [r, new Date(NaN), new Date(8.64e15), Object(-0), Object(12n), Object('ab'), new Point(), Object.assign(Object.create({ inherited: 1 }), { own: 2 }), { [Symbol('s')]: 1, visible: 1 }, Object.defineProperty({}, 'hidden', { value: 1 })];
      // (Node's structuredClone makes its objects in the test runner's outer realm: prototypes are compared by name.)
      return values.map((v) => { const c = structuredClone(v); return [Object.prototype.toString.call(c), String(c.valueOf()), c.lastIndex, c.flags, Object.getPrototypeOf(c).constructor.name, JSON.stringify(Object.getOwnPropertyNames(c))]; });
    }`);
  });

  it('refuses what cannot be cloned with a DataCloneError, as Node does', async () => {
    await same(
      `() => [() => 1, function named() {}, Symbol('s'), Object(Symbol()), new WeakMap(), new WeakSet(), new WeakRef({}), Promise.resolve(), new FinalizationRegistry(() => {}), { nested: [1, { deep: () => 2 }] }, new Map([[1, Symbol()]])]
        .map((v) => { try { structuredClone(v); return 'cloned'; } catch (e) { return [e.name, e.constructor.name, e.code]; } })`,
    );
  });

  it('refuses platform objects, as browsers do, and clones DOMExceptions', async () => {
    const got = await inSandbox(`() => {
      const platform = [new AbortController(), new AbortController().signal, new EventTarget(), new Event('x'), new CustomEvent('y'), new URL('https://a.example/'), new URLSearchParams('a=1'), new TextEncoder(), new TextDecoder(), new SharedArrayBuffer(8)];
      const refused = platform.map((v) => { try { structuredClone(v); return 'cloned'; } catch (e) { return e.name + ': ' + e.message; } });
      const original = new DOMException('gone', 'AbortError');
      const copy = structuredClone({ e: original }).e;
      return [refused, copy !== original, copy instanceof DOMException, copy.name, copy.message, copy.code];
    }`);
    expect(got).toEqual([
      [
        'DataCloneError: AbortController object could not be cloned.',
        'DataCloneError: AbortSignal object could not be cloned.',
        'DataCloneError: EventTarget object could not be cloned.',
        'DataCloneError: Event object could not be cloned.',
        'DataCloneError: Event object could not be cloned.',
        'DataCloneError: URL object could not be cloned.',
        'DataCloneError: URLSearchParams object could not be cloned.',
        'DataCloneError: TextEncoder object could not be cloned.',
        'DataCloneError: TextDecoder object could not be cloned.',
        'DataCloneError: #<SharedArrayBuffer> could not be cloned.',
      ],
      true,
      true,
      'AbortError',
      'gone',
      20,
    ]);
  });

  it('transfers ArrayBuffers as Node does: the clone gets the bytes, the original is detached, only once the clone succeeded', async () => {
    await same(`() => {
      const buffer = new Uint8Array([1, 2, 3]).buffer;
      const clone = structuredClone({ view: new Uint8Array(buffer, 1), buffer }, { transfer: [buffer] });
      const kept = new ArrayBuffer(2);
      const failed = ${caught('structuredClone({ kept, f: () => 1 }, { transfer: [kept] })')};
      const outside = new ArrayBuffer(3);
      structuredClone(1, { transfer: [outside] });
      return [buffer.byteLength, Array.from(clone.view), clone.view.buffer === clone.buffer, failed, kept.byteLength, outside.byteLength,
        ${['structuredClone(1, { transfer: [kept, kept] })', 'structuredClone(1, { transfer: 5 })', 'structuredClone(1, { transfer: [1] })', 'structuredClone(1, 5)', 'structuredClone()'].map(caught).join(', ')}];
    }`);
    // Where Node 20 differs from the standard (and browsers): a transfer list with something that
    // is not transferable, or with a detached buffer, is a DataCloneError.
    expect(await inSandbox(`() => { const gone = new ArrayBuffer(1); gone.transfer(); return [${['structuredClone(1, { transfer: [{}] })', 'structuredClone(1, { transfer: [gone] })'].map(caught).join(', ')}]; }`)).toEqual([
      { error: 'DataCloneError' },
      { error: 'DataCloneError' },
    ]);
  });

  it('clones structures of any depth: 100,000 nested objects', async () => {
    const got = await inSandbox(`() => {
      let deep = {}; for (let i = 0; i < 100000; i++) deep = { deep, list: [i] };
      let n = 0; for (let x = structuredClone(deep); x.deep; x = x.deep) n++;
      return n;
    }`);
    expect(got).toBe(100_000);
  });

  it('ends a run whose clone does not fit its memory with the memory verdict', async () => {
    const result = await run(`let deep = {}; for (let i = 0; i < 200000; i++) deep = { deep, pad: 'x'.repeat(100) + i }; const clones = []; for (;;) clones.push(structuredClone(deep));`, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/memory limit/) });
  }, 40_000);

  it('keeps working when the connector tampers with the built-ins it uses, and the next run finds them intact', async () => {
    const code = `
      const intact = Map.prototype.set.name === 'set' && !Object.getOwnPropertyDescriptor(Object.prototype, 'a');
      const broken = () => { throw new Error('tampered'); };
      Object.defineProperty(Object.prototype, 'a', { set: broken, get: broken, configurable: true });
      Object.defineProperty(Array.prototype, '0', { set: broken, configurable: true });
      Map.prototype.set = Map.prototype.forEach = Set.prototype.add = Array.prototype.push = Object.keys = Array.isArray = Object.defineProperty = broken;
      Array.prototype[Symbol.iterator] = broken;
      const value = Object.create(null);
      value.a = 1;
      value.m = new Map();
      value.list = [];
      value.list.length = 2;
      const clone = structuredClone(value);
      // QuickJS's own JSON.stringify (the ResponseBody's) goes through Array.prototype setters.
      delete Array.prototype[0];
      Context.SetResponseEntity({ ResponseBody: [intact, JSON.parse(JSON.stringify(Object.getOwnPropertyDescriptor(clone, 'a'))), clone.m instanceof Map, clone.list.length, Object.getPrototypeOf(clone) === Object.prototype] });`;
    const expected = { kind: 'ok', responseBody: [true, { value: 1, writable: true, enumerable: true, configurable: true }, true, 2, true] };
    expect(await runtime.run({ cacheKey: 'bot/clone-tamper@1', code, entity: null, timeoutMs: 2000, allowedHosts: [] })).toMatchObject(expected);
    expect(await runtime.run({ cacheKey: 'bot/clone-tamper@1', code, entity: null, timeoutMs: 2000, allowedHosts: [] })).toMatchObject(expected);
  });
});

describe('structuredClone on a worker thread', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(() => runtime.close());
  const { inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'clone-worker');

  it('clones as Node does', async () => {
    const value = { list: [1, 'two', null, { three: new Date(3) }], map: new Map([['k', new Set([1n])]]), bytes: new Int16Array([-1, 2]) };
    const description = kit.describe(value);
    expect(await inSandbox(CLONE_DESCRIBED, description)).toEqual(await inNode(CLONE_DESCRIBED, description));
  });

  it('clones 100,000 nested arrays within the stack of a worker', async () => {
    expect(await inSandbox(`() => { let deep = []; for (let i = 0; i < 100000; i++) deep = [deep]; let n = 0; for (let x = structuredClone(deep); x.length; x = x[0]) n++; return n; }`)).toBe(100_000);
  });
});
