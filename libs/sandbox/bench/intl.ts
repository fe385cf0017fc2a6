/**
 * Per-call cost of Intl inside a connector: each measurement is a run of its own, timed from inside
 * the connector (`performance.now()` around a loop), beside Node's own cost for the same call.
 *
 *   npx esbuild libs/sandbox/bench/intl.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/intl.js && node dist/bench/intl.js [calls]
 */
import { createQuickJsRuntime } from '../src/index';

const SETUP = `
  const dtf = new Intl.DateTimeFormat('de-DE', { timeZone: 'Europe/Berlin', dateStyle: 'medium', timeStyle: 'short' });
  const nf = new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' });
  const collator = new Intl.Collator('de');
  const words = Array.from({ length: 10000 }, (_, i) => 'Name ' + ((i * 7919) % 10007) + (i % 3 ? 'ä' : 'b'));
`;

/** What is measured: a call per loop turn (`i` the turn), or a whole operation (`once`). */
const CASES: Array<{ name: string; call?: string; once?: string }> = [
  { name: 'empty loop turn', call: '0' },
  { name: 'DateTimeFormat#format', call: 'dtf.format(i * 1e7)' },
  { name: 'NumberFormat#format', call: 'nf.format(i * 1.5)' },
  { name: 'Number#toLocaleString(de-DE)', call: "(i * 1.5).toLocaleString('de-DE')" },
  { name: 'Date#toLocaleString(de-DE, timeZone)', call: "new Date(i * 1e7).toLocaleString('de-DE', { timeZone: 'Europe/Berlin' })" },
  { name: 'Collator#compare, new strings', call: "collator.compare('abc' + i, 'abd' + i)" },
  { name: 'Collator#compare, strings seen before', call: 'collator.compare(words[i % 1000], words[(i * 7) % 1000])' },
  { name: 'sort 10,000 strings with Collator#compare', once: 'words.slice().sort(collator.compare)' },
  { name: 'sort 10,000 strings, (a, b) => a.localeCompare(b, "de")', once: "words.slice().sort((a, b) => a.localeCompare(b, 'de'))" },
  { name: 'sort 10,000 objects by collator.compare(a.name, b.name)', once: 'words.map((name) => ({ name })).sort((a, b) => collator.compare(a.name, b.name))' },
  { name: 'sort 10,000 strings, plain comparison', once: 'words.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))' },
];

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 20000);
  const runtime = await createQuickJsRuntime({ workers: 0 });
  let key = 0;
  for (const { name, call, once } of CASES) {
    const body = call
      ? `for (let i = 0; i < 500; i++) ${call};
         const started = performance.now();
         for (let i = 0; i < ${calls}; i++) ${call};
         return (performance.now() - started) / ${calls} * 1000;`
      : `const started = performance.now(); ${once}; return performance.now() - started;`;
    const code = `${SETUP} Context.SetResponseEntity({ ResponseBody: (() => { ${body} })() });`;
    const result = await runtime.run({ cacheKey: `bench/intl@${++key}`, code, entity: null, timeoutMs: 120_000, allowedHosts: [], limits: { cpuMs: 120_000 } });
    if (result.kind !== 'ok') throw new Error(`${name}: ${JSON.stringify(result)}`);
    const figure = result.responseBody as number;
    console.log(`${name.padEnd(58)} ${call ? `${figure.toFixed(1)} µs per call` : `${figure.toFixed(0)} ms`}`);
  }
  await runtime.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
