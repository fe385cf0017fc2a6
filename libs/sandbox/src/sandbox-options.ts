// Types only from @gi/domain: worker threads load this file too, and one started from the TypeScript
// source cannot resolve workspace imports at run time.
import type { RunLimits } from '@gi/domain';

/** Settings of the Custom Code runtime. */
export interface QuickJsRuntimeOptions {
  /** Limits of runs that do not set their own (`ConnectorRunRequest.limits`); default `DEFAULT_RUN_LIMITS`. */
  limits?: Partial<RunLimits>;
  /** Most bytes one `Context.ReadFile` call returns; larger files are read in ranges. */
  maxReadFileBytes?: number;
  /**
   * Worker threads that run connectors, so a busy connector never blocks the caller's event loop.
   * 0 runs connectors on the calling thread (tests, tools). Default: one per core, at most 4.
   */
  workers?: number;
  /**
   * The most of the threads' runs (workers x RUNS_PER_THREAD) one tenant holds at once, in percent
   * (default 100: no cap); its other runs wait while another tenant's can go.
   */
  tenantSharePercent?: number;
  http?: HttpOptions;
}

/** Limits of `Context.Http.Request`. */
export interface HttpOptions {
  /** Largest response body a connector may receive, in bytes (default 5 MiB). */
  maxResponseBytes?: number;
  /** Time limit of one request when the connector gives none (default 30 s). */
  defaultTimeoutMs?: number;
  /** Redirects followed per request, each one checked like the first URL (default 5). */
  maxRedirects?: number;
  /**
   * Addresses treated as public although they are private or loopback. Only for local test
   * servers and development; leave empty in production.
   */
  trustedAddresses?: string[];
  /**
   * Every loopback address (127.0.0.0/8, ::1), no other private one, treated as public: a local run
   * against a mock API (`gi connector run --trust-loopback`). Never in the service.
   */
  trustLoopback?: boolean;
  /** Added to the refusal of a loopback address, to tell how to allow it (`gi connector run` names its flag). */
  loopbackHint?: string;
}

export const MiB = 1024 * 1024;
export const KiB = 1024;

/**
 * Each run's engine instance may grow its memory to the run's limit. A worker takes runs only while
 * the memory limits of those it runs add up to this, so the runs sharing a thread cannot together
 * take more memory than a worker is meant to hold.
 */
export const WORKER_MEMORY_BUDGET_BYTES = 1536 * MiB;

/**
 * QuickJS stack budget. The wasm engine's frames live on the thread's native stack (under 1 MiB on
 * Node's main thread), so a larger budget would overflow Node's stack first: about 1,300 plain
 * recursive calls in process. Worker threads get a larger native stack, so connectors there may
 * recurse deeper (about 5,000 calls).
 */
export const IN_PROCESS_STACK_BYTES = 256 * KiB;
/**
 * QuickJS stack budget while it compiles connector code. Its parser's recursion costs the thread's
 * native stack about 17 times what QuickJS counts, so with the budget of runs a deeply nested text
 * (200 KB of parentheses) would overflow Node's stack before QuickJS noticed. With this one QuickJS
 * refuses it first, even on the main thread (about 300 nested brackets, 100 nested blocks).
 */
export const COMPILE_STACK_BYTES = 24 * KiB;
export const WORKER_STACK_MB = 8;
/** Runs one sandbox thread holds at once; they share it while they wait on host calls. */
export const RUNS_PER_THREAD = 16;
/**
 * The young generation of a sandbox thread's V8 heap. A thread allocates little of its own (messages,
 * results; connectors live in WebAssembly memory), yet V8's default young generation is sized for a
 * main thread and kept committed: 8 MB instead of the default saves about 20 MB of resident memory
 * per thread under load, for scavenges that stay cheap (little survives them).
 */
export const WORKER_YOUNG_GENERATION_MB = 8;
export const WORKER_MAX_STACK_BYTES = 1 * MiB;

/** Everything a thread running connectors needs to know; plain data, so it can be sent to a worker. */
export interface SandboxEnvironment {
  /** Limits of runs that set none. */
  defaults: RunLimits;
  maxReadFileBytes: number;
  maxStackBytes: number;
  http: Required<HttpOptions>;
}

export const formatBytes = (bytes: number) =>
  bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes >= KiB && bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`;

export const formatMs = (ms: number) => (ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
