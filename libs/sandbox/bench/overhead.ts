/**
 * Per-run overhead of the Custom Code runtime for a trivial connector (the standard acknowledgment
 * snippet), measured run after run with the median and 90th percentile.
 *
 *   npx esbuild libs/sandbox/bench/overhead.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/overhead.js && node dist/bench/overhead.js [runs]
 *
 * (The bundle must sit inside the checkout so that node_modules and the worker entry are found.)
 *
 * Prints three figures: a run on the calling thread with the spare sandbox made ready in the idle
 * moment between runs (the latency a webhook sees), the same back to back with no idle moment (all
 * the work of a run: context creation, compile, run, free), and through one worker thread (adds
 * the message round trip).
 */
import type { ConnectorRuntime } from '@gi/domain';
import { createQuickJsRuntime } from '../src/index';

const CODE = `
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
entity.ResponseBody = { Status: "Accepted", Message: \`order \${entity.RequestBody.orderId}\` };
Context.SetResponseEntity(entity);
`;
const ENTITY = { RequestParams: 'a=1', RequestHeaders: 'Content-Type=application%2Fjson', RequestBody: { orderId: 42 }, ResponseBody: null };

async function measure(runtime: ConnectorRuntime, runs: number, paced: boolean): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = await runtime.run({ cacheKey: 'bench/ack@1', code: CODE, entity: ENTITY, timeoutMs: 5000, allowedHosts: [] });
    times.push(performance.now() - started);
    if (result.kind !== 'ok') throw new Error(`benchmark run failed: ${JSON.stringify(result)}`);
    // Webhook calls arrive spaced out: give the runtime the idle moment it uses to ready the next sandbox.
    if (paced) await new Promise((resolve) => setImmediate(resolve));
  }
  return times.slice(Math.floor(runs / 10)); // drop the warm-up
}

function report(label: string, times: number[]): void {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
  console.log(`${label.padEnd(44)} median ${at(0.5)} ms   p90 ${at(0.9)} ms   (${sorted.length} runs)`);
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5000);
  const inline = await createQuickJsRuntime({ workers: 0 });
  report('in-process, ready spare sandbox', await measure(inline, runs, true));
  report('in-process, back to back (no idle moment)', await measure(inline, runs, false));
  await inline.close();
  const pooled = await createQuickJsRuntime({ workers: 1 });
  report('one worker thread, incl. message round trip', await measure(pooled, runs, true));
  await pooled.close();
}

void main();
