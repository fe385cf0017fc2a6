import { DEFAULT_CONNECTOR_LIMITS, runLimitsOf, type RunLimits } from '@gi/domain';
import {
  formatBytes,
  IN_PROCESS_STACK_BYTES,
  MiB,
  WORKER_MAX_STACK_BYTES,
  WORKER_MEMORY_BUDGET_BYTES,
  type QuickJsRuntimeOptions,
  type SandboxEnvironment,
} from './sandbox-options';

/** The limits of a run that sets none: the defaults of an integration (see `DEFAULT_CONNECTOR_LIMITS`). */
export const DEFAULT_RUN_LIMITS: Readonly<RunLimits> = Object.freeze(runLimitsOf(DEFAULT_CONNECTOR_LIMITS));

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`Sandbox limit ${name} must be a positive number, not ${value}.`);
  return Math.floor(value);
}

/** The settings of the threads that run connectors, from the runtime's options (on the calling thread). */
export function resolveEnvironment(options: QuickJsRuntimeOptions = {}, onWorker: boolean): SandboxEnvironment {
  const http = options.http ?? {};
  return {
    defaults: resolveRunLimits(DEFAULT_RUN_LIMITS, options.limits),
    maxReadFileBytes: positive('maxReadFileBytes', options.maxReadFileBytes, 8 * MiB),
    maxStackBytes: onWorker ? WORKER_MAX_STACK_BYTES : IN_PROCESS_STACK_BYTES,
    http: {
      maxResponseBytes: positive('http.maxResponseBytes', http.maxResponseBytes, 5 * MiB),
      defaultTimeoutMs: positive('http.defaultTimeoutMs', http.defaultTimeoutMs, 30_000),
      maxRedirects: http.maxRedirects === undefined ? 5 : Math.max(0, Math.floor(http.maxRedirects)),
      trustedAddresses: [...(http.trustedAddresses ?? [])],
      trustLoopback: http.trustLoopback ?? false,
      loopbackHint: http.loopbackHint ?? '',
    },
  };
}

/** A run's limits: the ones it sets, checked, and the defaults for the rest. */
export function resolveRunLimits(defaults: RunLimits, requested: Partial<RunLimits> = {}): RunLimits {
  const memoryBytes = positive('memoryBytes', requested.memoryBytes, defaults.memoryBytes);
  if (memoryBytes > WORKER_MEMORY_BUDGET_BYTES) {
    throw new RangeError(`Sandbox limit memoryBytes must be at most ${formatBytes(WORKER_MEMORY_BUDGET_BYTES)}, not ${formatBytes(memoryBytes)}.`);
  }
  return {
    memoryBytes,
    cpuMs: positive('cpuMs', requested.cpuMs, defaults.cpuMs),
    responseBodyBytes: positive('responseBodyBytes', requested.responseBodyBytes, defaults.responseBodyBytes),
    logBytes: positive('logBytes', requested.logBytes, defaults.logBytes),
    pendingCalls: positive('pendingCalls', requested.pendingCalls, defaults.pendingCalls),
  };
}
