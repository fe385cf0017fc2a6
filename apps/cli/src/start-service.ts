import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { parseServiceConfig, processEnvironment } from '@gi/config';
import type { ServiceName } from './service-names';

/**
 * Starts one service in this process (its launcher is in apps/services, loaded only now, so admin
 * commands start fast): `up` is the whole embedded deployment, the others run distributed.
 * A start that fails halfway (the broker cannot be reached after the store was opened, say) may leave
 * what it opened holding the process: it then ends shortly after the error is reported.
 */
export async function runService(name: ServiceName, argv: string[]): Promise<void> {
  try {
    await startService(name, argv);
  } catch (error) {
    setTimeout(() => process.exit(1), 500).unref();
    throw error;
  }
}

async function startService(name: ServiceName, argv: string[]): Promise<void> {
  limitHeapGrowth();
  const launchers = await import('@gi/services');
  switch (name) {
    case 'up': {
      const { values } = parseArgs({ args: argv, options: { processes: { type: 'string' } }, strict: true });
      return launchers.runEmbedded({ processes: values.processes === undefined ? undefined : processCount(values.processes) });
    }
    case 'gateway':
      return launchers.runGateway();
    case 'results':
      return launchers.runResults();
    case 'control':
      return launchers.runControl();
    case 'executor': {
      const { values } = parseArgs({ args: argv, options: { pools: { type: 'string' } }, strict: true });
      const pools = (values.pools ?? parseServiceConfig(processEnvironment()).EXECUTOR_POOLS).split(',').filter(Boolean);
      return launchers.runExecutor(pools);
    }
  }
}

/**
 * HEAP_GROWTH_PERCENT, for every thread of the process (V8's flags are the process's): set before the
 * service allocates, read by V8 at each full collection.
 */
function limitHeapGrowth(): void {
  const flag = heapGrowthFlag(processEnvironment());
  if (flag) setFlagsFromString(flag);
}

/** The V8 flag for HEAP_GROWTH_PERCENT; null for 0 (V8's own growth) or an invalid configuration, which the launcher reports with every other problem. */
export function heapGrowthFlag(env: Record<string, string | undefined>): string | null {
  let percent: number;
  try {
    percent = parseServiceConfig(env).HEAP_GROWTH_PERCENT;
  } catch {
    return null;
  }
  return percent > 0 ? `--heap-growing-percent=${percent}` : null;
}

/** `--processes N`: a whole number from 1 to 256. */
function processCount(text: string): number {
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1 || count > 256) throw new Error(`--processes takes a whole number from 1 to 256, not "${text}".`);
  return count;
}
