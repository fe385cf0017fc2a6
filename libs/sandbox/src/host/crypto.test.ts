import type { ConnectorRunRequest, ConnectorRunResult } from '@gi/domain';
import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import {
  constants,
  type CipherGCMTypes,
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  pbkdf2Sync,
  privateDecrypt,
  publicEncrypt,
  sign,
  verify,
  webcrypto,
} from 'node:crypto';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { MAX_KEYS } from './crypto-keys';

/** Helpers every test connector gets: bytes to and from hex, and base64url without atob/btoa. */
const HELPERS = `
const fromHex = (h) => new Uint8Array((h.match(/../g) || []).map((b) => parseInt(b, 16)));
const toHex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const fromBase64 = (text) => { const clean = text.replace(/[^A-Za-z0-9+/]/g, ''); const out = []; let bits = 0, value = 0;
  for (const c of clean) { value = (value << 6) | B64.indexOf(c); bits += 6; if (bits >= 8) { bits -= 8; out.push((value >> bits) & 255); } } return new Uint8Array(out); };
const base64url = (bytes) => { const b = new Uint8Array(bytes); let s = '';
  for (let i = 0; i < b.length; i += 3) { const n = (b[i] << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0);
    s += B64[n >> 18] + B64[(n >> 12) & 63] + (i + 1 < b.length ? B64[(n >> 6) & 63] : '') + (i + 2 < b.length ? B64[n & 63] : ''); }
  return s.replace(/\\+/g, '-').replace(/\\//g, '_'); };
const ascii = (text) => new Uint8Array(Array.from(text, (c) => c.charCodeAt(0)));
/** The bytes in a larger buffer, surrounded by 0xAA: as a view with an offset, a DataView, or an ArrayBuffer. */
const placed = (bytes, kind) => { const buffer = new Uint8Array(bytes.length + 13).fill(0xaa); buffer.set(bytes, 7);
  return kind === 'dataview' ? new DataView(buffer.buffer, 7, bytes.length) : kind === 'buffer' ? bytes.slice().buffer : kind === 'uint16' && bytes.length % 2 === 0 ? new Uint16Array(buffer.slice(7, 7 + bytes.length).buffer) : new Uint8Array(buffer.buffer, 7, bytes.length); };
`;

const hex = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('hex');
const KINDS = ['view', 'dataview', 'buffer', 'uint16'] as const;
const HASHES = ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512'] as const;
const nodeHash = (name: string) => name.replace('-', '').toLowerCase();

function harness(workers: number) {
  let runtime: QuickJsConnectorRuntime;
  let key = 0;
  const setup = async () => {
    runtime = await createQuickJsRuntime({ workers });
  };
  const run = (code: string, input: unknown = null, extra: Partial<ConnectorRunRequest> = {}): Promise<ConnectorRunResult> =>
    runtime.run({
      cacheKey: `bot/crypto@${++key}`,
      code: `${HELPERS}\nconst input = Context.GetRequestEntity()?.RequestBody;\n${code}`,
      entity: { RequestParams: '', RequestHeaders: '', RequestBody: input, ResponseBody: null },
      timeoutMs: 20_000,
      allowedHosts: [],
      ...extra,
    });
  /** What the body (of an async function) returns, from inside a connector. */
  const value = async (body: string, input: unknown = null, extra: Partial<ConnectorRunRequest> = {}) => {
    const result = await run(`Context.SetResponseEntity({ ResponseBody: await (async () => { ${body} })() });`, input, extra);
    if (result.kind !== 'ok') throw new Error(JSON.stringify(result));
    return result.responseBody as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  return { setup, close: () => runtime.close(), run, value };
}

/** A connector body that runs `code` and returns [name, is a DOMException, is a TypeError] of what it throws, or 'ok'. */
const outcome = (code: string) => `try { await (async () => { ${code} })(); return 'ok'; } catch (e) { return [e.name, e instanceof DOMException, e instanceof TypeError]; }`;

describe('crypto (in process)', () => {
  const { setup, close, run, value } = harness(0);
  beforeAll(setup);
  afterAll(close);

  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const der = (key: typeof rsa.privateKey | typeof rsa.publicKey) =>
    key.type === 'private' ? hex(key.export({ format: 'der', type: 'pkcs8' })) : hex(key.export({ format: 'der', type: 'spki' }));

  describe('the globals', () => {
    it('are those of Workers and browsers: classes, one crypto and one subtle, tags, enumerable members', async () => {
      expect(
        await value(`return [typeof crypto, crypto instanceof Crypto, crypto.subtle instanceof SubtleCrypto, crypto.subtle === crypto.subtle,
          String(crypto), Object.prototype.toString.call(crypto.subtle), typeof CryptoKey,
          Object.keys(Crypto.prototype).sort(), Object.keys(SubtleCrypto.prototype).sort(), Object.keys(CryptoKey.prototype).sort(),
          CryptoKey.prototype[Symbol.toStringTag], SubtleCrypto.prototype.encrypt.length, SubtleCrypto.prototype.unwrapKey.length];`),
      ).toEqual([
        'object',
        true,
        true,
        true,
        '[object Crypto]',
        '[object SubtleCrypto]',
        'function',
        ['getRandomValues', 'randomUUID', 'subtle'],
        ['decrypt', 'deriveBits', 'deriveKey', 'digest', 'encrypt', 'exportKey', 'generateKey', 'importKey', 'sign', 'unwrapKey', 'verify', 'wrapKey'],
        ['algorithm', 'extractable', 'type', 'usages'],
        'CryptoKey',
        3,
        7,
      ]);
    });

    it('cannot be constructed, and their methods refuse another this', async () => {
      const got = await value(`
        const errors = [];
        for (const make of [() => new CryptoKey(), () => new Crypto(), () => new SubtleCrypto(), () => new (class extends CryptoKey {})()]) {
          try { make(); errors.push('made'); } catch (e) { errors.push(e instanceof TypeError); }
        }
        for (const call of [() => Crypto.prototype.getRandomValues.call({}, new Uint8Array(1)), () => Crypto.prototype.randomUUID.call(Object.create(crypto)),
          () => Object.getOwnPropertyDescriptor(Crypto.prototype, 'subtle').get.call({}), () => Object.getOwnPropertyDescriptor(CryptoKey.prototype, 'type').get.call({})]) {
          try { call(); errors.push('called'); } catch (e) { errors.push(e instanceof TypeError); }
        }
        // Promise-returning methods reject rather than throw.
        const rejected = SubtleCrypto.prototype.digest.call({}, 'SHA-256', new Uint8Array(1));
        errors.push(rejected instanceof Promise, await rejected.then(() => 'resolved', (e) => e instanceof TypeError));
        errors.push(await crypto.subtle.digest('SHA-256').then(() => 'resolved', (e) => e.message));
        return errors;`);
      expect(got).toEqual([true, true, true, true, true, true, true, true, true, true, "Failed to execute 'digest' on 'SubtleCrypto': 2 arguments required, but only 1 present."]);
    });
  });

  describe('getRandomValues and randomUUID', () => {
    it('fills every integer array type in place, only its own bytes, and returns it', async () => {
      const got = await value(`
        const results = [];
        for (const Type of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array]) {
          const array = new Type(64);
          results.push([Type.name, crypto.getRandomValues(array) === array, array.some((x) => x != 0)]);
        }
        const buffer = new Uint8Array(32);
        const view = new Uint8Array(buffer.buffer, 8, 16);
        crypto.getRandomValues(view);
        const outside = [...buffer.slice(0, 8), ...buffer.slice(24)];
        return { results, outsideUntouched: outside.every((x) => x === 0), inside: view.some((x) => x !== 0), empty: crypto.getRandomValues(new Uint8Array(0)).length };`);
      expect(got.results.every(([, same, filled]: [string, boolean, boolean]) => same && filled)).toBe(true);
      expect(got).toMatchObject({ outsideUntouched: true, inside: true, empty: 0 });
    });

    it('refuses float arrays and DataViews (TypeMismatchError), non-views (TypeError) and more than 65,536 bytes (QuotaExceededError)', async () => {
      const got = await value(`
        const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return [e.name, e instanceof DOMException, e.code]; } };
        return [new Float32Array(1), new Float64Array(1), new DataView(new ArrayBuffer(4)), new ArrayBuffer(4), [1, 2], 'x', new Uint8Array(65536), new Uint32Array(16385)]
          .map((value) => attempt(() => crypto.getRandomValues(value)));`);
      expect(got).toEqual([
        ['TypeMismatchError', true, 17],
        ['TypeMismatchError', true, 17],
        ['TypeMismatchError', true, 17],
        ['TypeError', false, null],
        ['TypeError', false, null],
        ['TypeError', false, null],
        'ok',
        ['QuotaExceededError', true, 22],
      ]);
    });

    it('gives version 4 UUIDs, and every run new random values although each starts from the same memory image', async () => {
      const code = `return { uuids: [crypto.randomUUID(), crypto.randomUUID()], bytes: toHex(crypto.getRandomValues(new Uint8Array(16))) };`;
      const request = { cacheKey: 'bot/crypto-random@1', entity: null, timeoutMs: 5000, allowedHosts: [] };
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await value(code, null, request));
      const uuids = runs.flatMap((r) => r.uuids);
      for (const uuid of uuids) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set(uuids).size).toBe(6);
      expect(new Set(runs.map((r) => r.bytes)).size).toBe(3);
    });
  });

  describe('the same results as Node', () => {
    it('digest: SHA-1, SHA-256, SHA-384 and SHA-512 of any bytes, from any kind of BufferSource', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.record({ bytes: fc.uint8Array({ maxLength: 600 }), kind: fc.constantFrom(...KINDS) }), { minLength: 1, maxLength: 6 }), async (cases) => {
          const inputs = cases.map(({ bytes, kind }) => ({ hex: hex(bytes), kind }));
          const got = await value(
            `const out = []; for (const { hex, kind } of input) for (const hash of ${JSON.stringify(HASHES)}) out.push(toHex(await crypto.subtle.digest(hash, placed(fromHex(hex), kind)))); return out;`,
            inputs,
          );
          expect(got).toEqual(cases.flatMap(({ bytes }) => HASHES.map((name) => createHash(nodeHash(name)).update(bytes).digest('hex'))));
        }),
        { numRuns: 30 },
      );
    });

    it('HMAC: sign and verify with raw and JWK keys of any length', async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.uint8Array({ maxLength: 500 }), fc.constantFrom(...HASHES), fc.constantFrom(...KINDS), async (keyBytes, data, hash, kind) => {
          const got = await value(
            `const raw = await crypto.subtle.importKey('raw', placed(fromHex(input.key), input.kind), { name: 'HMAC', hash: input.hash }, true, ['sign', 'verify']);
             const jwk = await crypto.subtle.importKey('jwk', await crypto.subtle.exportKey('jwk', raw), { name: 'HMAC', hash: input.hash }, false, ['verify']);
             const data = placed(fromHex(input.data), input.kind);
             const signature = await crypto.subtle.sign('HMAC', raw, data);
             const tampered = new Uint8Array(signature.slice(0)); tampered[0] ^= 1;
             return [toHex(signature), await crypto.subtle.verify({ name: 'HMAC' }, jwk, signature, data), await crypto.subtle.verify('HMAC', raw, tampered, data)];`,
            { key: hex(keyBytes), data: hex(data), hash, kind },
          );
          expect(got).toEqual([createHmac(nodeHash(hash), keyBytes).update(data).digest('hex'), true, false]);
        }),
        { numRuns: 30 },
      );
    });

    it('AES-GCM: what the connector encrypts Node decrypts, and the reverse', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(16, 24, 32).chain((size) => fc.uint8Array({ minLength: size, maxLength: size })),
          fc.uint8Array({ minLength: 12, maxLength: 12 }),
          fc.uint8Array({ maxLength: 64 }),
          fc.uint8Array({ maxLength: 400 }),
          async (key, iv, aad, plain) => {
            const cipher = createCipheriv(`aes-${key.length * 8}-gcm` as CipherGCMTypes, key, iv).setAAD(aad);
            const nodeSealed = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
            const got = await value(
              `const key = await crypto.subtle.importKey('raw', fromHex(input.key), 'AES-GCM', false, ['encrypt', 'decrypt']);
               const params = { name: 'AES-GCM', iv: placed(fromHex(input.iv), 'dataview'), additionalData: placed(fromHex(input.aad), 'view') };
               return [toHex(await crypto.subtle.encrypt(params, key, fromHex(input.plain))), toHex(await crypto.subtle.decrypt(params, key, fromHex(input.sealed)))];`,
              { key: hex(key), iv: hex(iv), aad: hex(aad), plain: hex(plain), sealed: hex(nodeSealed) },
            );
            expect(got).toEqual([hex(nodeSealed), hex(plain)]);
          },
        ),
        { numRuns: 25 },
      );
    });

    it('RSASSA-PKCS1-v1_5 (pkcs8/spki) and ECDSA P-256 and P-384: signatures Node verifies, and Node signatures verified', async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (data) => {
          const got = await value(
            `const signer = (format, data, algorithm) => crypto.subtle.importKey(format, fromHex(data), algorithm, false, [format === 'pkcs8' ? 'sign' : 'verify']);
             const rsa = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
             const out = { rsa: toHex(await crypto.subtle.sign(rsa, await signer('pkcs8', input.rsa, rsa), fromHex(input.data))) };
             out.rsaVerified = await crypto.subtle.verify(rsa, await signer('spki', input.rsaPublic, rsa), fromHex(input.rsaNode), fromHex(input.data));
             for (const [curve, hash] of [['P-256', 'SHA-256'], ['P-384', 'SHA-384']]) {
               const key = await signer('pkcs8', input[curve], { name: 'ECDSA', namedCurve: curve });
               out[curve] = toHex(await crypto.subtle.sign({ name: 'ECDSA', hash }, key, fromHex(input.data)));
               out[curve + 'Verified'] = await crypto.subtle.verify({ name: 'ECDSA', hash }, await signer('spki', input[curve + 'Public'], { name: 'ECDSA', namedCurve: curve }), fromHex(input[curve + 'Node']), fromHex(input.data));
             }
             return out;`,
            {
              data: hex(data),
              rsa: der(rsa.privateKey),
              rsaPublic: der(rsa.publicKey),
              rsaNode: hex(sign('sha256', data, rsa.privateKey)),
              'P-256': der(p256.privateKey),
              'P-256Public': der(p256.publicKey),
              'P-256Node': hex(sign('sha256', data, { key: p256.privateKey, dsaEncoding: 'ieee-p1363' })),
              'P-384': der(p384.privateKey),
              'P-384Public': der(p384.publicKey),
              'P-384Node': hex(sign('sha384', data, { key: p384.privateKey, dsaEncoding: 'ieee-p1363' })),
            },
          );
          expect(got.rsa).toBe(hex(sign('sha256', data, rsa.privateKey))); // deterministic
          expect(verify('sha256', data, { key: p256.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(got['P-256'], 'hex'))).toBe(true);
          expect(verify('sha384', data, { key: p384.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(got['P-384'], 'hex'))).toBe(true);
          expect([got.rsaVerified, got['P-256Verified'], got['P-384Verified']]).toEqual([true, true, true]);
        }),
        { numRuns: 10 },
      );
    });

    it('RSA-PSS, RSA-OAEP, AES-CBC, AES-CTR, HKDF, PBKDF2, ECDH, Ed25519 and AES-KW', async () => {
      const ecdhPeer = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const ed = generateKeyPairSync('ed25519');
      const key16 = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
      const iv = Buffer.from('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff', 'hex');
      const plain = Buffer.from('The quick brown fox jumps over the lazy dog');
      const got = await value(
        `const s = crypto.subtle, data = fromHex(input.plain), out = {};
         const psKey = await s.importKey('pkcs8', fromHex(input.rsa), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign']);
         out.pss = toHex(await s.sign({ name: 'RSA-PSS', saltLength: 32 }, psKey, data));
         const oaep = await s.importKey('spki', fromHex(input.rsaPublic), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
         out.oaep = toHex(await s.encrypt({ name: 'RSA-OAEP', label: ascii('label') }, oaep, data));
         const aes = (name) => s.importKey('raw', fromHex(input.key16), name, false, ['encrypt']);
         out.cbc = toHex(await s.encrypt({ name: 'AES-CBC', iv: fromHex(input.iv) }, await aes('AES-CBC'), data));
         out.ctr = toHex(await s.encrypt({ name: 'AES-CTR', counter: fromHex(input.iv), length: 64 }, await aes('AES-CTR'), data));
         const hkdf = await s.importKey('raw', fromHex(input.key16), 'HKDF', false, ['deriveBits']);
         out.hkdf = toHex(await s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: ascii('salt'), info: ascii('info') }, hkdf, 336));
         const pbkdf2 = await s.importKey('raw', ascii('password'), 'PBKDF2', false, ['deriveBits', 'deriveKey']);
         out.pbkdf2 = toHex(await s.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: ascii('salt'), iterations: 1000 }, pbkdf2, 512));
         const derived = await s.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt: ascii('salt'), iterations: 1000 }, pbkdf2, { name: 'AES-GCM', length: 256 }, true, ['encrypt']);
         out.derivedKey = toHex(await s.exportKey('raw', derived));
         const ecdh = await s.importKey('pkcs8', fromHex(input.ecdh), { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
         const peer = await s.importKey('spki', fromHex(input.ecdhPeer), { name: 'ECDH', namedCurve: 'P-256' }, false, []);
         out.ecdh = toHex(await s.deriveBits({ name: 'ECDH', public: peer }, ecdh, 256));
         out.ed25519 = toHex(await s.sign('Ed25519', await s.importKey('pkcs8', fromHex(input.ed), 'Ed25519', false, ['sign']), data));
         const kek = await s.importKey('raw', fromHex(input.key16), 'AES-KW', false, ['wrapKey', 'unwrapKey']);
         const inner = await s.importKey('raw', fromHex(input.key16), 'AES-GCM', true, ['encrypt']);
         out.wrapped = toHex(await s.wrapKey('raw', inner, kek, 'AES-KW'));
         out.unwrapped = toHex(await s.exportKey('raw', await s.unwrapKey('raw', fromHex(out.wrapped), kek, 'AES-KW', 'AES-GCM', true, ['encrypt'])));
         return out;`,
        {
          plain: hex(plain),
          rsa: der(rsa.privateKey),
          rsaPublic: der(rsa.publicKey),
          key16: hex(key16),
          iv: hex(iv),
          ecdh: der(p256.privateKey),
          ecdhPeer: der(ecdhPeer.publicKey),
          ed: der(ed.privateKey),
        },
      );
      const decipher = (name: string, data: string) => {
        const d = createDecipheriv(name, key16, iv);
        return Buffer.concat([d.update(Buffer.from(data, 'hex')), d.final()]).toString();
      };
      expect(verify('sha256', plain, { key: rsa.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, Buffer.from(got.pss, 'hex'))).toBe(true);
      expect(privateDecrypt({ key: rsa.privateKey, oaepHash: 'sha256', oaepLabel: Buffer.from('label') }, Buffer.from(got.oaep, 'hex')).toString()).toBe(plain.toString());
      expect(decipher('aes-128-cbc', got.cbc)).toBe(plain.toString());
      expect(decipher('aes-128-ctr', got.ctr)).toBe(plain.toString());
      expect(got.hkdf).toBe(hex(Buffer.from(hkdfSync('sha256', key16, 'salt', 'info', 42))));
      expect(got.pbkdf2).toBe(hex(pbkdf2Sync('password', 'salt', 1000, 64, 'sha512')));
      expect(got.derivedKey).toBe(hex(pbkdf2Sync('password', 'salt', 1000, 32, 'sha256')));
      expect(got.ecdh).toBe(hex(diffieHellman({ privateKey: ecdhPeer.privateKey, publicKey: p256.publicKey })));
      expect(verify(null, plain, ed.publicKey, Buffer.from(got.ed25519, 'hex'))).toBe(true);
      const wrap = createCipheriv('id-aes128-wrap', key16, Buffer.from('a6a6a6a6a6a6a6a6', 'hex'));
      expect(got.wrapped).toBe(hex(Buffer.concat([wrap.update(key16), wrap.final()])));
      expect(got.unwrapped).toBe(hex(key16));
    });

    it('converts numbers as WebIDL does, NaN and Infinity included', async () => {
      // An `unsigned long` as WebIDL converts NaN, Infinity, 128.7 and '64' (Node 24 refuses the first two).
      const lengths = [0, 0, 128, 64, 256];
      const nodeKey = await webcrypto.subtle.importKey('raw', new Uint8Array(16), 'HKDF', false, ['deriveBits']);
      const expected = [];
      for (const length of lengths) {
        const params = { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(1), info: new Uint8Array(1) };
        expected.push(Buffer.from(await webcrypto.subtle.deriveBits(params, nodeKey, length as number)).toString('hex'));
      }
      const got = await value(`const key = await crypto.subtle.importKey('raw', new Uint8Array(16), 'HKDF', false, ['deriveBits']); const out = [];
        for (const length of [NaN, Infinity, 128.7, '64', 256]) out.push(toHex(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(1), info: new Uint8Array(1) }, key, length)));
        return out;`);
      expect(got).toEqual(expected);
    });

    it('RSA-OAEP: decrypts what Node encrypts', async () => {
      const sealed = publicEncrypt({ key: rsa.publicKey, oaepHash: 'sha256' }, Buffer.from('secret'));
      const got = await value(
        `const key = await crypto.subtle.importKey('pkcs8', fromHex(input.key), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);
         return String.fromCharCode(...new Uint8Array(await crypto.subtle.decrypt('RSA-OAEP', key, fromHex(input.sealed))));`,
        { key: der(rsa.privateKey), sealed: hex(sealed) },
      );
      expect(got).toBe('secret');
    });
  });

  describe('keys', () => {
    it('shows type, extractable, algorithm and usages as the standard does, the same objects on every read', async () => {
      const got = await value(`
        const { publicKey, privateKey } = await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify']);
        const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: { name: 'SHA-512' } }, false, ['sign']);
        return [publicKey.type, publicKey.extractable, publicKey.usages, privateKey.type, privateKey.usages, publicKey.algorithm.name, publicKey.algorithm.modulusLength,
          publicKey.algorithm.publicExponent instanceof Uint8Array, [...publicKey.algorithm.publicExponent], publicKey.algorithm.hash,
          publicKey.algorithm === publicKey.algorithm, publicKey.usages === publicKey.usages,
          hmac.type, hmac.extractable, hmac.algorithm, Object.keys(hmac), JSON.stringify(hmac), hmac instanceof CryptoKey];`);
      expect(got).toEqual([
        'public',
        true,
        ['verify'],
        'private',
        ['sign'],
        'RSASSA-PKCS1-v1_5',
        2048,
        true,
        [1, 0, 1],
        { name: 'SHA-256' },
        true,
        true,
        'secret',
        false,
        { name: 'HMAC', length: 1024, hash: { name: 'SHA-512' } },
        [],
        '{}',
        true,
      ]);
    });

    it('round-trips JWK, spki and pkcs8 exports of every kind of key, readable by Node', async () => {
      const got = await value(`
        const s = crypto.subtle, out = [];
        const kinds = [
          [{ name: 'HMAC', hash: 'SHA-256' }, ['sign', 'verify']],
          [{ name: 'AES-GCM', length: 256 }, ['encrypt', 'decrypt']],
          [{ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, ['sign', 'verify']],
          [{ name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-384' }, ['sign', 'verify']],
          [{ name: 'RSA-OAEP', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, ['encrypt', 'decrypt']],
          [{ name: 'ECDSA', namedCurve: 'P-256' }, ['sign', 'verify']],
          [{ name: 'ECDSA', namedCurve: 'P-384' }, ['sign', 'verify']],
          [{ name: 'ECDSA', namedCurve: 'P-521' }, ['sign', 'verify']],
          [{ name: 'ECDH', namedCurve: 'P-256' }, ['deriveBits']],
          [{ name: 'Ed25519' }, ['sign', 'verify']],
        ];
        for (const [algorithm, usages] of kinds) {
          const made = await s.generateKey(algorithm, true, usages);
          for (const key of made.type ? [made] : [made.publicKey, made.privateKey]) {
            const jwk = await s.exportKey('jwk', key);
            const again = await s.importKey('jwk', jwk, algorithm, true, key.usages);
            const binary = key.type === 'secret' ? 'raw' : key.type === 'public' ? 'spki' : 'pkcs8';
            out.push({ name: algorithm.name, type: key.type, jwk, same: JSON.stringify(await s.exportKey('jwk', again)) === JSON.stringify(jwk),
              binary, bytes: toHex(await s.exportKey(binary, key)), algorithms: [key.algorithm, again.algorithm] });
          }
        }
        return out;`);
      expect(got).toHaveLength(18);
      for (const entry of got) {
        expect(entry.same).toBe(true);
        expect(entry.algorithms[1]).toEqual(entry.algorithms[0]);
        if (entry.type === 'secret') {
          expect(Buffer.from(entry.jwk.k, 'base64url').toString('hex')).toBe(entry.bytes);
          continue;
        }
        // Node reads the JWK and the DER export as the same key.
        const fromJwk = entry.type === 'public' ? createPublicKey({ key: entry.jwk, format: 'jwk' }) : createPrivateKey({ key: entry.jwk, format: 'jwk' });
        const exported = fromJwk.export({ format: 'der', type: entry.type === 'public' ? 'spki' : 'pkcs8' });
        const fromDer = entry.type === 'public' ? createPublicKey({ key: Buffer.from(entry.bytes, 'hex'), format: 'der', type: 'spki' }) : createPrivateKey({ key: Buffer.from(entry.bytes, 'hex'), format: 'der', type: 'pkcs8' });
        expect(fromDer.export({ format: 'jwk' })).toEqual(fromJwk.export({ format: 'jwk' }));
        expect(exported.length).toBeGreaterThan(0);
      }
    });

    it('exports only extractable keys, and only as the standard allows (InvalidAccessError, NotSupportedError)', async () => {
      const cases: Array<[string, unknown]> = [
        [`const k = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']); await crypto.subtle.exportKey('raw', k);`, ['InvalidAccessError', true, false]],
        [`const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']); await crypto.subtle.exportKey('pkcs8', k.privateKey);`, ['InvalidAccessError', true, false]],
        [`const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']); await crypto.subtle.exportKey('spki', k.publicKey);`, 'ok'],
        [`const k = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']); await crypto.subtle.exportKey('spki', k);`, ['NotSupportedError', true, false]],
        [`const k = await crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign']); await crypto.subtle.exportKey('raw', k.publicKey);`, ['NotSupportedError', true, false]],
        [`const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']); await crypto.subtle.exportKey('raw', k.privateKey);`, ['InvalidAccessError', true, false]],
        [`const k = await crypto.subtle.importKey('raw', new Uint8Array(8), 'PBKDF2', false, ['deriveBits']); await crypto.subtle.exportKey('raw', k);`, ['NotSupportedError', true, false]],
        [`const k = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']); await crypto.subtle.exportKey('der', k);`, ['TypeError', false, true]],
      ];
      for (const [code, expected] of cases) expect(await value(outcome(code))).toEqual(expected);
    });
  });

  it('signs a service-account JWT with RS256 and ES256 that jsonwebtoken verifies', async () => {
    const serviceAccount = {
      client_email: 'connector@project.iam.gserviceaccount.com',
      private_key: rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
      ec_private_key: p256.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
    };
    const got = await value(
      `const pemBody = (pem) => fromBase64(pem.replace(/-----[^-]+-----/g, ''));
       const now = 1700000000;
       const token = async (alg, pem, algorithm, params) => {
         const key = await crypto.subtle.importKey('pkcs8', pemBody(pem), algorithm, false, ['sign']);
         const header = base64url(ascii(JSON.stringify({ alg, typ: 'JWT' })));
         const claims = base64url(ascii(JSON.stringify({ iss: input.client_email, scope: 'https://www.googleapis.com/auth/cloud-platform', aud: 'https://oauth2.googleapis.com/token', iat: now, exp: now + 3600 })));
         const signature = await crypto.subtle.sign(params, key, ascii(header + '.' + claims));
         return header + '.' + claims + '.' + base64url(signature);
       };
       return [await token('RS256', input.private_key, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, 'RSASSA-PKCS1-v1_5'),
               await token('ES256', input.ec_private_key, { name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-256' })];`,
      serviceAccount,
    );
    const options = { audience: 'https://oauth2.googleapis.com/token', issuer: serviceAccount.client_email, clockTimestamp: 1700000100 };
    const rs = jwt.verify(got[0], rsa.publicKey.export({ format: 'pem', type: 'spki' }) as string, { ...options, algorithms: ['RS256'] });
    const es = jwt.verify(got[1], p256.publicKey.export({ format: 'pem', type: 'spki' }) as string, { ...options, algorithms: ['ES256'] });
    expect(rs).toMatchObject({ iss: serviceAccount.client_email, scope: 'https://www.googleapis.com/auth/cloud-platform', exp: 1700003600 });
    expect(es).toMatchObject({ iss: serviceAccount.client_email });
  });

  describe('errors as the standard names them', () => {
    const cases: Array<[string, string, unknown]> = [
      ['an unknown algorithm', `await crypto.subtle.digest('MD5', new Uint8Array(1))`, ['NotSupportedError', true, false]],
      ['a hash that is not SHA', `await crypto.subtle.importKey('raw', new Uint8Array(16), { name: 'HMAC', hash: 'SHA3-256' }, false, ['sign'])`, ['NotSupportedError', true, false]],
      ['a missing algorithm member', `await crypto.subtle.encrypt({ name: 'AES-GCM' }, await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']), new Uint8Array(1))`, ['TypeError', false, true]],
      ['an IV that is not bytes', `await crypto.subtle.encrypt({ name: 'AES-GCM', iv: 'abc' }, await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']), new Uint8Array(1))`, ['TypeError', false, true]],
      ['data that is not a BufferSource', `await crypto.subtle.digest('SHA-256', 'text')`, ['TypeError', false, true]],
      ['a key that is not a CryptoKey', `await crypto.subtle.sign('HMAC', { type: 'secret' }, new Uint8Array(1))`, ['TypeError', false, true]],
      ['an unknown usage', `await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['fly'])`, ['TypeError', false, true]],
      ['no usages for a secret key', `await crypto.subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, [])`, ['SyntaxError', true, false]],
      ['a usage the key lacks', `await crypto.subtle.sign('HMAC', await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['verify']), new Uint8Array(1))`, ['InvalidAccessError', true, false]],
      ['a key of another algorithm', `await crypto.subtle.sign('HMAC', (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])).privateKey, new Uint8Array(1))`, ['InvalidAccessError', true, false]],
      ['pkcs8 that is not a key', `await crypto.subtle.importKey('pkcs8', new Uint8Array(64), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign'])`, ['DataError', true, false]],
      ['an AES key of a wrong size', `await crypto.subtle.importKey('raw', new Uint8Array(15), 'AES-GCM', false, ['encrypt'])`, ['DataError', true, false]],
      ['a JWK that is a string', `await crypto.subtle.importKey('jwk', '{"kty":"oct"}', { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])`, ['TypeError', false, true]],
      ['a wrong GCM tag', `await crypto.subtle.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, await crypto.subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, ['decrypt']), new Uint8Array(32))`, ['OperationError', true, false]],
      ['an unknown key format', `await crypto.subtle.importKey('pem', new Uint8Array(16), 'AES-GCM', false, ['encrypt'])`, ['TypeError', false, true]],
      ['usages that are not a sequence', `await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, 'encrypt')`, ['TypeError', false, true]],
    ];
    it.each(cases)('%s', async (_name, code, expected) => {
      expect(await value(outcome(code))).toEqual(expected);
    });
  });

  describe('limits', () => {
    it('refuses more than 8 MiB of data per call, and takes 8 MiB', async () => {
      const got = await value(`const tell = (p) => p.then(() => 'ok', (e) => [e.name, e.message]);
        return [await tell(crypto.subtle.digest('SHA-256', new Uint8Array(8 * 1024 * 1024))), await tell(crypto.subtle.digest('SHA-256', new Uint8Array(8 * 1024 * 1024 + 1)))];`);
      expect(got).toEqual(['ok', ['QuotaExceededError', 'crypto.subtle.digest takes at most 8 MiB of data per call (8388609 bytes given).']]);
    });

    it('refuses RSA keys above 4096 bits to generate and 8192 to import, long PBKDF2 runs and oversized keys', async () => {
      const modulus = Buffer.alloc(1200, 0xff).toString('base64url'); // 9600 bits
      const got = await value(
        `const s = crypto.subtle, tell = (p) => p.then(() => 'ok', (e) => [e.name, e.message]);
         const password = await s.importKey('raw', ascii('pw'), 'PBKDF2', false, ['deriveBits']);
         return [
           await tell(s.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 8192, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, false, ['sign'])),
           await tell(s.importKey('jwk', { kty: 'RSA', n: input.modulus, e: 'AQAB' }, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify'])),
           await tell(s.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(8), iterations: 1_000_000 }, password, 512)),
           await tell(s.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(8), iterations: 2_000_001 }, password, 256)),
           await tell(s.importKey('raw', new Uint8Array(16 * 1024 + 1), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])),
           await tell(s.generateKey({ name: 'HMAC', hash: 'SHA-256', length: 2 ** 31 }, false, ['sign'])),
         ];`,
        { modulus },
      );
      expect(got).toEqual([
        ['QuotaExceededError', 'RSA keys of more than 4096 bits are not generated here (modulusLength 8192).'],
        ['QuotaExceededError', 'RSA keys of more than 8192 bits are not supported (this one has 9600).'],
        'ok',
        ['QuotaExceededError', expect.stringMatching(/^PBKDF2 is limited to 2,000,000 iterations times blocks of output per call/)],
        ['QuotaExceededError', 'Key data is limited to 16 KiB (16385 bytes given).'],
        ['QuotaExceededError', 'HMAC keys are limited to 131072 bits (length 2147483648).'],
      ]);
    });

    it('counts the time of crypto work as CPU time of the run', async () => {
      // Each derivation takes about 0.2 s on the host and almost nothing in the engine.
      const result = await run(
        `const password = await crypto.subtle.importKey('raw', ascii('pw'), 'PBKDF2', false, ['deriveBits']);
         for (let i = 0; i < 50; i++) await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(8), iterations: 1_000_000 }, password, 256);`,
        null,
        { limits: { cpuMs: 300 } },
      );
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/CPU time limit of 300 ms/) });
      expect(result.durationMs).toBeLessThan(5000);
    });

    it('ends the run at one crypto call more in flight than pendingCalls allows, and takes that many', async () => {
      const flood = await run(`await Promise.all(Array.from({ length: 1000 }, () => crypto.subtle.digest('SHA-256', new Uint8Array(16))));`);
      expect(flood).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/more than 8 HTTP requests, file reads and crypto operations at once/) });
      expect(await value(`return (await Promise.all(Array.from({ length: 8 }, () => crypto.subtle.digest('SHA-256', new Uint8Array(16))))).length;`)).toBe(8);
    });

    it(`holds at most ${MAX_KEYS} different keys per run; importing the same key again holds no more`, async () => {
      expect(
        await value(`let key; for (let i = 0; i < ${MAX_KEYS * 3}; i++) key = await crypto.subtle.importKey('raw', ascii('the same secret'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
                     return toHex(await crypto.subtle.sign('HMAC', key, ascii('x')));`),
      ).toBe(createHmac('sha256', 'the same secret').update('x').digest('hex'));
      const result = await run(`for (let i = 0; ; i++) await crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, false, ['encrypt']);`);
      expect(result).toMatchObject({ kind: 'failed', reason: 'limit', message: `The connector made more than ${MAX_KEYS} different crypto keys in one run; make a key once and use it again.` });
    });
  });

  it('loads the module only when used, ahead when the code names it', async () => {
    expect(await value(`return typeof globalThis['cry' + 'pto'].subtle.digest;`)).toBe('function');
    expect(await value(`globalThis.crypto = 1; return crypto;`)).toBe(1);
  });
});

describe('crypto (on a worker thread)', () => {
  const { setup, close, value } = harness(1);
  beforeAll(setup);
  afterAll(close);

  it('signs an RS256 JWT that Node verifies, and digests and HMACs as Node does', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const got = await value(
      `const key = await crypto.subtle.importKey('pkcs8', fromHex(input.key), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
       const body = base64url(ascii('{"alg":"RS256","typ":"JWT"}')) + '.' + base64url(ascii('{"sub":"worker"}'));
       const hmac = await crypto.subtle.importKey('raw', ascii('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
       return [body + '.' + base64url(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, ascii(body))), toHex(await crypto.subtle.digest('SHA-256', ascii('abc'))),
         toHex(await crypto.subtle.sign('HMAC', hmac, ascii('abc'))), crypto.randomUUID().length];`,
      { key: hex(privateKey.export({ format: 'der', type: 'pkcs8' })) },
    );
    expect(jwt.verify(got[0], publicKey.export({ format: 'pem', type: 'spki' }) as string, { algorithms: ['RS256'] })).toMatchObject({ sub: 'worker' });
    expect(got.slice(1)).toEqual([createHash('sha256').update('abc').digest('hex'), createHmac('sha256', 'k').update('abc').digest('hex'), 36]);
  });

  it('refuses over-limit work there too', async () => {
    expect(await value(outcome(`await crypto.subtle.digest('SHA-256', new Uint8Array(9 * 1024 * 1024))`))).toEqual(['QuotaExceededError', true, false]);
  });
});
