/**
 * Per-run overhead of the Custom Code runtime for a trivial connector (the standard acknowledgment
 * snippet), measured run after run with the median and 90th percentile.
 *
 *   npx esbuild libs/sandbox/bench/overhead.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/overhead.js && node dist/bench/overhead.js [runs]
 *
 * (The bundle must sit inside the checkout so that node_modules and the worker entry are found.)
 *
 * Prints four figures. On the calling thread: a run whose sandbox (context, Context API, compiled
 * connector) was made ready in the idle moment before it, the latency a webhook sees; then runs
 * back to back with no idle moment, where each run also pays for freeing the previous run's
 * sandbox and preparing the next (all the work of a run). Through one worker thread, the same two
 * with the message round trip: runs 2 ms apart, and back to back.
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

/** How the next run follows: after a turn of the event loop, 2 ms later, or at once. */
type Pace = 'turn' | 'spaced' | 'back-to-back';

async function measure(runtime: ConnectorRuntime, runs: number, pace: Pace): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = await runtime.run({ cacheKey: 'bench/ack@1', code: CODE, entity: ENTITY, timeoutMs: 5000, allowedHosts: [] });
    times.push(performance.now() - started);
    if (result.kind !== 'ok') throw new Error(`benchmark run failed: ${JSON.stringify(result)}`);
    // Webhook calls arrive spaced out: give the runtime the idle moment it uses to ready the next sandbox.
    if (pace === 'turn') await new Promise((resolve) => setImmediate(resolve));
    if (pace === 'spaced') await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return times.slice(Math.floor(runs / 10)); // drop the warm-up
}

function report(label: string, times: number[]): void {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
  console.log(`${label.padEnd(48)} median ${at(0.5)} ms   p90 ${at(0.9)} ms   (${sorted.length} runs)`);
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5000);
  const inline = await createQuickJsRuntime({ workers: 0 });
  report('in-process, ready sandbox', await measure(inline, runs, 'turn'));
  report('in-process, back to back (no idle moment)', await measure(inline, runs, 'back-to-back'));
  await inline.close();
  const pooled = await createQuickJsRuntime({ workers: 1 });
  report('one worker thread, runs 2 ms apart', await measure(pooled, runs, 'spaced'));
  report('one worker thread, back to back', await measure(pooled, runs, 'back-to-back'));
  await pooled.close();
}

void main();
