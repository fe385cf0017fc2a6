import { SecretFilter } from '@gi/domain';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { TOO_DEEP_TO_COMPILE } from '../compile/compile-connector';
import { CollectError, ResponseTooLarge, type ContextApi } from '../context/context-api';
import { LogBuffer } from './log-buffer';
import { nestsDeeperThan, RUN_BUDGET } from './run-budget';
import type { Sandbox } from '../engine/sandbox';
import { LONG_RUN_MS, type RunInput } from './run-input';
import {
  cancelledVerdict,
  cpuVerdict,
  failureVerdict,
  memoryVerdict,
  stalledVerdict,
  timeoutVerdict,
  tooDeepVerdict,
  tooLargeVerdict,
  withRunFacts,
  type SandboxResult,
  type Verdict,
} from './run-verdict';

export type { RunInput } from './run-input';

/** Jobs run between checks of the deadline and of the connector's promise. */
const JOB_BATCH = 256;
/** Longest stretch of connector code before pending HTTP responses get a chance to arrive. */
const SLICE_MS = 20;

type Ending = { kind: 'fulfilled' } | { kind: 'rejected'; message: string; stack: string } | { kind: 'stalled' };
/** What a run waits for when it cannot go on: a turn of the event loop, or a host call to settle or a timer to be due. */
type Wait = 'turn' | 'host';

/**
 * One run of a connector in a sandbox. `start` runs it as far as it goes without waiting on the
 * host: most connectors end there, in the caller's turn. One that waits on an HTTP request or a
 * file read goes on in `finish`. Time and CPU limits are enforced inside the engine by the interrupt
 * handler; values cross the boundary only as JSON text. The caller resets the sandbox afterwards,
 * so nothing of this run is visible to the next.
 */
export class ConnectorRun {
  private readonly logs: LogBuffer;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly api: ContextApi;
  private readonly started = performance.now();
  private readonly deadline: number;
  private timedOut = false;
  private cpuSpent = false;
  private cancelled = false;
  private readonly stopListening: () => void;
  /** Time the connector's code has run so far, and since when it runs now (null while it waits on the host). */
  private busyMs = 0;
  private busySince: number | null = null;
  private wake: (() => void) | null = null;
  private promise: QuickJSHandle | null = null;
  private slice = 0;
  /** What the run waits for once `start` returned without a result. */
  private waiting: Wait = 'host';
  /** Called once the run has gone on for LONG_RUN_MS (see RunInput). */
  private onLong: (() => void) | undefined;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly input: RunInput,
  ) {
    this.runtime = sandbox.runtime;
    this.context = sandbox.context;
    this.api = sandbox.api;
    const streaming = input.onLogs && { deliver: input.onLogs, intervalMs: RUN_BUDGET.logBatchMs, maxLines: RUN_BUDGET.logBatchLines };
    const secrets = new SecretFilter(input.secrets);
    this.logs = new LogBuffer(input.limits.logBytes, RUN_BUDGET.logLines, secrets, Date.now, streaming);
    this.deadline = Date.now() + input.timeoutMs;
    this.onLong = input.onLong;
    sandbox.begin(input.limits.memoryBytes);
    this.api.bind({ input, logs: this.logs, secrets, onHostSettled: () => this.wake?.() });
    // Called by the engine every few thousand operations: true stops the code with an error that
    // no try/catch inside the sandbox can catch.
    sandbox.interrupt = () => this.mustStop();
    // A run waiting on host work wakes up to stop; ending the run then aborts that work.
    this.stopListening =
      input.cancel?.onRequest(() => {
        this.cancelled = true;
        this.wake?.();
      }) ?? (() => undefined);
  }

  /** Calls the connector and runs it until it ends or waits on the host: its result, or null when it waits. */
  start(): SandboxResult | null {
    if (this.input.cancel?.requested) this.cancelled = true;
    if (this.cancelled) return this.result({ kind: 'stalled' });
    this.busySince = performance.now();
    this.slice = this.busySince;
    const called = this.call();
    if ('kind' in called) return this.result(called);
    this.promise = called.promise;
    const step = this.advance();
    if (typeof step !== 'string') return this.result(step);
    this.waiting = step;
    return null;
  }

  /** Goes on with a run that `start` left waiting, until it ends. */
  async finish(): Promise<SandboxResult> {
    let step: Ending | Wait = this.waiting;
    for (;;) {
      if (typeof step !== 'string') return this.result(step);
      await this.waitFor(step);
      step = this.advance();
    }
  }

  /** Stops listening for a cancellation and ends host work; the run's result is final. */
  private result(ending: Ending): SandboxResult {
    this.stopListening();
    const verdict = this.verdictOf(ending);
    this.api.end();
    if (verdict.kind === 'failed') this.logs.addSystem('error', verdict.message);
    if (verdict.kind === 'raised') this.logs.addSystem('error', `RaiseError: ${verdict.title}: ${verdict.message}`);
    if (verdict.kind === 'suspended') {
      const { kind, name, until } = verdict.wait;
      this.logs.addSystem('info', `Suspended until ${new Date(until).toISOString()}: ${kind === 'event' ? 'waits for the event' : kind === 'retry' ? 'retries the step' : 'sleeps in'} ${JSON.stringify(name)}.`);
    }
    return withRunFacts(verdict, { logs: this.logs.rest(), durationMs: performance.now() - this.started });
  }

  /**
   * True once the run must end: a cancellation, RaiseError or a limit of the Context API, the deadline,
   * the CPU time or the memory.
   */
  private mustStop(): boolean {
    if (this.onLong && performance.now() - this.started >= LONG_RUN_MS) {
      const onLong = this.onLong;
      this.onLong = undefined;
      onLong();
    }
    if (this.input.cancel?.requested) this.cancelled = true;
    let stop = this.cancelled || this.api.stopped !== null || this.timedOut || this.cpuSpent || this.sandbox.instance.exhausted;
    if (!stop) {
      if (Date.now() >= this.deadline) this.timedOut = true;
      else if (this.busySince !== null && this.busyMs + (performance.now() - this.busySince) + this.api.hostCpuMs >= this.input.limits.cpuMs) this.cpuSpent = true;
      stop = this.timedOut || this.cpuSpent;
    }
    if (stop) this.sandbox.starve();
    return stop;
  }

  /**
   * Waits, not counted as CPU time: for a turn of the event loop, or until a host call settles, the
   * next timer is due, the lines logged are due to leave, or the deadline passes.
   */
  private async waitFor(event: Wait): Promise<void> {
    if (this.busySince !== null) this.busyMs += performance.now() - this.busySince;
    this.busySince = null;
    if (event === 'turn') await new Promise((resolve) => setImmediate(resolve));
    else
      await new Promise<void>((resolve) => {
        const nextTimer = this.api.timers?.nextDue() ?? null;
        const untilTimer = nextTimer === null ? Infinity : nextTimer - performance.now();
        const logsDue = this.logs.dueAt();
        const now = Date.now();
        const timer = setTimeout(done, Math.max(0, Math.min(this.deadline - now, untilTimer, logsDue === null ? Infinity : logsDue - now)));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
    this.wake = null;
    this.logs.sendDue();
    this.busySince = performance.now();
    this.slice = this.busySince;
  }

  /** Calls the connector function (compiled into the sandbox, or compiled now): the promise it returns. */
  private call(): { promise: QuickJSHandle } | Ending {
    const ctx = this.context;
    let fn = this.sandbox.connector?.code === this.input.code ? this.sandbox.connector.fn : null;
    if (!fn) {
      const compiled = this.sandbox.evalConnector(this.input.code);
      if (compiled.error) {
        const { message, stack } = this.describe(compiled.error);
        return { kind: 'rejected', message: /^\w*Error: stack overflow/.test(message) ? TOO_DEEP_TO_COMPILE : message, stack };
      }
      fn = compiled.value;
      if (ctx.typeof(fn) !== 'function') {
        return { kind: 'rejected', message: 'SyntaxError: the connector code closes its function body early (an unmatched "}").', stack: '' };
      }
    }
    const called = ctx.callFunction(fn, ctx.undefined);
    if (called.error) return { kind: 'rejected', ...this.describe(called.error) };
    return { promise: called.value };
  }

  /** Runs the connector's jobs until its promise settles, it must stop, or it waits on the host. */
  private advance(): Ending | Wait {
    const ctx = this.context;
    const promise = this.promise as QuickJSHandle;
    for (;;) {
      const jobs = this.runtime.executePendingJobs(JOB_BATCH);
      // Only errors no code can catch escape a job: an interrupt (deadline, RaiseError) or the engine giving up.
      if (jobs.error) return { kind: 'rejected', ...this.describe(jobs.error) };
      const state = ctx.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        if (!state.notAPromise) state.value.dispose();
        return { kind: 'fulfilled' };
      }
      if (state.type === 'rejected') return { kind: 'rejected', ...this.describe(state.error) };
      if (this.mustStop()) return { kind: 'stalled' };
      const timers = this.api.timers;
      const waits = this.api.pendingCalls > 0 || (timers !== null && timers.size > 0);
      if (this.runtime.hasPendingJob()) {
        if (waits && performance.now() - this.slice > SLICE_MS) return 'turn';
        continue;
      }
      // A due timer is the next task: its callback runs, then the microtasks it queued.
      if (timers && (timers.nextDue() ?? Infinity) <= performance.now()) {
        if (performance.now() - this.slice > SLICE_MS) return 'turn';
        const id = timers.takeDue();
        const error = id === null ? null : this.api.globals.fireTimer(id);
        if (error) {
          const { message, stack } = this.describe(error);
          return { kind: 'rejected', message: message && `Uncaught error in a timer callback: ${message}`, stack };
        }
        continue;
      }
      // Nothing to compute: a run that asked to suspend may end now (RunJournal.idle).
      this.api.idle();
      if (this.mustStop()) return { kind: 'stalled' };
      return waits ? 'host' : { kind: 'stalled' };
    }
  }

  private describe(error: QuickJSHandle): { message: string; stack: string } {
    if (this.stoppedVerdict()) return { message: '', stack: '' };
    return this.api.values.describe(error);
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
    if (text === undefined) return { kind: 'ok', responseJson: null };
    if (Buffer.byteLength(text) > limits.responseBodyBytes) return tooLargeVerdict(limits);
    // One level more than the ResponseBody's own: its wrapper.
    if (nestsDeeperThan(text, RUN_BUDGET.responseDepth + 1)) return tooDeepVerdict(RUN_BUDGET.responseDepth);
    return { kind: 'ok', responseJson: text };
  }
}
