import type { SecretFilter } from '@gi/domain';
import type { QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten';
import { RunLimitExceeded, type HostRun } from '../host/host-module';
import { TimerQueue } from '../host/timer-queue';
import type { LogBuffer } from '../run/log-buffer';
import type { ProgressGate } from '../run/progress-gate';
import { CallRate, RUN_BUDGET } from '../run/run-budget';
import type { RunInput } from '../run/run-input';
import type { Verdict } from '../run/run-verdict';
import type { SandboxEnvironment } from '../sandbox-options';

/** Why a run's host work is cancelled when it ends: one reason for every run (a new DOMException would build a stack each time). */
const RUN_ENDED = new DOMException('The run ended.', 'AbortError');

/** The run the API serves once it is bound. */
export interface ApiRun {
  input: RunInput;
  logs: LogBuffer;
  /** The run's secrets, redacted from every text that leaves it before the text is cut. */
  secrets: SecretFilter;
  /** Called when a host call settles, so a run waiting on host work wakes up. */
  onHostSettled: () => void;
}

/**
 * What the Context API holds for the run it serves, and what host functions know of their calling
 * run (`HostRun`); dropped whole when the sandbox is reset. Its handles point into the sandbox's
 * memory and are never freed: the reset takes that memory back.
 */
export class RunState implements HostRun {
  /** Why the run must end now (RaiseError, or a limit passed); the interrupt handler then stops the code. */
  stopped: Verdict | null = null;
  entity: QuickJSHandle | null = null;
  entityLoaded = false;
  /** The JSON body the entity's RequestBody is read from lazily (lazy-request-body.ts), once it is. */
  lazyBody: string | null = null;
  /** `Context.Secrets`, made at its first read. */
  secrets: QuickJSHandle | null = null;
  /** `Context.InboundAuth`, made at its first read. */
  inboundAuth: QuickJSHandle | null = null;
  response: QuickJSHandle | null = null;
  ended = false;
  readonly pending = new Set<QuickJSDeferredPromise>();
  /** Those of `pending` that do not count against `pendingCalls` (journal writes). */
  readonly unmetered = new Set<QuickJSDeferredPromise>();
  /** Called when the run has nothing to compute (HostRun.onIdle). */
  idle: (() => void) | null = null;
  /** Made for the first host request only: creating and aborting a controller is not free. */
  cancel: AbortController | null = null;
  readonly timers = new TimerQueue();
  readonly startedAt = performance.now();
  readonly timeOrigin = Date.now();
  /** CPU time the host spent for the run off the engine's thread; part of its CPU time. */
  hostCpuMs = 0;
  private locals: Map<string, unknown> | null = null;
  /** Made on the first use, like `cancel`. */
  progress: ProgressGate | null = null;
  /** The message of the update the gate holds back, kept unread until it leaves (see `ContextApi.setProgress`). */
  heldMessage: QuickJSHandle | null = null;
  rate: CallRate | null = null;
  /** Host calls waiting for their turn (see RUN_BUDGET.hostCallsPerSecond); made for the first one. */
  delayed: Set<NodeJS.Timeout> | null = null;

  constructor(
    readonly run: ApiRun,
    readonly env: SandboxEnvironment,
  ) {}

  get input(): RunInput {
    return this.run.input;
  }

  get signal(): AbortSignal {
    return (this.cancel ??= new AbortController()).signal;
  }

  local<T>(key: string, make: () => T): T {
    this.locals ??= new Map();
    if (!this.locals.has(key)) this.locals.set(key, make());
    return this.locals.get(key) as T;
  }

  exceeded(message: string): never {
    throw new RunLimitExceeded(message);
  }

  spendCpu(ms: number): void {
    if (ms > 0) this.hostCpuMs += ms;
  }

  halt(verdict: Verdict): void {
    this.stopped ??= verdict;
    this.run.onHostSettled();
  }

  onIdle(hook: () => void): void {
    this.idle = hook;
  }

  nextTurn(): Promise<void> {
    return new Promise((resolve) => this.inTurn(resolve));
  }

  /** Starts host work now, or once the run's rate of host calls allows it; never once the run ended. */
  inTurn(start: () => unknown): void {
    const wait = (this.rate ??= new CallRate(RUN_BUDGET.hostCallsPerSecond)).take();
    if (wait === 0) return void start();
    const delayed = (this.delayed ??= new Set());
    const timer = setTimeout(() => {
      delayed.delete(timer);
      if (!this.ended) start();
    }, wait);
    delayed.add(timer);
  }

  /**
   * Stops host work: requests in flight are cancelled and their answers ignored, calls waiting for
   * their turn never start, and the last progress update still held back is delivered.
   */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.cancel?.abort(RUN_ENDED);
    for (const timer of this.delayed ?? []) clearTimeout(timer);
    this.progress?.flush();
  }
}
