/**
 * Per-run overhead of the Custom Code runtime for a trivial connector (the standard acknowledgment
 * snippet), measured run after run with the median and 90th percentile.
 *
 *   npx esbuild libs/sandbox/bench/overhead.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/overhead.js && node dist/bench/overhead.js [runs]
 *
 * (The bundle must sit inside the checkout so that node_modules and the worker entry are found.)
 *
 * Prints, on the calling thread: the CPU a new sandbox costs; runs one after another (each starts from the sandbox's memory
 * image, put back after the previous run: all the work of a run), and the first run of connectors
 * never seen before (a spare sandbox compiles it and takes its image). Through one worker thread,
 * with the message round trip: runs 2 ms apart, and back to back. Through two worker threads with
 * 50 runs in flight (the service under load): runs per second and the time of each run.
 */
import type { ConnectorRuntime } from '@gi/domain';
import { createQuickJsRuntime } from '../src/index';
import { Sandbox } from '../src/engine/sandbox';
import { resolveEnvironment } from '../src/sandbox-environment';

const CODE = `
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
entity.ResponseBody = { Status: "Accepted", Message: \`order \${entity.RequestBody.orderId}\` };
Context.SetResponseEntity(entity);
`;
const ENTITY = { RequestParams: 'a=1', RequestHeaders: 'Content-Type=application%2Fjson', RequestBody: { orderId: 42 }, ResponseBody: null };

/** How the next run follows: 2 ms later, or at once. */
type Pace = 'spaced' | 'back-to-back';

async function measure(runtime: ConnectorRuntime, runs: number, pace: Pace, cacheKey = () => 'bench/ack@1'): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = await runtime.run({ cacheKey: cacheKey(), code: CODE, entity: ENTITY, timeoutMs: 5000, allowedHosts: [] });
    times.push(performance.now() - started);
    if (result.kind !== 'ok') throw new Error(`benchmark run failed: ${JSON.stringify(result)}`);
    if (pace === 'spaced') await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return times.slice(Math.floor(runs / 10)); // drop the warm-up
}

/** `inFlight` runs at once, each replaced as it ends, until `runs` ran: runs per second and each run's time. */
async function measureLoad(runtime: ConnectorRuntime, runs: number, inFlight: number): Promise<{ perSecond: number; times: number[] }> {
  const times: number[] = [];
  let started = 0;
  const lane = async () => {
    while (started < runs) {
      started++;
      const at = performance.now();
      const result = await runtime.run({ cacheKey: 'bench/ack@1', code: CODE, entity: ENTITY, timeoutMs: 5000, allowedHosts: [] });
      times.push(performance.now() - at);
      if (result.kind !== 'ok') throw new Error(`benchmark run failed: ${JSON.stringify(result)}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane)); // warm-up
  started = 0;
  times.length = 0;
  const begin = performance.now();
  await Promise.all(Array.from({ length: inFlight }, lane));
  return { perSecond: runs / ((performance.now() - begin) / 1000), times };
}

function report(label: string, times: number[]): void {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
  console.log(`${label.padEnd(48)} median ${at(0.5)} ms   p90 ${at(0.9)} ms   (${sorted.length} runs)`);
}

/**
 * The CPU one new sandbox costs (an engine instance, the Context API installed, its image taken), as
 * the pool pays it for every connector's first runs at once on a thread: each waiting on HTTP needs one.
 */
async function newSandboxCpu(count: number): Promise<number[]> {
  const environment = resolveEnvironment({}, false);
  const cpu: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = process.cpuUsage();
    await Sandbox.create(environment);
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
  }
  return cpu.slice(Math.floor(count / 10));
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5000);
  report('in-process, a new sandbox (CPU, not wall time)', await newSandboxCpu(40));
  const inline = await createQuickJsRuntime({ workers: 0 });
  report('in-process, run after run', await measure(inline, runs, 'back-to-back'));
  let version = 0;
  // Spaced out, so the thread has the idle moment in which it makes its spare sandboxes again.
  report('in-process, first run of a new connector', await measure(inline, Math.min(runs, 500), 'spaced', () => `bench/new@${++version}`));
  await inline.close();
  const pooled = await createQuickJsRuntime({ workers: 1 });
  report('one worker thread, runs 2 ms apart', await measure(pooled, runs, 'spaced'));
  report('one worker thread, back to back', await measure(pooled, runs, 'back-to-back'));
  await pooled.close();
  const two = await createQuickJsRuntime({ workers: 2 });
  const load = await measureLoad(two, runs, 50);
  report(`two worker threads, 50 in flight: ${Math.round(load.perSecond)} runs/s`, load.times);
  await two.close();
}

void main();
