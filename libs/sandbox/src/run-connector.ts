import type { ConnectorRunResult } from '@gi/domain';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import sjson from 'secure-json-parse';
import { CollectError, ContextApi, ResponseTooLarge } from './context-api';
import { CONNECTOR_FILENAME, wrapConnector } from './connector-source';
import { LogBuffer } from './log-buffer';
import type { PreparedSandbox } from './prepared-sandbox';
import type { RunInput } from './run-input';
import {
  cancelledVerdict,
  failureVerdict,
  responseBodyOf,
  stalledVerdict,
  timeoutVerdict,
  tooLargeVerdict,
  withRunFacts,
  type Verdict,
} from './run-verdict';
import type { SandboxEnvironment } from './sandbox-options';

export type { RunInput } from './run-input';

export interface RunOutcome {
  result: ConnectorRunResult;
  /**
   * Frees the run's engine; false when QuickJS could not free it cleanly (it can lose track of an
   * object when interrupted at an unlucky point), and the module must then not be used again.
   * Separate from the result so the caller can reply first and clean up after.
   */
  release(): boolean;
}

/** Jobs run between checks of the deadline and of the connector's promise. */
const JOB_BATCH = 256;
/** Longest stretch of connector code before pending HTTP responses get a chance to arrive. */
const SLICE_MS = 20;

type Ending = { kind: 'fulfilled' } | { kind: 'rejected'; message: string; stack: string } | { kind: 'stalled' };

/**
 * Runs one connector in a sandbox nobody used before, so nothing of one run is visible to the next.
 * The deadline is enforced inside the engine by the interrupt handler; values cross the boundary
 * only as JSON text.
 */
export async function runConnector(sandbox: PreparedSandbox, env: SandboxEnvironment, input: RunInput): Promise<RunOutcome> {
  const started = performance.now();
  const run = new ConnectorRun(sandbox, env, input);
  let verdict: Verdict;
  try {
    verdict = await run.execute();
  } finally {
    run.end();
  }
  return {
    result: withRunFacts(verdict, { logs: run.logs.toArray(), durationMs: performance.now() - started }),
    release: () => {
      try {
        sandbox.dispose();
        return true;
      } catch {
        return false;
      }
    },
  };
}

class ConnectorRun {
  readonly logs: LogBuffer;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly api: ContextApi;
  private readonly handles: QuickJSHandle[] = [];
  private readonly deadline: number;
  private timedOut = false;
  private cancelled = false;
  /** Set once the connector's own code runs: an interrupt while the Context API is built would break the engine. */
  private started = false;
  private wake: (() => void) | null = null;
  private readonly stopListening: () => void;

  constructor(
    sandbox: PreparedSandbox,
    private readonly env: SandboxEnvironment,
    private readonly input: RunInput,
  ) {
    this.runtime = sandbox.runtime;
    this.context = sandbox.context;
    this.logs = new LogBuffer(env.limits.maxLogBytes);
    this.deadline = Date.now() + input.timeoutMs;
    this.api = new ContextApi(this.context, env, input, this.logs);
    this.api.onHostSettled = () => this.wake?.();
    // Called by the engine every few thousand operations: a raised error, a cancellation or a passed
    // deadline stops the code with an error that no try/catch inside the sandbox can catch.
    this.runtime.setInterruptHandler(() => {
      if (this.api.raised) return true;
      if (this.started && input.cancel?.requested) this.cancelled = true;
      else if (Date.now() >= this.deadline) this.timedOut = true;
      return this.cancelled || this.timedOut;
    });
    // A run waiting on host work wakes up to stop; ending the run then aborts that work.
    this.stopListening =
      input.cancel?.onRequest(() => {
        this.cancelled = true;
        this.wake?.();
      }) ?? (() => undefined);
    this.api.install();
  }

  async execute(): Promise<Verdict> {
    if (this.input.cancel?.requested) this.cancelled = true;
    this.started = true;
    const ending: Ending = this.cancelled ? { kind: 'stalled' } : await this.start();
    const verdict = this.verdictOf(ending);
    if (verdict.kind === 'failed') this.logs.addSystem('error', verdict.message);
    if (verdict.kind === 'raised') this.logs.addSystem('error', `RaiseError: ${verdict.title}: ${verdict.message}`);
    return verdict;
  }

  /** Stops host work and drops every handle, so the sandbox can be freed. */
  end(): void {
    this.stopListening();
    this.api.dispose();
    for (const handle of this.handles.reverse()) if (handle.alive) handle.dispose();
    this.handles.length = 0;
    this.runtime.removeInterruptHandler();
  }

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }

  /** Waits until a host request settles or the deadline passes. */
  private waitForHost(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, this.deadline - Date.now()));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = null;
    });
  }

  /** Compiles and calls the connector, then runs its jobs until its promise settles or it cannot. */
  private async start(): Promise<Ending> {
    const ctx = this.context;
    const compiled = ctx.evalCode(wrapConnector(this.input.code), CONNECTOR_FILENAME);
    if (compiled.error) return { kind: 'rejected', ...this.describe(this.keep(compiled.error)) };
    const fn = this.keep(compiled.value);
    if (ctx.typeof(fn) !== 'function') {
      return { kind: 'rejected', message: 'SyntaxError: the connector code closes its function body early (an unmatched "}").', stack: '' };
    }
    const called = ctx.callFunction(fn, ctx.undefined);
    if (called.error) return { kind: 'rejected', ...this.describe(this.keep(called.error)) };
    const promise = this.keep(called.value);
    let slice = performance.now();
    for (;;) {
      const jobs = this.runtime.executePendingJobs(JOB_BATCH);
      // Only errors no code can catch escape a job: an interrupt (deadline, RaiseError) or the engine giving up.
      if (jobs.error) return { kind: 'rejected', ...this.describe(this.keep(jobs.error)) };
      const state = ctx.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        if (!state.notAPromise) state.value.dispose();
        return { kind: 'fulfilled' };
      }
      if (state.type === 'rejected') return { kind: 'rejected', ...this.describe(this.keep(state.error)) };
      if (this.api.raised || this.timedOut || this.cancelled) return { kind: 'stalled' };
      if (Date.now() >= this.deadline) {
        this.timedOut = true;
        return { kind: 'stalled' };
      }
      if (this.runtime.hasPendingJob()) {
        if (this.api.pendingCalls > 0 && performance.now() - slice > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
        continue;
      }
      if (this.api.pendingCalls === 0) return { kind: 'stalled' };
      await this.waitForHost();
      slice = performance.now();
    }
  }

  private describe(error: QuickJSHandle): { message: string; stack: string } {
    if (this.api.raised || this.timedOut || this.cancelled) return { message: '', stack: '' };
    return this.api.describe(error);
  }

  private verdictOf(ending: Ending): Verdict {
    if (this.cancelled) return cancelledVerdict;
    if (this.api.raised) return { kind: 'raised', ...this.api.raised };
    if (this.timedOut) return timeoutVerdict(this.input.timeoutMs);
    switch (ending.kind) {
      case 'rejected':
        return failureVerdict(ending.message, ending.stack, this.env.limits);
      case 'stalled':
        return stalledVerdict;
      case 'fulfilled':
        return this.response();
    }
  }

  /** The ResponseBody of the entity given to SetResponseEntity, else of the request entity. */
  private response(): Verdict {
    let text: string | undefined;
    try {
      text = this.api.collect();
    } catch (error) {
      if (this.cancelled) return cancelledVerdict;
      if (this.api.raised) return { kind: 'raised', ...this.api.raised };
      if (this.timedOut) return timeoutVerdict(this.input.timeoutMs);
      if (error instanceof ResponseTooLarge) return tooLargeVerdict(this.env.limits);
      if (error instanceof CollectError) return failureVerdict(`The ResponseBody cannot be sent: ${error.message}`, '', this.env.limits);
      throw error;
    }
    if (text === undefined) return { kind: 'ok', responseBody: responseBodyOf(this.input.entity) };
    if (Buffer.byteLength(text) > this.env.limits.maxResponseBytes) return tooLargeVerdict(this.env.limits);
    // Keys like __proto__ are dropped so a returned object cannot pollute prototypes on the host.
    const parsed = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }) as { body?: unknown };
    return { kind: 'ok', responseBody: parsed.body };
  }
}
