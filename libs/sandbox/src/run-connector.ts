import type { ConnectorRunResult } from '@gi/domain';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import sjson from 'secure-json-parse';
import { CollectError, ResponseTooLarge, type ContextApi } from './context-api';
import { CONNECTOR_FILENAME, wrapConnector } from './connector-source';
import { LogBuffer } from './log-buffer';
import type { PreparedSandbox } from './prepared-sandbox';
import type { RunInput } from './run-input';
import {
  cancelledVerdict,
  cpuVerdict,
  failureVerdict,
  memoryVerdict,
  responseBodyOf,
  stalledVerdict,
  timeoutVerdict,
  tooLargeVerdict,
  withRunFacts,
  type Verdict,
} from './run-verdict';

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
 * Time and CPU limits are enforced inside the engine by the interrupt handler; values cross the
 * boundary only as JSON text.
 */
export async function runConnector(sandbox: PreparedSandbox, input: RunInput): Promise<RunOutcome> {
  const started = performance.now();
  const run = new ConnectorRun(sandbox, input);
  let verdict: Verdict;
  try {
    verdict = await run.execute();
  } finally {
    run.end();
    sandbox.api.end();
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
  private readonly deadline: number;
  private timedOut = false;
  private cpuSpent = false;
  private cancelled = false;
  private readonly stopListening: () => void;
  /** Time the connector's code has run so far, and since when it runs now (null while it waits on the host). */
  private busyMs = 0;
  private busySince: number | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly sandbox: PreparedSandbox,
    private readonly input: RunInput,
  ) {
    this.runtime = sandbox.runtime;
    this.context = sandbox.context;
    this.api = sandbox.api;
    this.logs = new LogBuffer(input.limits.logBytes);
    this.deadline = Date.now() + input.timeoutMs;
    this.runtime.setMemoryLimit(input.limits.memoryBytes);
    this.api.bind({ input, logs: this.logs, onHostSettled: () => this.wake?.() });
    // Called by the engine every few thousand operations: true stops the code with an error that
    // no try/catch inside the sandbox can catch.
    this.runtime.setInterruptHandler(() => this.mustStop());
    // A run waiting on host work wakes up to stop; ending the run then aborts that work.
    this.stopListening =
      input.cancel?.onRequest(() => {
        this.cancelled = true;
        this.wake?.();
      }) ?? (() => undefined);
  }

  async execute(): Promise<Verdict> {
    if (this.input.cancel?.requested) this.cancelled = true;
    const ending: Ending = this.cancelled ? { kind: 'stalled' } : await this.start();
    const verdict = this.verdictOf(ending);
    if (verdict.kind === 'failed') this.logs.addSystem('error', verdict.message);
    if (verdict.kind === 'raised') this.logs.addSystem('error', `RaiseError: ${verdict.title}: ${verdict.message}`);
    return verdict;
  }

  /** Stops listening for a cancellation. */
  end(): void {
    this.stopListening();
  }

  /**
   * True once the run must end: a cancellation, RaiseError or a limit of the Context API, the deadline,
   * the CPU time or the memory.
   */
  private mustStop(): boolean {
    if (this.input.cancel?.requested) this.cancelled = true;
    if (this.cancelled || this.api.stopped || this.timedOut || this.cpuSpent || this.sandbox.instance.exhausted) return true;
    if (Date.now() >= this.deadline) this.timedOut = true;
    else if (this.busySince !== null && this.busyMs + (performance.now() - this.busySince) >= this.input.limits.cpuMs) this.cpuSpent = true;
    return this.timedOut || this.cpuSpent;
  }

  /** Waits, not counted as CPU time: for a turn of the event loop, or until a host call settles or the deadline passes. */
  private async waitFor(event: 'host' | 'turn'): Promise<void> {
    if (this.busySince !== null) this.busyMs += performance.now() - this.busySince;
    this.busySince = null;
    if (event === 'turn') await new Promise((resolve) => setImmediate(resolve));
    else
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(0, this.deadline - Date.now()));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
    this.wake = null;
    this.busySince = performance.now();
  }

  /** The connector function: compiled while the sandbox was prepared, or now. */
  private connector(): { fn: QuickJSHandle } | Ending {
    const preloaded = this.sandbox.preloadedFor(this.input.code);
    if (preloaded) return { fn: preloaded };
    const compiled = this.context.evalCode(wrapConnector(this.input.code), CONNECTOR_FILENAME);
    if (compiled.error) return { kind: 'rejected', ...this.describe(this.sandbox.keep(compiled.error)) };
    const fn = this.sandbox.keep(compiled.value);
    if (this.context.typeof(fn) !== 'function') {
      return { kind: 'rejected', message: 'SyntaxError: the connector code closes its function body early (an unmatched "}").', stack: '' };
    }
    return { fn };
  }

  /** Calls the connector, then runs its jobs until its promise settles or it cannot. */
  private async start(): Promise<Ending> {
    this.busySince = performance.now();
    const connector = this.connector();
    if (!('fn' in connector)) return connector;
    const ctx = this.context;
    const called = ctx.callFunction(connector.fn, ctx.undefined);
    if (called.error) return { kind: 'rejected', ...this.describe(this.sandbox.keep(called.error)) };
    const promise = this.sandbox.keep(called.value);
    let slice = performance.now();
    for (;;) {
      const jobs = this.runtime.executePendingJobs(JOB_BATCH);
      // Only errors no code can catch escape a job: an interrupt (deadline, RaiseError) or the engine giving up.
      if (jobs.error) return { kind: 'rejected', ...this.describe(this.sandbox.keep(jobs.error)) };
      const state = ctx.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        if (!state.notAPromise) state.value.dispose();
        return { kind: 'fulfilled' };
      }
      if (state.type === 'rejected') return { kind: 'rejected', ...this.describe(this.sandbox.keep(state.error)) };
      if (this.mustStop()) return { kind: 'stalled' };
      if (this.runtime.hasPendingJob()) {
        if (this.api.pendingCalls > 0 && performance.now() - slice > SLICE_MS) {
          await this.waitFor('turn');
          slice = performance.now();
        }
        continue;
      }
      if (this.api.pendingCalls === 0) return { kind: 'stalled' };
      await this.waitFor('host');
      slice = performance.now();
    }
  }

  private describe(error: QuickJSHandle): { message: string; stack: string } {
    if (this.stoppedVerdict()) return { message: '', stack: '' };
    return this.api.describe(error);
  }

  private verdictOf(ending: Ending): Verdict {
    const stopped = this.stoppedVerdict();
    if (stopped) return stopped;
    switch (ending.kind) {
      case 'rejected':
        return failureVerdict(ending.message, ending.stack, this.input.limits);
      case 'stalled':
        return stalledVerdict;
      case 'fulfilled':
        return this.response();
    }
  }

  private stoppedVerdict(): Verdict | null {
    if (this.cancelled) return cancelledVerdict;
    // Out of memory first: whatever else went wrong may have come from the lack of memory.
    if (this.sandbox.instance.exhausted) return memoryVerdict(this.input.limits);
    if (this.api.stopped) return this.api.stopped;
    if (this.timedOut) return timeoutVerdict(this.input.timeoutMs);
    if (this.cpuSpent) return cpuVerdict(this.input.limits.cpuMs);
    return null;
  }

  /** The ResponseBody of the entity given to SetResponseEntity, else of the request entity. */
  private response(): Verdict {
    const { limits } = this.input;
    let text: string | undefined;
    try {
      text = this.api.collect(limits.responseBodyBytes);
    } catch (error) {
      const stopped = this.stoppedVerdict();
      if (stopped) return stopped;
      if (error instanceof ResponseTooLarge) return tooLargeVerdict(limits);
      if (error instanceof CollectError) return failureVerdict(`The ResponseBody cannot be sent: ${error.message}`, '', limits);
      throw error;
    }
    if (text === undefined) return { kind: 'ok', responseBody: responseBodyOf(this.input.entity) };
    if (Buffer.byteLength(text) > limits.responseBodyBytes) return tooLargeVerdict(limits);
    // Keys like __proto__ are dropped so a returned object cannot pollute prototypes on the host.
    const parsed = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }) as { body?: unknown };
    return { kind: 'ok', responseBody: parsed.body };
  }
}
