/**
 * What the engine cannot do fast: compute-heavy connector code in QuickJS (an interpreter, in
 * WebAssembly) against the same code in Node's own V8 (a JIT compiler), median of several runs each.
 *
 *   npx esbuild libs/sandbox/bench/compute.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/compute.js && node dist/bench/compute.js [runs]
 *
 * (The bundle must sit inside the checkout so that node_modules are found.)
 */
import { createQuickJsRuntime } from '../src/index';

const WORKLOADS: Array<{ name: string; code: string }> = [
  {
    name: 'loop: 1e6 iterations of modular arithmetic',
    code: `let s = 0; for (let i = 0; i < 1e6; i++) s = (s + i * 7) % 1000003; return s;`,
  },
  {
    name: 'JSON: 10,000 orders stringified, parsed, summed',
    code: `
      const orders = Array.from({ length: 10000 }, (_, i) => ({
        id: i, customer: { id: i % 97, name: 'Customer ' + i },
        lines: [{ sku: 'A-' + (i % 13), qty: i % 5, price: 9.99 }, { sku: 'B-1', qty: 1, price: 5 }],
      }));
      const parsed = JSON.parse(JSON.stringify(orders));
      const totals = parsed.map((o) => ({ id: o.id, total: o.lines.reduce((t, l) => t + l.qty * l.price, 0) }));
      return JSON.stringify(totals).length;`,
  },
  {
    name: 'strings: 100,000 template strings joined',
    code: `const parts = []; for (let i = 0; i < 100000; i++) parts.push(\`item-\${i}:\${(i * 31) % 7}\`); return parts.join(',').length;`,
  },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5);
  const runtime = await createQuickJsRuntime({ workers: 0 });
  for (const { name, code } of WORKLOADS) {
    const quickjs: number[] = [];
    const v8: number[] = [];
    for (let i = 0; i < runs; i++) {
      // QuickJS: a connector run as the service makes it, the result set as ResponseBody.
      let started = performance.now();
      const result = await runtime.run({
        cacheKey: `bench/${name}`,
        code: `const r = (() => { ${code} })(); Context.SetResponseEntity({ ResponseBody: r });`,
        entity: null,
        timeoutMs: 120_000,
        limits: { cpuMs: 120_000 },
        allowedHosts: [],
      });
      quickjs.push(performance.now() - started);
      if (result.kind !== 'ok') throw new Error(`${name}: ${JSON.stringify(result)}`);
      // V8: the same body as a plain function of this process.
      started = performance.now();
      const answer = new Function(code)() as unknown;
      v8.push(performance.now() - started);
      if (answer !== result.responseBody) throw new Error(`${name}: the engines disagree (${String(answer)} vs ${String(result.responseBody)})`);
    }
    const [q, v] = [median(quickjs), median(v8)];
    console.log(`${name.padEnd(48)} QuickJS ${q.toFixed(1).padStart(7)} ms   V8 ${v.toFixed(1).padStart(6)} ms   ${(q / v).toFixed(0)}x`);
  }
  await runtime.close();
}

void main();
