/**
 * What a connector's run costs in CPU, for the work of the bench's large-body and forwarding rows without HTTP or store: the ack
 * connector with a small body, the same with a 93 KB order (it reads one field), a connector that never
 * reads that order, and one forwarding the small order with fetch to a loopback API (16 runs in flight,
 * as runs waiting on HTTP share a thread). CPU is the whole process's (user + system) per run, the
 * loopback API's included; compare builds back to back, as the machine's other work moves it.
 *
 *   npx esbuild libs/sandbox/bench/connector-costs.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/connector-costs.js && node dist/bench/connector-costs.js [runs] [workers] [cases]
 *
 * (The bundle must sit inside the checkout so that node_modules and the worker entry are found; 0
 * workers, the default, runs in process; cases: trivial,large-read,large-ignored,fetch.)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createQuickJsRuntime } from '../src/index';

const LARGE = JSON.stringify({ orderId: 42, customer: { id: 7, name: 'Ada' }, lines: Array.from({ length: 800 }, (_, i) => ({ sku: `A-${i}`, qty: i % 7, price: i * 1.25, description: `item number ${i} of the order, with some words`, tags: ['x', 'y'] })) });
const SMALL = JSON.stringify({ orderId: 42, customer: { id: 7, name: 'Ada' }, lines: [{ sku: 'A-1', qty: 2 }] });
const entityJson = (body: string) => `{"RequestParams":"","RequestHeaders":"Content-Type=application%2Fjson","RequestBody":${body},"ResponseBody":null}`;
const ACK = `const entity = Context.GetRequestEntity();
entity.ResponseBody = { Status: "Accepted", Message: \`order \${entity.RequestBody.orderId}\` };
Context.SetResponseEntity(entity);`;
const IGNORE = `const entity = Context.GetRequestEntity();
entity.ResponseBody = { Status: "Accepted" };
Context.SetResponseEntity(entity);`;

async function main() {
  const runs = Number(process.argv[2] ?? 2000);
  const workers = Number(process.argv[3] ?? 0);
  const only = process.argv[4];
  const server = createServer((req, res) => { let n = 0; req.on('data', (c) => (n += c.length)); req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ accepted: true, received: n })); }); });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const FORWARD = `const entity = Context.GetRequestEntity();
const answer = await fetch('${url}/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(entity.RequestBody) });
entity.ResponseBody = await answer.json();
Context.SetResponseEntity(entity);`;
  const runtime = await createQuickJsRuntime({ workers, http: { trustedAddresses: ['127.0.0.1'] } });
  const cases: Array<[string, string, string, number]> = [
    ['trivial', ACK, SMALL, 1],
    ['large-read', ACK, LARGE, 1],
    ['large-ignored', IGNORE, LARGE, 1],
    ['fetch', FORWARD, SMALL, 16],
  ];
  for (const [name, code, body, inFlight] of cases) {
    if (only && !only.split(',').includes(name)) continue;
    const ej = entityJson(body);
    const one = async () => {
      const result = await runtime.run({ cacheKey: `bench/${name}@1`, code, entityJson: ej, rawBody: body, timeoutMs: 60000, allowedHosts: ['127.0.0.1'] } as never);
      if (result.kind !== 'ok') throw new Error(JSON.stringify(result));
    };
    const lanes = async (n: number) => { let left = n; await Promise.all(Array.from({ length: inFlight }, async () => { while (left-- > 0) await one(); })); };
    await lanes(Math.max(200, runs / 5));
    const cpu = process.cpuUsage();
    const t = performance.now();
    await lanes(runs);
    const used = process.cpuUsage(cpu);
    console.log(`${name}: ${((used.user + used.system) / runs).toFixed(0)} µs CPU/run (incl. loopback server), ${((performance.now() - t) * 1000 / runs).toFixed(0)} µs wall/run`);
  }
  await runtime.close?.();
  server.close();
  process.exit(0);
}
void main();
