/** Limits of the Custom Code runtime; every run gets its own copy of them. */
export interface QuickJsRuntimeOptions {
  /** Heap of one run's QuickJS runtime, in bytes. */
  memoryLimitBytes?: number;
  /** Log text kept per run, in bytes; later lines are dropped after a "log truncated" line. */
  maxLogBytes?: number;
  /** Largest ResponseBody, as JSON text, in bytes. */
  maxResponseBytes?: number;
  /** Most bytes one `Context.ReadFile` call returns; larger files are read in ranges. */
  maxReadFileBytes?: number;
  /**
   * Worker threads that run connectors, so a busy connector never blocks the caller's event loop.
   * 0 runs connectors on the calling thread (tests, tools). Default: one per core, at most 4.
   */
  workers?: number;
  http?: HttpOptions;
}

/** Limits of `Context.Http.Request`. */
export interface HttpOptions {
  /** Largest response body a connector may receive, in bytes (default 5 MiB). */
  maxResponseBytes?: number;
  /** Time limit of one request when the connector gives none (default 30 s). */
  defaultTimeoutMs?: number;
  /** Requests one run may have in flight at once (default 8). */
  maxPendingCalls?: number;
  /** Redirects followed per request, each one checked like the first URL (default 5). */
  maxRedirects?: number;
  /**
   * Addresses treated as public although they are private or loopback. Only for local test
   * servers and development; leave empty in production.
   */
  trustedAddresses?: string[];
}

export interface SandboxLimits {
  memoryLimitBytes: number;
  maxLogBytes: number;
  maxResponseBytes: number;
  maxReadFileBytes: number;
  /** QuickJS stack budget; it must stay well below the native stack of the thread the engine runs on. */
  maxStackBytes: number;
}

export const MiB = 1024 * 1024;
export const KiB = 1024;

export const DEFAULT_LIMITS: SandboxLimits = {
  memoryLimitBytes: 64 * MiB,
  maxLogBytes: 64 * KiB,
  maxResponseBytes: 10 * MiB,
  maxReadFileBytes: 8 * MiB,
  // About 1,300 plain recursive calls. The wasm engine's frames live on the thread's native stack
  // (under 1 MiB on Node's main thread), so a larger budget would overflow Node's stack first.
  maxStackBytes: 256 * KiB,
};

/** Worker threads get a larger native stack, so connectors there may recurse deeper (about 5,000 calls). */
export const WORKER_STACK_MB = 8;
export const WORKER_MAX_STACK_BYTES = 1 * MiB;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`Sandbox option ${name} must be a positive number, not ${value}.`);
  return Math.floor(value);
}

/** Everything a thread running connectors needs to know; plain data, so it can be sent to a worker. */
export interface SandboxEnvironment {
  limits: SandboxLimits;
  http: Required<HttpOptions>;
}

export function resolveEnvironment(options: QuickJsRuntimeOptions = {}, onWorker: boolean): SandboxEnvironment {
  const limits = resolveLimits(options);
  if (onWorker) limits.maxStackBytes = WORKER_MAX_STACK_BYTES;
  const http = options.http ?? {};
  return {
    limits,
    http: {
      maxResponseBytes: positive('http.maxResponseBytes', http.maxResponseBytes, 5 * MiB),
      defaultTimeoutMs: positive('http.defaultTimeoutMs', http.defaultTimeoutMs, 30_000),
      maxPendingCalls: positive('http.maxPendingCalls', http.maxPendingCalls, 8),
      maxRedirects: http.maxRedirects === undefined ? 5 : Math.max(0, Math.floor(http.maxRedirects)),
      trustedAddresses: [...(http.trustedAddresses ?? [])],
    },
  };
}

export function resolveLimits(options: QuickJsRuntimeOptions = {}): SandboxLimits {
  return {
    memoryLimitBytes: positive('memoryLimitBytes', options.memoryLimitBytes, DEFAULT_LIMITS.memoryLimitBytes),
    maxLogBytes: positive('maxLogBytes', options.maxLogBytes, DEFAULT_LIMITS.maxLogBytes),
    maxResponseBytes: positive('maxResponseBytes', options.maxResponseBytes, DEFAULT_LIMITS.maxResponseBytes),
    maxReadFileBytes: positive('maxReadFileBytes', options.maxReadFileBytes, DEFAULT_LIMITS.maxReadFileBytes),
    maxStackBytes: DEFAULT_LIMITS.maxStackBytes,
  };
}

export const formatBytes = (bytes: number) =>
  bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes >= KiB && bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`;
