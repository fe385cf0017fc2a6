/**
 * The sandbox's side of durable steps (`Context.Step`): what a replay of finished steps costs, and
 * what one new step costs, against a journal that answers at once (an in-memory DurableRun, so the
 * store's own cost is left out: `npm run bench` measures that with SQLite).
 *
 *   npx esbuild libs/sandbox/bench/durable.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/durable.js && node dist/bench/durable.js [steps]
 *
 * Prints, on the calling thread and through one worker thread (where each journal write travels to
 * the pool's thread and back): a run that replays `steps` finished steps from its journal (wall time
 * and CPU time of the process), and a run that makes `steps` new steps, one after another (each
 * journalled before the next starts), per step.
 */
import type { ConnectorRuntime, JournalEntry } from '@gi/domain';
import { MemoryJournal } from '../src/durable/memory-journal';
import { createQuickJsRuntime } from '../src/index';

const code = (steps: number) => `
let calls = 0;
for (let i = 0; i < ${steps}; i++) await Context.Step('send', ({ idempotencyKey }) => (calls++, { to: i, key: idempotencyKey }));
Context.SetResponseEntity({ ResponseBody: calls });
`;

/** The journal of a run whose `steps` steps are all done. */
function finished(steps: number): JournalEntry[] {
  return Array.from({ length: steps }, (_, i) => ({
    name: 'send', occurrence: i + 1, kind: 'step', status: 'done', resultJson: `{"to":${i},"key":"k${i}"}`, error: null, attempts: 1, startedAt: 0, finishedAt: 1, until: null,
  }));
}

/** A durable run over an in-memory journal holding `journal`. */
function durableOver(journal: JournalEntry[]): MemoryJournal {
  const run = new MemoryJournal();
  run.journal.push(...journal);
  return run;
}

async function measure(runtime: ConnectorRuntime, steps: number, journal: JournalEntry[]): Promise<{ ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await runtime.run({ cacheKey: `bench/durable@${steps}`, code: code(steps), entity: null, timeoutMs: 600_000, allowedHosts: [], limits: { cpuMs: 600_000 }, durable: durableOver(journal) });
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (result.kind !== 'ok' || result.responseBody !== (journal.length ? 0 : steps)) throw new Error(`benchmark run failed: ${JSON.stringify(result).slice(0, 500)}`);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

async function report(label: string, runtime: ConnectorRuntime, steps: number): Promise<void> {
  const journal = finished(steps);
  await measure(runtime, 100, finished(100)); // warm-up
  const replays = [];
  const firsts = [];
  for (let i = 0; i < 5; i++) {
    replays.push(await measure(runtime, steps, journal));
    firsts.push(await measure(runtime, steps, []));
  }
  const median = (runs: Array<{ ms: number; cpuMs: number }>, key: 'ms' | 'cpuMs') => runs.map((run) => run[key]).sort((a, b) => a - b)[2];
  console.log(`${label}: replay of ${steps} finished steps   ${median(replays, 'ms').toFixed(0)} ms (CPU ${median(replays, 'cpuMs').toFixed(0)} ms)`);
  console.log(
    `${label}: new steps, one after another       ${((median(firsts, 'ms') * 1000) / steps).toFixed(1)} µs per step (CPU ${((median(firsts, 'cpuMs') * 1000) / steps).toFixed(1)} µs)`,
  );
}

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 10_000);
  const inline = await createQuickJsRuntime({ workers: 0 });
  await report('in-process', inline, steps);
  await inline.close();
  const pooled = await createQuickJsRuntime({ workers: 1 });
  await report('one worker thread', pooled, steps);
  await pooled.close();
}

void main();
