import { shareOfCapacity } from '@gi/domain';
import type { CompileResult, ConnectorRunRequest, ConnectorRunResult, ConnectorRuntime } from '@gi/domain';
import { availableParallelism } from 'node:os';
import { ConnectorCompiler } from './compile/compile-connector';
import { SandboxEngine } from './engine/sandbox-engine';
import { decodeResult } from './run/run-verdict';
import type { RunInput } from './run/run-input';
import { resolveEnvironment, resolveRunLimits } from './sandbox-environment';
import { SecretRedaction } from './run/secret-redaction';
import { RUNS_PER_THREAD, type QuickJsRuntimeOptions, type SandboxEnvironment } from './sandbox-options';
import { WorkerPool } from './threads/worker-pool';
import { locateWorkerScript } from './threads/worker-script';

/** The entity as JSON text; undefined when it has none (nested deeper than the host can serialise, a cycle, a BigInt). */
function entityText(entity: unknown): string | undefined {
  try {
    return JSON.stringify(entity ?? null);
  } catch {
    return undefined;
  }
}

/** The run's request entity as an object: parsed here only for a connector that never touched it (its ResponseBody is the reply). */
const requestEntity = (request: ConnectorRunRequest): unknown => (request.entityJson === undefined ? (request.entity ?? null) : JSON.parse(request.entityJson));

const UNUSABLE_ENTITY = 'The request entity cannot be handed to the connector: it nests too deeply (or is not JSON data).';
const unusableEntity = (): ConnectorRunResult => ({
  kind: 'failed',
  reason: 'limit',
  message: UNUSABLE_ENTITY,
  logs: [{ at: Date.now(), level: 'error', message: UNUSABLE_ENTITY }],
  durationMs: 0,
});

const KILL_GRACE_MS = 2000;

/** Worker threads (0 when runs share the caller's thread), the busy ones, runs in them and runs waiting. */
export interface SandboxLoad {
  threads: number;
  busyThreads: number;
  running: number;
  queued: number;
}

/** The Custom Code runtime, with how it isolates runs from the caller's thread. */
export interface QuickJsConnectorRuntime extends ConnectorRuntime {
  /** 'worker-threads' normally; 'in-process' when asked for (workers: 0) or no worker entry exists. */
  readonly isolation: 'worker-threads' | 'in-process';
  /** Threads and runs right now, for the metrics (read at each scrape). */
  load(): SandboxLoad;
}

/**
 * The Custom Code runtime: every run starts from a QuickJS runtime and context as nobody used them
 * (a sandbox reset to its memory image), on an engine instance capped at the run's memory limit,
 * with its own stack, time and CPU limits, on a pool of worker threads. The WebAssembly code is
 * compiled once per thread.
 */
export async function createQuickJsRuntime(options: QuickJsRuntimeOptions = {}): Promise<QuickJsConnectorRuntime> {
  const workers = options.workers ?? Math.min(4, Math.max(1, availableParallelism()));
  const script = workers > 0 ? locateWorkerScript() : null;
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new Error('The connector runtime is closed.');
  };
  /** The run's input; a failed result instead when its entity cannot be handed to the sandbox. */
  const check = (request: ConnectorRunRequest, env: SandboxEnvironment, redaction: SecretRedaction): RunInput | ConnectorRunResult => {
    ensureOpen();
    if (!(request.timeoutMs > 0)) throw new RangeError(`A connector run needs a positive timeoutMs, not ${request.timeoutMs}.`);
    const { cacheKey, code, timeoutMs, allowedHosts, blockedHttp, readFile, trace, sleeps } = request;
    const entityJson = request.entityJson ?? entityText(request.entity);
    if (entityJson === undefined) return unusableEntity();
    const rawBody = request.rawBody ?? null;
    const secrets = request.secrets ?? {};
    return {
      cacheKey,
      tenant: request.tenant,
      code,
      entityJson,
      rawBody,
      inbound: request.inbound ?? null,
      secrets,
      timeoutMs,
      limits: resolveRunLimits(env.defaults, request.limits),
      allowedHosts,
      blockedHttp,
      onProgress: redaction.progressTo(request.onProgress),
      onLogs: redaction.linesTo(request.onLogs),
      readFile,
      trace,
      durable: request.durable && redaction.durableRun(request.durable),
      sleeps,
      events: request.events?.map(({ name, payload }) => ({ name, payloadJson: JSON.stringify(payload ?? null) })),
    };
  };
  // Deploys are checked on the calling thread, on an engine instance of the compiler's own.
  const inProcess = resolveEnvironment(options, false);
  const compiler = await ConnectorCompiler.create(inProcess);

  if (script) {
    const env = resolveEnvironment(options, true);
    const runsPerTenant = shareOfCapacity(workers * RUNS_PER_THREAD, options.tenantSharePercent ?? 100);
    const pool = new WorkerPool({ size: workers, runsPerWorker: RUNS_PER_THREAD, runsPerTenant, env, script, killGraceMs: KILL_GRACE_MS });
    return {
      isolation: 'worker-threads',
      load: () => pool.load(),
      compile: (code: string): CompileResult => (ensureOpen(), compiler.compile(code)),
      run: async (request: ConnectorRunRequest): Promise<ConnectorRunResult> => {
        const redaction = new SecretRedaction(request.secrets);
        const input = check(request, env, redaction);
        return 'kind' in input ? input : redaction.result(decodeResult(await pool.run(input, request.cancel), () => requestEntity(request)));
      },
      async close() {
        if (closed) return;
        closed = true;
        await pool.close();
        compiler.dispose();
      },
    };
  }

  const engine = await SandboxEngine.create(inProcess);
  let running = 0;
  return {
    isolation: 'in-process',
    load: () => ({ threads: 0, busyThreads: 0, running, queued: 0 }),
    compile: (code: string): CompileResult => (ensureOpen(), compiler.compile(code)),
    run: async (request: ConnectorRunRequest): Promise<ConnectorRunResult> => {
      const redaction = new SecretRedaction(request.secrets);
      const input = check(request, inProcess, redaction);
      if ('kind' in input) return input;
      running++;
      try {
        const result = await engine.run({ ...input, cancel: request.cancel });
        return redaction.result(decodeResult(result, () => requestEntity(request)));
      } finally {
        running--;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      engine.dispose();
      compiler.dispose();
    },
  };
}
