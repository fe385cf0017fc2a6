import fc from 'fast-check';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { MAX_STREAMS } from './encoding.host';
import { anyString, caught, sameFunctionOnBothSides } from './globals.fixture';

const MiB = 1024 * 1024;

describe('TextEncoder and TextDecoder', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());
  const { run, inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'encoding');
  const same = async (fn: string, input: unknown = null) => expect(await inSandbox(fn, input)).toEqual(await inNode(fn, input));

  /** Bytes that are often UTF-8, sometimes broken: sequences of every length, truncated ones, stray continuation bytes, BOMs. */
  const utf8ish = fc
    .array(
      fc.oneof(
        anyString(4).map((text) => [...Buffer.from(text)]),
        fc.constantFrom([0xef, 0xbb, 0xbf], [0xe2, 0x82], [0xf0, 0x9f], [0x80], [0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]),
        fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 4 }),
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.flat());

  it('encodes any string as Node does: lone surrogates become U+FFFD', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyString(), { maxLength: 20 }), async (strings) => {
        await same(`(strings) => strings.map((s) => Array.from(new TextEncoder().encode(s)))`, strings);
      }),
      { numRuns: 60 },
    );
  });

  it('decodes any bytes as Node does, replacing or refusing (fatal) what is not UTF-8, with and without the BOM', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(utf8ish, { maxLength: 20 }), async (inputs) => {
        await same(
          `(inputs) => inputs.map((bytes) => {
            const input = new Uint8Array(bytes);
            const fatal = (() => { try { return new TextDecoder('utf-8', { fatal: true }).decode(input); } catch (e) { return e.name; } })();
            return [new TextDecoder().decode(input), new TextDecoder('utf-8', { ignoreBOM: true }).decode(input), fatal];
          })`,
          inputs,
        );
      }),
      { numRuns: 60 },
    );
  });

  it('drops a byte order mark only where it opens the stream, however the stream is cut', async () => {
    const fn = `() => {
      const bytes = [0xe0, 0xa0, 0x80, 0xef, 0xbb, 0xbf, 0x41];
      const decoder = new TextDecoder();
      const streamed = decoder.decode(new Uint8Array(bytes.slice(0, 1)), { stream: true }) + decoder.decode(new Uint8Array(bytes.slice(1)));
      const opening = new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]));
      return [streamed, opening, decoder.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x42]))];
    }`;
    expect(await inSandbox(fn, null)).toEqual(['\u0800\ufeffA', 'A', 'B']);
  });

  it('decodes a stream cut anywhere as the whole input at once, which Node decodes alike', async () => {
    const cuts = utf8ish.chain((bytes) => fc.tuple(fc.constant(bytes), fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 4 })));
    await fc.assert(
      fc.asyncProperty(fc.array(cuts, { maxLength: 10 }), async (inputs) => {
        const fn = `(inputs) => inputs.map(([bytes, cuts]) => {
          const points = [0, ...cuts.sort((a, b) => a - b), bytes.length];
          const decoder = new TextDecoder('utf-8');
          let text = '';
          for (let i = 1; i < points.length; i++) text += decoder.decode(new Uint8Array(bytes.slice(points[i - 1], points[i])), { stream: i < points.length - 1 });
          return [text, new TextDecoder().decode(new Uint8Array(bytes))];
        })`;
        const got = (await inSandbox(fn, inputs)) as Array<[string, string]>;
        // The whole input as Node decodes it (Node 24's streams drop a BOM met later in a stream when
        // no text came before it; the sandbox keeps the standard's).
        expect(got.map(([, whole]) => whole)).toEqual(((await inNode(fn, inputs)) as Array<[string, string]>).map(([, whole]) => whole));
        for (const [streamed, whole] of got) expect(streamed).toBe(whole);
      }),
      { numRuns: 40 },
    );
  });

  it('encodes into a Uint8Array of any size as Node does: whole characters only, read and written counts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(anyString(), fc.integer({ min: 0, max: 50 })), { maxLength: 20 }), async (cases) => {
        await same(
          `(cases) => cases.map(([text, size]) => { const into = new Uint8Array(size + 2).subarray(1, size + 1); const r = new TextEncoder().encodeInto(text, into); return [r.read, r.written, Array.from(into)]; })`,
          cases,
        );
      }),
      { numRuns: 60 },
    );
  });

  it('knows the labels Node knows, ASCII whitespace and case ignored, and refuses others with a RangeError', async () => {
    const labels = ['utf-8', ' UTF8 ', 'unicode-1-1-utf-8', 'utf-16', 'UTF-16LE', 'utf-16be', 'latin1', 'ascii', 'iso-8859-1', 'windows-1252', 'iso-8859-2', 'koi8-r', 'shift_jis', 'gbk', 'gb18030', 'big5', 'euc-kr', 'replacement', 'utf-7', 'x-user-defined-nope', '', 'u'.repeat(100)];
    await same(`(labels) => labels.map((label) => ${caught('new TextDecoder(label).encoding')})`, labels);
    expect(await inSandbox(`() => { try { new TextDecoder('nope'); } catch (e) { return [e instanceof RangeError, e.message]; } }`)).toEqual([true, 'The "nope" encoding is not supported.']);
  });

  it('decodes UTF-16 and the legacy encodings as Node does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }), async (bytes) => {
        await same(`(bytes) => ['utf-16le', 'utf-16be', 'iso-8859-2', 'windows-1251', 'koi8-r', 'shift_jis', 'gbk'].map((label) => new TextDecoder(label).decode(new Uint8Array(bytes)))`, bytes);
      }),
      { numRuns: 30 },
    );
  });

  it('decodes windows-1252 (latin1, ascii) as the standard says, where Node 20 decodes ISO-8859-1', async () => {
    const got = await inSandbox(`() => ['latin1', 'ascii', 'windows-1252'].map((label) => new TextDecoder(label).decode(new Uint8Array([0x41, 0x80, 0x81, 0x8a, 0x9f, 0xa0, 0xe9, 0xff])))`);
    expect(got).toEqual(Array(3).fill('A\u20AC\u0081\u0160\u0178\u00A0\u00E9\u00FF'));
  });

  it('reads every kind of buffer source, and refuses anything else with a TypeError', async () => {
    const got = await inSandbox(`() => {
      const bytes = new TextEncoder().encode('xhéllo!');
      const shared = new SharedArrayBuffer(3); new Uint8Array(shared).set([0x61, 0x62, 0x63]);
      const detached = new ArrayBuffer(4); const detachedView = new Uint8Array(detached); detached.transfer();
      const d = new TextDecoder();
      const inputs = [bytes, bytes.buffer, bytes.subarray(1, 4), new DataView(bytes.buffer, 1, 3), new Uint16Array(bytes.buffer, 0, 2), shared, new Uint8Array(shared, 1), detached, detachedView, undefined];
      const refused = [null, 'abc', [104, 105], {}, 5].map((x) => { try { d.decode(x); return 'decoded'; } catch (e) { return e.constructor.name; } });
      return [inputs.map((x) => d.decode(x)), refused, d.decode(), new TextEncoder().encode().length];
    }`);
    expect(got).toEqual([['xhéllo!', 'xhéllo!', 'hé', 'hé', 'xhé', 'abc', 'bc', '', '', ''], ['TypeError', 'TypeError', 'TypeError', 'TypeError', 'TypeError'], '', 0]);
  });

  it('has the shape of the standard interfaces', async () => {
    const fn = `() => {
      const e = new TextEncoder(), d = new TextDecoder('utf-16', { fatal: 1, ignoreBOM: 'yes' });
      return [e.encoding, Object.prototype.toString.call(e), Object.prototype.toString.call(d), d.encoding, d.fatal, d.ignoreBOM, typeof TextDecoder.prototype.decode, Object.keys(TextDecoder.prototype).sort(), e.encode('a') instanceof Uint8Array];
    }`;
    await same(fn);
  });

  it('keeps no decoder state from one run to the next', async () => {
    // The same sandbox (cache key): the first run leaves a decoder in the middle of a character.
    const code = `const d = new TextDecoder();
      const first = Context.GetRequestEntity().RequestBody.first;
      Context.SetResponseEntity({ ResponseBody: first ? d.decode(new Uint8Array([0xe2, 0x82]), { stream: true }) : d.decode(new Uint8Array([0xac])) });`;
    const entity = (first: boolean) => ({ RequestParams: '', RequestHeaders: '', RequestBody: { first }, ResponseBody: null });
    expect(await runtime.run({ cacheKey: 'bot/stream-leak@1', code, entity: entity(true), timeoutMs: 2000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: '' });
    expect(await runtime.run({ cacheKey: 'bot/stream-leak@1', code, entity: entity(false), timeoutMs: 2000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: '\uFFFD' });
    expect(await runtime.run({ cacheKey: 'bot/stream-leak@2', code, entity: entity(false), timeoutMs: 2000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: '\uFFFD' });
  });

  it(`ends the run when it leaves more than ${MAX_STREAMS} decoders in the middle of a stream`, async () => {
    const result = await run(`for (;;) new TextDecoder().decode(new Uint8Array([0xe2]), { stream: true });`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/more than 1000 TextDecoder streams/) });
  });

  it('refuses a 200 MiB string at once with a RangeError, in a run allowed the memory to hold it', async () => {
    const started = Date.now();
    const result = await run(
      `const big = 'x'.repeat(200 * 1024 * 1024);
       const errors = [];
       for (const f of [() => new TextEncoder().encode(big), () => new TextEncoder().encodeInto(big, new Uint8Array(40 * 1024 * 1024))]) { try { f(); } catch (e) { errors.push(e.name + ': ' + e.message); } }
       Context.SetResponseEntity({ ResponseBody: errors });`,
      { limits: { memoryBytes: 512 * MiB }, timeoutMs: 20_000 },
    );
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: ['RangeError: TextEncoder.encode: at most 32 Mi characters per call; encode the text in parts.', 'RangeError: TextEncoder.encodeInto: at most 32 Mi characters per call; encode the text in parts.'],
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('refuses to decode more than 32 MiB in one call; in parts, with { stream: true }, the same bytes decode', async () => {
    const result = await run(
      `const bytes = new Uint8Array(33 * 1024 * 1024).fill(0x61);
       let error = '';
       try { new TextDecoder().decode(bytes); } catch (e) { error = e.name + ': ' + e.message; }
       const d = new TextDecoder(); let length = 0;
       for (let i = 0; i < bytes.length; i += 8 * 1024 * 1024) length += d.decode(bytes.subarray(i, i + 8 * 1024 * 1024), { stream: true }).length;
       Context.SetResponseEntity({ ResponseBody: { error, length: length + d.decode().length } });`,
      { limits: { memoryBytes: 256 * MiB }, timeoutMs: 20_000 },
    );
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: { error: 'RangeError: TextDecoder.decode: at most 32 Mi bytes per call; decode larger inputs in parts with { stream: true }.', length: 33 * MiB },
    });
  }, 30_000);

  it('ends a run whose huge input passes its memory limit with the memory verdict', async () => {
    const result = await run(`new TextEncoder().encode('x'.repeat(200 * 1024 * 1024));`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/memory limit of 64 MiB/) });
  });

  it('keeps working when the connector tampers with the built-ins it uses, and the next run finds them intact', async () => {
    const code = `
      const intact = Array.prototype.push.name === 'push' && Function.prototype.call.name === 'call';
      const broken = () => { throw new Error('tampered'); };
      const TypedArray = Object.getPrototypeOf(Uint8Array.prototype);
      for (const name of ['buffer', 'byteOffset', 'byteLength', 'length']) Object.defineProperty(TypedArray, name, { get: broken });
      Uint8Array.prototype.set = TypedArray.set = Array.prototype.push = String.prototype.slice = ArrayBuffer.prototype.slice = Function.prototype.call = broken;
      Array.prototype[Symbol.iterator] = broken;
      const into = new Uint8Array(8);
      const units = new Uint16Array(2);
      units[0] = 0x6968;
      units[1] = 0x21;
      const { read, written } = new TextEncoder().encodeInto('h\u20ACllo', into);
      const encoded = Array.from(new TextEncoder().encode('h\u20AC')).join(',');
      Context.SetResponseEntity({ ResponseBody: [intact, encoded, new TextDecoder().decode(units), read, written] });`;
    const expected = { kind: 'ok', responseBody: [true, '104,226,130,172', 'hi!\u0000', 5, 7] };
    // Named in the code, the module is in the sandbox before the connector runs; the second run meets the first one's sandbox.
    expect(await runtime.run({ cacheKey: 'bot/tamper@1', code, entity: null, timeoutMs: 2000, allowedHosts: [] })).toMatchObject(expected);
    expect(await runtime.run({ cacheKey: 'bot/tamper@1', code, entity: null, timeoutMs: 2000, allowedHosts: [] })).toMatchObject(expected);
  });
});

describe('TextEncoder and TextDecoder on a worker thread', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(() => runtime.close());
  const { inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'encoding-worker');

  it('round-trips text through bytes, as Node does', async () => {
    const fn = `(text) => { const bytes = new TextEncoder().encode(text); return [Array.from(bytes), new TextDecoder().decode(bytes), new TextDecoder('utf-16le').decode(new Uint16Array([...text].map((c) => c.charCodeAt(0))))]; }`;
    const input = 'Grüße, 世界 \uD83D\uDE00 \uDC00';
    expect(await inSandbox(fn, input)).toEqual(await inNode(fn, input));
  });

  it('streams across calls within a run only', async () => {
    const code = `const d = new TextDecoder(); const first = Context.GetRequestEntity().RequestBody.first;
      Context.SetResponseEntity({ ResponseBody: first ? d.decode(new Uint8Array([0xf0, 0x9f]), { stream: true }) + d.decode(new Uint8Array([0x98, 0x80])) : d.decode(new Uint8Array([0x98, 0x80])) });`;
    const entity = (first: boolean) => ({ RequestParams: '', RequestHeaders: '', RequestBody: { first }, ResponseBody: null });
    expect(await runtime.run({ cacheKey: 'bot/worker-stream@1', code, entity: entity(true), timeoutMs: 2000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: '\uD83D\uDE00' });
    expect(await runtime.run({ cacheKey: 'bot/worker-stream@1', code, entity: entity(false), timeoutMs: 2000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: '\uFFFD\uFFFD' });
  });
});
