/** Limits of the Custom Code runtime; every run gets its own copy of them. */
export interface QuickJsRuntimeOptions {
  /** Heap of one run's QuickJS runtime, in bytes. */
  memoryLimitBytes?: number;
  /** Log text kept per run, in bytes; later lines are dropped after a "log truncated" line. */
  maxLogBytes?: number;
  /** Largest ResponseBody, as JSON text, in bytes. */
  maxResponseBytes?: number;
}

export interface SandboxLimits {
  memoryLimitBytes: number;
  maxLogBytes: number;
  maxResponseBytes: number;
  /** QuickJS stack budget; it must stay well below the native stack of the thread the engine runs on. */
  maxStackBytes: number;
}

export const MiB = 1024 * 1024;
export const KiB = 1024;

export const DEFAULT_LIMITS: SandboxLimits = {
  memoryLimitBytes: 64 * MiB,
  maxLogBytes: 64 * KiB,
  maxResponseBytes: 10 * MiB,
  // About 1,300 plain recursive calls. The wasm engine's frames live on the thread's native stack
  // (under 1 MiB on Node's main thread), so a larger budget would overflow Node's stack first.
  maxStackBytes: 256 * KiB,
};

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`Sandbox option ${name} must be a positive number, not ${value}.`);
  return Math.floor(value);
}

export function resolveLimits(options: QuickJsRuntimeOptions = {}): SandboxLimits {
  return {
    memoryLimitBytes: positive('memoryLimitBytes', options.memoryLimitBytes, DEFAULT_LIMITS.memoryLimitBytes),
    maxLogBytes: positive('maxLogBytes', options.maxLogBytes, DEFAULT_LIMITS.maxLogBytes),
    maxResponseBytes: positive('maxResponseBytes', options.maxResponseBytes, DEFAULT_LIMITS.maxResponseBytes),
    maxStackBytes: DEFAULT_LIMITS.maxStackBytes,
  };
}

export const formatBytes = (bytes: number) =>
  bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes >= KiB && bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`;
