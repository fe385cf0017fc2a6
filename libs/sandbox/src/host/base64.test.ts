import fc from 'fast-check';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { anyString, caught, sameFunctionOnBothSides } from './globals.fixture';

const MiB = 1024 * 1024;

describe.each([
  ['in-process', 0],
  ['on a worker thread', 1],
])('atob and btoa (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());
  const { run, inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, `base64-${workers}`);
  const same = async (fn: string, input: unknown = null) => expect(await inSandbox(fn, input)).toEqual(await inNode(fn, input));

  const bytes = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 40 });
  /** Base64 as it comes: padded or not, with ASCII whitespace, sometimes broken (a stray character, a misplaced "=", a bad length). */
  const base64ish = fc
    .tuple(bytes, fc.array(fc.tuple(fc.nat(), fc.constantFrom(' ', '\t', '\n', '\f', '\r', '=', '==', '-', '_', '.', '\u00e9', '\u0000', '\uFEFF', 'A')), { maxLength: 3 }), fc.boolean())
    .map(([text, inserts, unpadded]) => {
      let encoded = Buffer.from(text, 'latin1').toString('base64');
      if (unpadded) encoded = encoded.replace(/=+$/, '');
      for (const [at, what] of inserts) encoded = encoded.slice(0, at % (encoded.length + 1)) + what + encoded.slice(at % (encoded.length + 1));
      return encoded;
    });

  it('encodes any string of bytes as Node does, and refuses characters above U+00FF with an InvalidCharacterError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(bytes, anyString()), { maxLength: 20 }), async (strings) => {
        await same(`(strings) => strings.map((s) => ${caught('btoa(s)')})`, strings);
      }),
      { numRuns: 40 },
    );
  });

  it('decodes forgiving base64 as Node does: whitespace ignored, padding optional, the rest an InvalidCharacterError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(base64ish, { maxLength: 20 }), async (strings) => {
        await same(`(strings) => strings.map((s) => ${caught('atob(s)')})`, strings);
      }),
      { numRuns: 60 },
    );
  });

  it('round-trips bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(bytes, { maxLength: 20 }), async (strings) => {
        expect(await inSandbox(`(strings) => strings.map((s) => atob(btoa(s)) === s)`, strings)).toEqual(strings.map(() => true));
      }),
      { numRuns: 20 },
    );
  });

  it('converts its argument as WebIDL says, and throws DOMExceptions of the standard kind', async () => {
    await same(`() => [${['atob(null)', 'btoa(null)', 'btoa(undefined)', 'btoa(12)', 'btoa({ toString: () => "x" })', 'atob(undefined)', 'atob()', 'btoa()', 'btoa(Symbol())', 'atob("YQ")', 'atob("YR==")', 'atob("Y===")'].map(caught).join(', ')}]`);
    expect(await inSandbox(`() => { try { atob('*'); } catch (e) { return [e instanceof DOMException, e.name, e.code, e.message]; } }`)).toEqual([true, 'InvalidCharacterError', 5, 'Invalid character']);
  });

  it('refuses a 100 MiB input at once with a RangeError, in a run allowed the memory to hold it', async () => {
    const started = Date.now();
    const result = await run(
      `const big = 'QUJD'.repeat(25 * 1024 * 1024);
       const errors = [];
       for (const f of [() => atob(big), () => btoa(big)]) { try { f(); } catch (e) { errors.push(e.name + ': ' + e.message); } }
       Context.SetResponseEntity({ ResponseBody: errors });`,
      { limits: { memoryBytes: 256 * MiB }, timeoutMs: 20_000 },
    );
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: ['RangeError: atob: at most 32 Mi characters per call; convert the data in parts.', 'RangeError: btoa: at most 32 Mi characters per call; convert the data in parts.'],
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('keeps working when the connector replaces String.prototype methods, and the next run finds them intact', async () => {
    const code = `const intact = String.prototype.replace.name === 'replace';
      String.prototype.replace = String.prototype.charCodeAt = String.prototype.toString = () => { throw new Error('tampered'); };
      Context.SetResponseEntity({ ResponseBody: [intact, btoa('hi'), atob('aGk=')] });`;
    for (let i = 0; i < 2; i++) {
      expect(await runtime.run({ cacheKey: `bot/base64-tamper-${workers}@1`, code, entity: null, timeoutMs: 2000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: [true, 'aGk=', 'hi'] });
    }
  });
});
