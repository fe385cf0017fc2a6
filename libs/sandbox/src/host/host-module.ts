import type { RunInput } from '../run/run-input';
import type { Verdict } from '../run/run-verdict';
import type { SandboxEnvironment } from '../sandbox-options';
import type { TimerQueue } from './timer-queue';

/**
 * What a host function knows of the run that calls it. Host functions serve connector code: they
 * check every argument (a connector can reach them with anything) and never hand a host object back.
 */
export interface HostRun {
  readonly input: RunInput;
  readonly env: SandboxEnvironment;
  /** Aborted when the run ends: host work still going on for it stops. */
  readonly signal: AbortSignal;
  readonly timers: TimerQueue;
  /** When the run started: `performance.now()` and `Date.now()`. */
  readonly startedAt: number;
  readonly timeOrigin: number;
  /** This run's state of a module (keys, decoders...), made on first use and dropped with the run. */
  local<T>(key: string, make: () => T): T;
  /** Ends the run: a limit was passed. The call throws, and the run stops at its next check. */
  exceeded(message: string): never;
  /** Resolves once the run's rate of host calls lets one more start (RUN_BUDGET.hostCallsPerSecond); never once the run ended. */
  nextTurn(): Promise<void>;
  /** Counts work the host did for the run off the engine's thread (crypto on Node's thread pool) as CPU time of the run. */
  spendCpu(ms: number): void;
  /** Ends the run with `verdict` (the first one given wins): code still running stops at its next check, a waiting run wakes up to end. */
  halt(verdict: Verdict): void;
  /** `hook` is called whenever the run has nothing to compute and waits (one hook per run: the durable calls'). */
  onIdle(hook: () => void): void;
}

/** Values host functions take and return: JSON data, `undefined`, and bytes (an ArrayBuffer in the sandbox) as an argument or result of its own. */
export type HostValue = unknown;

/** A host function; a returned promise becomes a promise in the sandbox (it counts as a call in flight). */
export type HostFunction = (run: HostRun, ...args: HostValue[]) => HostValue;

/** An error the connector sees: a TypeError, RangeError or SyntaxError, or a DOMException of the given name. */
export class SandboxError extends Error {
  constructor(
    readonly kind: 'TypeError' | 'RangeError' | 'SyntaxError' | 'DOMException',
    message: string,
    /** The DOMException's name (e.g. 'InvalidCharacterError'). */
    readonly exceptionName: string = kind,
  ) {
    super(message);
  }
}

/** Thrown by `HostRun.exceeded`: the run ends with a limit verdict. */
export class RunLimitExceeded extends Error {}

/** The host side of one module of connector globals (its sandbox side: libs/sandbox/guest/<name>.ts). */
export interface GlobalsModule {
  name: string;
  /** The globals it defines: naming one in a connector's code loads it ahead, into the memory image. */
  globals: readonly string[];
  /** Methods of built-ins it replaces (e.g. `['Date.prototype', 'toLocaleString']`). */
  methods?: ReadonlyArray<readonly [string, string]>;
  /** Modules whose globals it uses; loaded first. */
  requires?: readonly string[];
  /** The host functions its install function receives, by name. */
  functions: Readonly<Record<string, HostFunction>>;
  /**
   * Members of `Context` it gives (its install puts them in `internals.context`): `Context`'s accessors
   * of those names (the core module's) load it on first use.
   */
  contextMembers?: readonly string[];
  /**
   * Host functions whose promises do not count against the run's `pendingCalls`: journal writes, which
   * the durable calls bound themselves (JournalWrites).
   */
  unmetered?: readonly string[];
}
