import type { ConnectorRunRequest, ConnectorRunResult } from '@gi/domain';
import { DEFAULT_RUN_LIMITS } from '../sandbox-environment';
import { createHash } from 'node:crypto';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { cryptoModule } from './crypto.host';
import { RunLimitExceeded, SandboxError, type HostRun } from './host-module';

/**
 * Connector code that attacks `crypto`: forged keys, keys or their ids carried into another run or
 * integration, tampered prototypes, huge inputs, floods of work. Each attack must stay within the
 * attacking run.
 */

/** A run as host functions see it, for calling them directly. */
function hostRun(): HostRun & { cpuMs: number } {
  const locals = new Map<string, unknown>();
  return {
    cpuMs: 0,
    input: { limits: DEFAULT_RUN_LIMITS } as unknown as HostRun['input'],
    env: {} as HostRun['env'],
    signal: new AbortController().signal,
    timers: {} as HostRun['timers'],
    startedAt: performance.now(),
    timeOrigin: Date.now(),
    local<T>(key: string, make: () => T): T {
      if (!locals.has(key)) locals.set(key, make());
      return locals.get(key) as T;
    },
    exceeded(message: string): never {
      throw new RunLimitExceeded(message);
    },
    spendCpu(ms: number) {
      this.cpuMs += ms;
    },
    nextTurn: () => Promise.resolve(),
    halt: () => undefined,
    onIdle: () => undefined,
  };
}

describe('crypto key ids, called on the host directly', () => {
  const fns = cryptoModule.functions;
  const hmac = { name: 'HMAC', hash: 'SHA-256' };
  const importSecret = async (run: HostRun) => JSON.parse((await fns.importKey(run, 'raw', new Uint8Array(32).fill(7), hmac, false, ['sign'])) as string) as { id: string };

  it('mean nothing to another run: its keys are its own, and the same import gets another id', async () => {
    const first = hostRun();
    const second = hostRun();
    const key = await importSecret(first);
    expect(await fns.sign(first, { name: 'HMAC' }, key.id, new Uint8Array(1))).toBeInstanceOf(Uint8Array);
    await expect(fns.sign(second, { name: 'HMAC' }, key.id, new Uint8Array(1))).rejects.toEqual(new SandboxError('TypeError', 'The key is not a CryptoKey of this run.'));
    await expect(fns.exportKey(second, 'jwk', key.id)).rejects.toBeInstanceOf(SandboxError);
    const again = await importSecret(second);
    expect(again.id).not.toBe(key.id);
    expect((await importSecret(first)).id).toBe(key.id); // the same import in the same run: the same key
    expect(first.cpuMs).toBeGreaterThan(0);
  });

  it('cannot be guessed or passed as anything else', async () => {
    const run = hostRun();
    const key = await importSecret(run);
    for (const forged of [`${key.id}x`, key.id.slice(0, -1), 'k.AAAAAAAAAAAAAAAAAAAAAA', 1, null, { id: key.id }, [key.id]]) {
      await expect(fns.sign(run, { name: 'HMAC' }, forged, new Uint8Array(1))).rejects.toBeInstanceOf(SandboxError);
    }
    // A key id put where the algorithm names a key reaches only keys of the same run, checked by Node.
    await expect(fns.deriveBits(hostRun(), { name: 'ECDH', public: { $key: key.id } }, key.id, 256)).rejects.toBeInstanceOf(SandboxError);
  });
});

describe.each([
  ['in process', 0],
  ['on a worker thread', 1],
])('hostile connector code against crypto (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  let key = 0;
  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}): Promise<ConnectorRunResult> =>
    runtime.run({ cacheKey: `bot/crypto-attack@${++key}`, code, entity: null, timeoutMs: 10_000, allowedHosts: [], ...extra });
  const answer = (body: string) => `Context.SetResponseEntity({ ResponseBody: await (async () => { ${body} })() });`;
  const SIGN = `const sign = async (key) => Array.from(new Uint8Array(await crypto.subtle.sign('HMAC', key, new Uint8Array([1, 2, 3]))));`;

  it('forged keys are refused: objects on the prototype, proxies, subclasses, a faked instanceof', async () => {
    const result = await run(
      answer(`${SIGN}
        const real = await crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
        Object.defineProperty(CryptoKey, Symbol.hasInstance, { value: () => true });
        const forgeries = [Object.create(CryptoKey.prototype), { __proto__: CryptoKey.prototype, type: 'secret', extractable: true, algorithm: { name: 'HMAC' }, usages: ['sign'] },
          new Proxy(real, {}), Object.setPrototypeOf({}, Object.getPrototypeOf(real)), { ...real }, JSON.parse(JSON.stringify(real)), Object.assign(Object.create(CryptoKey.prototype), real)];
        const outcomes = [];
        for (const forged of forgeries) outcomes.push(await sign(forged).then(() => 'signed', (e) => e instanceof TypeError));
        let subclass; try { subclass = new (class extends CryptoKey {})(); } catch (e) { subclass = e instanceof TypeError; }
        return { outcomes, subclass, visible: [Reflect.ownKeys(real).length, JSON.stringify(real), Object.entries(real).length], real: (await sign(real)).length };`),
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: { outcomes: [true, true, true, true, true, true, true], subclass: true, visible: [0, '{}', 0], real: 32 } });
  });

  it('key ids never reach connector code, whatever it hooks', async () => {
    const result = await run(
      answer(`
        const seen = [];
        Object.defineProperty(Object.prototype, 'then', { configurable: true, get() { seen.push(this); return undefined; } });
        Object.prototype.toJSON = function () { seen.push(this); return this; };
        Array.prototype.toJSON = function () { seen.push(this); return this; };
        const parse = JSON.parse; JSON.parse = function (text) { seen.push(text); return parse(text); };
        const iterator = Array.prototype[Symbol.iterator]; Array.prototype[Symbol.iterator] = function () { seen.push(this); return iterator.call(this); };
        const a = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
        const b = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
        await crypto.subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 256);
        const secret = await crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
        await crypto.subtle.exportKey('jwk', secret);
        delete Object.prototype.then; delete Object.prototype.toJSON; delete Array.prototype.toJSON;
        JSON.parse = parse; Array.prototype[Symbol.iterator] = iterator;
        const texts = [];
        const walk = (value, depth) => { if (depth > 4 || value === null || value === undefined) return; if (typeof value === 'string') texts.push(value);
          else if (typeof value === 'object') for (const k of Reflect.ownKeys(value)) { try { walk(value[k], depth + 1); } catch (e) {} } };
        for (const value of seen) walk(value, 0);
        return { hooked: seen.length > 0, ids: texts.filter((t) => /(^|")[ki]\\.[A-Za-z0-9_-]{20,}/.test(t)) };`),
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: { hooked: true, ids: [] } });
  });

  it('a key kept by one run is gone in the next, of the same connector or another', async () => {
    const code = `
      const entity = Context.GetRequestEntity();
      if (entity.RequestBody.first) {
        globalThis.kept = await crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
        CryptoKey.prototype.leak = globalThis.kept;
        Context.SetResponseEntity({ ResponseBody: typeof kept });
        return;
      }
      Context.SetResponseEntity({ ResponseBody: [typeof globalThis.kept, typeof CryptoKey.prototype.leak] });`;
    const request = (cacheKey: string, first: boolean) => ({ cacheKey, code, timeoutMs: 5000, allowedHosts: [], entity: { RequestParams: '', RequestHeaders: '', RequestBody: { first }, ResponseBody: null } });
    expect(await runtime.run(request('bot-a/keys@1', true))).toMatchObject({ kind: 'ok', responseBody: 'object' });
    expect(await runtime.run(request('bot-a/keys@1', false))).toMatchObject({ kind: 'ok', responseBody: ['undefined', 'undefined'] });
    expect(await runtime.run(request('bot-b/keys@1', false))).toMatchObject({ kind: 'ok', responseBody: ['undefined', 'undefined'] });
  });

  it('tampering with the crypto globals, and the built-ins they use, stays within the run', async () => {
    const expected = createHash('sha256').update('abc').digest('hex');
    const check = answer(`
      const bytes = new Uint8Array([97, 98, 99]);
      const digest = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
      const key = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      return [digest, key.type, key.usages, typeof crypto.getRandomValues, crypto instanceof Crypto, new DOMException('x', 'DataError').code];`);
    const pristine = { kind: 'ok', responseBody: [expected, 'secret', ['sign'], 'function', true, 30] };
    // Tampered before the module loads (the name is built at run time) and after.
    const tamper = `
      ArrayBuffer.prototype.slice = function () { return new ArrayBuffer(1); };
      Uint8Array.prototype.set = function () {};
      JSON.parse = () => ({ id: 'forged', type: 'forged', algorithm: {}, usages: [] });
      globalThis.DOMException = function () { return { code: 'forged' }; };
      const c = globalThis['cry' + 'pto'];
      SubtleCrypto.prototype.digest = async () => new Uint8Array([1]).buffer;
      Object.defineProperty(CryptoKey.prototype, 'type', { get: () => 'forged' });
      Object.defineProperty(CryptoKey.prototype, 'usages', { get: () => ['forged'] });
      c.getRandomValues = 'forged';
      Object.defineProperty(Crypto, Symbol.hasInstance, { value: () => false });
      ${check}`;
    const tampered = await runtime.run({ cacheKey: 'bot/crypto-tamper@1', code: tamper, entity: null, timeoutMs: 5000, allowedHosts: [] });
    expect(tampered).toMatchObject({ kind: 'ok', responseBody: ['01', 'forged', ['forged'], 'string', false, 'forged'] });
    // DataError's legacy code is 0: the check reads the real DOMException.
    pristine.responseBody[5] = 0;
    expect(await runtime.run({ cacheKey: 'bot/crypto-tamper@1', code: check, entity: null, timeoutMs: 5000, allowedHosts: [] })).toMatchObject(pristine);
    expect(await runtime.run({ cacheKey: 'bot/crypto-other@1', code: check, entity: null, timeoutMs: 5000, allowedHosts: [] })).toMatchObject(pristine);
  });

  it('huge inputs end in a clear refusal or a limit of the run', async () => {
    const result = await run(
      answer(`
        const tell = (p) => p.then(() => 'ok', (e) => e.name);
        const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return e.name; } };
        return [
          await tell(crypto.subtle.digest('SHA-512', new Uint8Array(9 * 1024 * 1024))),
          await tell(crypto.subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12), additionalData: new Uint8Array(8 * 1024 * 1024) },
            await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']), new Uint8Array(16))),
          await tell(crypto.subtle.importKey('jwk', { kty: 'RSA', n: 'A'.repeat(1 << 20), e: 'AQAB' }, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify'])),
          await tell(crypto.subtle.unwrapKey('raw', new Uint8Array(1 << 20), await crypto.subtle.generateKey({ name: 'AES-KW', length: 128 }, false, ['unwrapKey']), 'AES-KW', 'AES-GCM', false, ['encrypt'])),
          attempt(() => crypto.getRandomValues(new Uint8Array(1 << 20))),
        ];`),
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: ['QuotaExceededError', 'QuotaExceededError', 'QuotaExceededError', 'QuotaExceededError', 'QuotaExceededError'] });
    const endless = await run(`await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, { *[Symbol.iterator]() { for (;;) yield 'encrypt'; } });`, { timeoutMs: 500 });
    expect(endless).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/^(timeout|limit)$/) });
    const looping = await run(`await crypto.subtle.digest({ get name() { for (;;) {} } }, new Uint8Array(1));`, { timeoutMs: 300 });
    expect(looping).toMatchObject({ kind: 'failed', reason: 'timeout' });
  });

  it('a flood of parallel operations ends the run at pendingCalls; work still going on then lands nowhere', async () => {
    const flood = await run(`
      const key = await crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const all = []; for (let i = 0; i < 5000; i++) all.push(crypto.subtle.sign('HMAC', key, new Uint8Array(64)).catch(() => {}));
      await Promise.all(all);`);
    expect(flood).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/more than 8 HTTP requests, file reads and crypto operations at once/) });
    // A run that leaves slow work behind ends at once; the next run on the thread is untouched by it.
    const left = await run(`for (let i = 0; i < 4; i++) crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign']).then(() => Context.Log('late'));`);
    expect(left).toMatchObject({ kind: 'ok', logs: [] });
    const next = await run(answer(`return [typeof globalThis.late, (await crypto.subtle.digest('SHA-1', new Uint8Array(0))).byteLength];`));
    expect(next).toMatchObject({ kind: 'ok', responseBody: ['undefined', 20], logs: [] });
  });
});

describe('sandbox threads stopped while a connector makes keys', () => {
  // Node aborts the whole process when a worker thread is terminated as a key generation it started
  // completes (every Node version here; KeyGenJob::ToResult). A connector that makes keys nonstop on
  // a thread being stopped must leave the process running.
  it('closing the runtime mid-generation leaves the process running', async () => {
    const makeKeys = `
      const loop = async () => { for (;;) await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']); };
      await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']);
      Context.SetProgress(1);
      await Promise.all([loop(), loop(), loop(), loop()]);`;
    for (let round = 0; round < 12; round++) {
      const runtime = await createQuickJsRuntime({ workers: 1 });
      let generating!: () => void;
      const started = new Promise<void>((resolve) => (generating = resolve));
      const running = runtime.run({ cacheKey: 'bot/keys-forever@1', code: makeKeys, entity: null, timeoutMs: 10_000, allowedHosts: [], onProgress: () => generating() });
      await started;
      await new Promise((resolve) => setTimeout(resolve, round % 4));
      await runtime.close();
      expect(await running).toMatchObject({ kind: 'failed', message: expect.stringMatching(/closed during the run/) });
    }
    // Twelve sandbox threads started one after another: seconds each while the other tiers share the cores.
  }, 180_000);
});
