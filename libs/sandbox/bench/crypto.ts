/**
 * What `crypto` costs a connector: each operation called over and over from inside a connector run
 * (one call after another, each awaited), against the same calls on Node's own WebCrypto.
 *
 *   npx esbuild libs/sandbox/bench/crypto.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/crypto.js && node dist/bench/crypto.js [calls]
 *
 * (The bundle must sit inside the checkout so that node_modules are found.)
 */
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { createQuickJsRuntime } from '../src/index';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'der', type: 'pkcs8' });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' });

/** Each: what is made once (`setup`, with `s` = crypto.subtle and `data` = 1 KiB), and the call measured. */
const OPERATIONS: Array<{ name: string; setup: string; call: string }> = [
  { name: 'performance.now (a host call, for scale)', setup: '', call: 'performance.now()' },
  { name: 'getRandomValues (16 bytes)', setup: 'const a = new Uint8Array(16);', call: 'crypto.getRandomValues(a)' },
  { name: 'randomUUID', setup: '', call: 'crypto.randomUUID()' },
  { name: 'digest SHA-256, 1 KiB', setup: '', call: "await s.digest('SHA-256', data)" },
  { name: 'digest SHA-256, 1 MiB', setup: 'const big = new Uint8Array(1 << 20);', call: "await s.digest('SHA-256', big)" },
  {
    name: 'HMAC-SHA256 sign, 1 KiB',
    setup: "const k = await s.importKey('raw', new Uint8Array(32), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);",
    call: "await s.sign('HMAC', k, data)",
  },
  { name: 'importKey raw HMAC (the same key again)', setup: '', call: "await s.importKey('raw', new Uint8Array(32), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])" },
  {
    name: 'RS256 sign (RSA 2048), 1 KiB',
    setup: "const k = await s.importKey('pkcs8', keys.rsa, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);",
    call: "await s.sign('RSASSA-PKCS1-v1_5', k, data)",
  },
  {
    name: 'ES256 sign (P-256), 1 KiB',
    setup: "const k = await s.importKey('pkcs8', keys.ec, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);",
    call: "await s.sign({ name: 'ECDSA', hash: 'SHA-256' }, k, data)",
  },
  {
    name: 'AES-GCM encrypt, 1 KiB',
    setup: "const k = await s.importKey('raw', new Uint8Array(16), 'AES-GCM', false, ['encrypt']); const iv = new Uint8Array(12);",
    call: "await s.encrypt({ name: 'AES-GCM', iv }, k, data)",
  },
];

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 1000);
  const runtime = await createQuickJsRuntime({ workers: 0 });
  const hex = (bytes: Buffer) => bytes.toString('hex');
  console.log(`${'operation'.padEnd(42)} ${'connector'.padStart(12)} ${'Node'.padStart(12)}   (mean of ${calls} calls, one after another)`);
  // The first pass warms up the host's code paths; the second is printed.
  for (const pass of [1, 2]) for (const { name, setup, call } of OPERATIONS) {
    const code = `
      const fromHex = (h) => new Uint8Array(h.match(/../g).map((b) => parseInt(b, 16)));
      const keys = { rsa: fromHex('${hex(rsa)}'), ec: fromHex('${hex(ec)}') };
      const s = crypto.subtle, data = new Uint8Array(1024);
      ${setup}
      for (let i = 0; i < 10; i++) ${call};
      const started = performance.now();
      for (let i = 0; i < ${calls}; i++) ${call};
      Context.SetResponseEntity({ ResponseBody: (performance.now() - started) / ${calls} });`;
    const result = await runtime.run({ cacheKey: `bench/crypto/${name}`, code, entity: null, timeoutMs: 120_000, limits: { cpuMs: 120_000 }, allowedHosts: [] });
    if (result.kind !== 'ok') throw new Error(`${name}: ${JSON.stringify(result)}`);
    const node = await nodeCost(`${setup}\nfor (let i = 0; i < 10; i++) ${call};\nconst started = performance.now();\nfor (let i = 0; i < ${calls}; i++) ${call};\nreturn (performance.now() - started) / ${calls};`);
    const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
    if (pass === 2) console.log(`${name.padEnd(42)} ${us(result.responseBody as number).padStart(12)} ${us(node).padStart(12)}`);
  }
  await runtime.close();
}

/** The same calls on Node's WebCrypto, in this process. */
async function nodeCost(body: string): Promise<number> {
  const AsyncFunction = (async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<number>;
  return new AsyncFunction('crypto', 's', 'data', 'keys', body)(webcrypto, webcrypto.subtle, new Uint8Array(1024), { rsa: new Uint8Array(rsa), ec: new Uint8Array(ec) });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
