import { availableParallelism } from 'node:os';
import type { ServiceConfig } from '@gi/config';

/** How many processes `gi up` runs: `--processes`, else EMBEDDED_PROCESSES, else the cores available. */
export function embeddedProcessCount(fromCommandLine: number | undefined, config: Pick<ServiceConfig, 'EMBEDDED_PROCESSES'>, cores = availableParallelism()): number {
  return fromCommandLine ?? config.EMBEDDED_PROCESSES ?? Math.max(1, cores);
}

/**
 * What each of `processes` embedded processes runs: EXECUTOR_CONCURRENCY and SANDBOX_WORKERS are the
 * deployment's totals, split evenly (rounded up, at least one each). Unset, the sandbox threads total
 * the cores (a single process takes at most 4 of them), so the processes do not outnumber the cores
 * with threads that would only take turns.
 */
export function processShare(config: Pick<ServiceConfig, 'EXECUTOR_CONCURRENCY' | 'SANDBOX_WORKERS'>, processes: number, cores = availableParallelism()): { EXECUTOR_CONCURRENCY: number; SANDBOX_WORKERS: number } {
  const sandboxThreads = config.SANDBOX_WORKERS ?? Math.max(1, cores);
  return {
    EXECUTOR_CONCURRENCY: Math.max(1, Math.ceil(config.EXECUTOR_CONCURRENCY / processes)),
    SANDBOX_WORKERS: Math.min(64, Math.max(1, Math.ceil(sandboxThreads / processes))),
  };
}
