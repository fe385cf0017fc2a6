/**
 * What the standard globals cost a connector: each call timed from inside a connector run (the best
 * of several rounds, in microseconds per call), and the run of a connector that only names a module
 * against the trivial one (what loading the module into its memory image adds to every run).
 *
 *   npx esbuild libs/sandbox/bench/globals.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/globals.js && node dist/bench/globals.js
 *
 * (The bundle must sit inside the checkout so that node_modules are found.)
 */
import { createQuickJsRuntime } from '../src/index';

const CALLS: Array<[name: string, setup: string, call: string]> = [
  ['new TextEncoder().encode(30 characters)', `const text = 'Grüße from the connector, 1234';`, `new TextEncoder().encode(text)`],
  ['TextEncoder.encode(64 KiB of text)', `const text = 'x'.repeat(65536); const e = new TextEncoder();`, `e.encode(text)`],
  ['TextDecoder.decode(30 bytes)', `const bytes = new TextEncoder().encode('Grüße from the connector, 123'); const d = new TextDecoder();`, `d.decode(bytes)`],
  ['TextDecoder.decode(64 KiB)', `const bytes = new Uint8Array(65536).fill(0x61); const d = new TextDecoder();`, `d.decode(bytes)`],
  ['btoa("user:password")', ``, `btoa('user:password')`],
  ['atob(44 characters)', `const b = btoa('x'.repeat(32));`, `atob(b)`],
  ['structuredClone({ 3 properties, an array of 2 })', `const v = { a: 1, b: 'x', c: [1, 2] };`, `structuredClone(v)`],
  ['structuredClone(1,000 orders, 6 objects each)', `const v = Array.from({ length: 1000 }, (_, i) => ({ id: i, customer: { name: 'n' + i }, lines: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] }));`, `structuredClone(v)`],
  ['JSON.parse(JSON.stringify(the same 1,000 orders))', `const v = Array.from({ length: 1000 }, (_, i) => ({ id: i, customer: { name: 'n' + i }, lines: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] }));`, `JSON.parse(JSON.stringify(v))`],
  ['new AbortController(), abort() with a listener', ``, `{ const c = new AbortController(); c.signal.addEventListener('abort', () => {}); c.abort(); }`],
  ['EventTarget.dispatchEvent(new Event) to 1 listener', `const t = new EventTarget(); t.addEventListener('x', () => {});`, `t.dispatchEvent(new Event('x'))`],
  ['AbortSignal.timeout(1000)', ``, `AbortSignal.timeout(1000)`],
];

const TRIVIAL = `const e = Context.GetRequestEntity(); Context.SetResponseEntity({ ResponseBody: 'ok' });`;
const MODULES: Array<[name: string, names: string]> = [
  ['none (the trivial connector)', ''],
  ['base64', '/* btoa */'],
  ['encoding', '/* TextEncoder */'],
  ['events', '/* AbortController */'],
  ['structured-clone', '/* structuredClone */'],
  ['all four', '/* btoa TextEncoder AbortController structuredClone */'],
];

async function main(): Promise<void> {
  const runtime = await createQuickJsRuntime({ workers: 0 });
  const run = async (cacheKey: string, code: string) => {
    const result = await runtime.run({ cacheKey, code, entity: null, timeoutMs: 60_000, allowedHosts: [] });
    if (result.kind !== 'ok') throw new Error(`${cacheKey}: ${JSON.stringify(result)}`);
    return result.responseBody;
  };
  console.log('Per call, from inside a connector (best of 10 rounds):');
  for (const [name, setup, call] of CALLS) {
    const micros = await run(
      `bench/globals/${name}`,
      `${setup}
       const n = 200; let best = Infinity;
       for (let round = 0; round < 10; round++) { const started = performance.now(); for (let i = 0; i < n; i++) ${call}; best = Math.min(best, (performance.now() - started) / n); }
       Context.SetResponseEntity({ ResponseBody: best * 1000 });`,
    );
    console.log(`  ${name.padEnd(52)} ${(micros as number).toFixed(1).padStart(8)} us`);
  }
  // The connectors take turns, so that a busy moment of the machine falls on all of them alike.
  console.log('A run of a connector that names the module (loaded into its memory image), median of 2000 runs each:');
  const times = MODULES.map((): number[] => []);
  for (let i = 0; i < 2200; i++) {
    for (const [m, [name, names]] of MODULES.entries()) {
      const started = performance.now();
      await run(`bench/module/${name}`, `${names}\n${TRIVIAL}`);
      if (i >= 200) times[m].push(performance.now() - started);
    }
  }
  for (const [m, [name]] of MODULES.entries()) {
    const sorted = times[m].sort((a, b) => a - b);
    console.log(`  ${name.padEnd(52)} ${(sorted[sorted.length >> 1] * 1000).toFixed(0).padStart(8)} us`);
  }
  await runtime.close();
}

void main();
