/**
 * What an HTTP round trip costs a connector: a GET whose JSON answer is parsed, called over and over
 * from inside one connector run (each awaited) with `fetch` and with `Context.Http.Request`, against
 * Node's own `fetch`, all to the same loopback server. Also the cost of the run that loads fetch.
 *
 *   npx esbuild libs/sandbox/bench/fetch.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/fetch.js && node dist/bench/fetch.js [calls] [workers]
 *
 * (The bundle must sit inside the checkout so that node_modules are found; 0 workers runs in
 * process.) Each run makes 50 calls: a run
 * may start 100 host calls a second (RUN_BUDGET.hostCallsPerSecond), and more would measure that.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createQuickJsRuntime } from '../src/index';

const PER_RUN = 50;
const BODY = JSON.stringify({ id: 42, items: Array.from({ length: 20 }, (_, i) => ({ sku: `SKU-${i}`, quantity: i, price: i * 1.5 })) });

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 300);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/order`;
  const runtime = await createQuickJsRuntime({ workers: Number(process.argv[3] ?? 1), http: { trustedAddresses: ['127.0.0.1'] } });

  const inConnector = async (name: string, call: string) => {
    const code = `
      const times = [];
      for (let i = 0; i < ${PER_RUN}; i++) {
        const started = performance.now();
        const json = ${call};
        if (json.id !== 42) throw new Error('wrong answer');
        times.push(performance.now() - started);
      }
      Context.SetResponseEntity({ ResponseBody: times });`;
    const times: number[] = [];
    for (let run = 0; run < Math.ceil(calls / PER_RUN); run++) {
      const result = await runtime.run({ cacheKey: `bench/${name}@1`, code, entity: null, timeoutMs: 120_000, allowedHosts: ['127.0.0.1'] });
      if (result.kind !== 'ok') throw new Error(`${name}: ${JSON.stringify(result)}`);
      times.push(...(result.responseBody as number[]));
    }
    report(name, times);
  };
  await inConnector('fetch + json() in a connector', `await (await fetch('${url}')).json()`);
  await inConnector('Context.Http.Request in a connector', `(await Context.Http.Request({ url: '${url}' })).json`);

  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const json = (await (await fetch(url)).json()) as { id: number };
    if (json.id !== 42) throw new Error('wrong answer');
    times.push(performance.now() - started);
  }
  report("Node's fetch (undici, keep-alive)", times);

  // The first run of a connector: one that names fetch has the module (and url, events) loaded into its sandbox's image.
  for (const [label, code] of [
    ['first run of a connector that names fetch', 'Context.SetResponseEntity({ ResponseBody: typeof fetch });'],
    ['first run of a connector that names none', 'Context.SetResponseEntity({ ResponseBody: 1 });'],
  ]) {
    const first: number[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      await runtime.run({ cacheKey: `bench/${label}@${i}`, code, entity: null, timeoutMs: 5000, allowedHosts: [] });
      first.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    report(label, first, 3);
  }
  await runtime.close();
  server.close();
}

function report(label: string, times: number[], warmUp = Math.floor(times.length / 10)): void {
  const sorted = times.slice(warmUp).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
  console.log(`${label.padEnd(48)} median ${at(0.5)} ms   p90 ${at(0.9)} ms   (${sorted.length} calls)`);
}

void main();
