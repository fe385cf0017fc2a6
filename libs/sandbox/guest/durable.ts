/**
 * The durable calls of `Context`: `Step`, `Sleep`, `SleepUntil`, `WaitForEvent` and the
 * `NonRetryableError` class (the members of Context that load this module on first use). The host
 * (src/durable/run-journal.ts) counts occurrences, answers from the journal, writes it and decides
 * what each call does next; this side runs the connector's step functions, times their attempts out,
 * and waits in the sandbox when told to. A call the host halts (the run suspends, or its code no
 * longer matches the journal) never settles: the run ends at its next check, whatever the code catches.
 */
import type { Global } from './internal/global';
import type { Internals } from './internal/internals';
import { ANSWER, type DurablePlan, type StepOutcome, type StepTimeout } from './internal/durable-plans';
import { uncurry } from './internal/primordials';

/** The host functions of this module (libs/sandbox/src/host/durable.host.ts); each answers a plan as text (see ANSWER). */
interface DurableHost {
  step(name: string | null, options: unknown): string;
  /** The step's outcome as its items, in place (an array would cross as JSON). */
  stepEnded(id: number, ...outcome: Array<StepOutcome[number] | undefined>): Promise<string>;
  sleep(name: string | null, duration: unknown): string | Promise<string>;
  sleepUntil(name: string | null, when: unknown): string | Promise<string>;
  waitForEvent(name: string | null, options: unknown): string | Promise<string>;
  waited(id: number): string | Promise<string>;
}

/** A step's function: it gets the step's idempotency key and the attempt's number. */
type StepFunction = (step: { idempotencyKey: string; attempt: number }) => unknown;

/** The members of Context this module gives (in `internals.context`). */
interface DurableMembers {
  Step(name: string, fn: StepFunction, options?: unknown): Promise<unknown>;
  Sleep(name: string, duration: unknown): Promise<void>;
  SleepUntil(name: string, when: unknown): Promise<void>;
  WaitForEvent(name: string, options?: unknown): Promise<unknown>;
  NonRetryableError: new (message?: string) => Error;
}

/** Characters of a name (or a text argument) read out of the sandbox: more than any valid one has, so the host still refuses a longer one. */
const MAX_TEXT_READ = 1000;
/** Characters kept of a step error's name and message (as of a thrown error's). */
const MAX_ERROR_NAME = 100;
const MAX_ERROR_MESSAGE = 2000;

export default function install(host: DurableHost, _global: Global, internals: Internals): void {
  const { parse, stringify } = JSON;
  const { setTimer, clearTimer, DOMException } = internals.core;
  const slice = uncurry(String.prototype.slice);
  const getTime = uncurry(Date.prototype.getTime);
  const then = uncurry(Promise.prototype.then);
  const PromiseOf = Promise;
  const resolved = Promise.resolve.bind(Promise);
  const rejected = Promise.reject.bind(Promise);
  const { apply } = Reflect;
  const { freeze, defineProperty } = Object;

  class NonRetryableError extends Error {}
  defineProperty(NonRetryableError.prototype, 'name', { value: 'NonRetryableError', writable: true, configurable: true, enumerable: false });
  // No prototype: a stored name such as "constructor" or "__proto__" finds nothing here.
  const constructors: Record<string, new (message: string) => Error> = Object.assign(Object.create(null), {
    NonRetryableError,
    TypeError,
    RangeError,
    SyntaxError,
    ReferenceError,
    URIError,
    EvalError,
  });

  /** At most MAX_TEXT_READ characters of a string; null for anything else (the host's message says what it expects). */
  const text = (value: unknown) => (typeof value === 'string' ? slice(value, 0, MAX_TEXT_READ) : null);
  /** A stored error as the connector meets it again: same name and message. */
  const errorOf = (name: string, message: string): Error => {
    const error = new (constructors[name] ?? Error)(message);
    if (error.name !== name) defineProperty(error, 'name', { value: name, writable: true, configurable: true, enumerable: false });
    return error;
  };
  /** Name and message of what an attempt threw, cut to the budget; reading them may run the connector's getters. */
  const describe = (thrown: unknown): { name: string; message: string } => {
    try {
      if ((typeof thrown === 'object' && thrown !== null) || typeof thrown === 'function') {
        const { name, message } = thrown as { name?: unknown; message?: unknown };
        return { name: slice(typeof name === 'string' && name ? name : 'Error', 0, MAX_ERROR_NAME), message: slice(`${message ?? ''}`, 0, MAX_ERROR_MESSAGE) };
      }
      return { name: 'Error', message: slice(`${thrown as string}`, 0, MAX_ERROR_MESSAGE) };
    } catch {
      return { name: 'Error', message: 'The step threw a value that cannot be read.' };
    }
  };
  const waitMs = (ms: number) => new PromiseOf<void>((resolve) => void setTimer(resolve, ms));
  const never = () => new PromiseOf<never>(() => undefined);

  /** `value` or what it settles with, unless `timeout` passes first (a TimeoutError then). */
  const within = (value: unknown, timeout: StepTimeout) =>
    new PromiseOf((resolve, reject) => {
      const timer = setTimer(() => reject(new DOMException(timeout.message, 'TimeoutError')), timeout.ms);
      then(
        resolved(value),
        (result: unknown) => (clearTimer(timer), resolve(result)),
        (error: unknown) => (clearTimer(timer), reject(error)),
      );
    });

  /** An attempt's result as the host takes it: its JSON, or why it has none that can be journalled. */
  const outcomeOf = (value: unknown, maxResultBytes: number): StepOutcome => {
    if (value === undefined) return ['result', null];
    let json: unknown;
    try {
      json = stringify(value);
    } catch (error) {
      return ['notJson', describe(error).message];
    }
    if (typeof json !== 'string') return ['notJson', `a ${typeof value} has no JSON`];
    return json.length > maxResultBytes ? ['tooLarge', json.length] : ['result', json];
  };

  /** A plan as the host sent it (see ANSWER). */
  const read = (text: string): DurablePlan => (text[0] === ANSWER ? { do: 'answer', json: text.length > 1 ? slice(text, 1) : null } : (parse(text) as DurablePlan));

  /**
   * Follows the host's plans until the call answers, throws or halts: runs a step's attempts (its
   * function called with its key and attempt number, within its timeout), waits in the sandbox.
   * One async function for all of it: each one more costs every step its own promises.
   */
  const follow = async (first: DurablePlan, fn?: StepFunction): Promise<unknown> => {
    let threw: { error: unknown } | null = null;
    let plan = first;
    for (;;) {
      switch (plan.do) {
        case 'answer':
          return plan.json === null ? undefined : parse(plan.json);
        case 'throw':
          throw plan.own && threw ? threw.error : errorOf(plan.name, plan.message);
        case 'wait':
          await waitMs(plan.ms);
          plan = read(await host.waited(plan.id));
          break;
        case 'run': {
          let outcome: StepOutcome;
          threw = null;
          try {
            const called = apply(fn as StepFunction, undefined, [freeze({ idempotencyKey: plan.key, attempt: plan.attempt })]);
            outcome = outcomeOf(await (plan.timeout === null ? called : within(called, plan.timeout)), plan.maxResultBytes);
          } catch (error) {
            threw = { error };
            const { name, message } = describe(error);
            outcome = ['error', name, message, !(error instanceof NonRetryableError)];
          }
          plan = read(await host.stepEnded(plan.id, outcome[0], outcome[1], outcome[2], outcome[3]));
          break;
        }
        default:
          return never();
      }
    }
  };

  const members: DurableMembers = {
    Step(name: string, fn: StepFunction, options?: unknown) {
      if (typeof fn !== 'function') return rejected(new TypeError('Context.Step expects a function to run: Context.Step(name, async ({ idempotencyKey, attempt }) => { ... }, options).'));
      let first: string;
      try {
        first = host.step(text(name), options);
      } catch (error) {
        return rejected(error);
      }
      // Answered from the journal (every step of a replay): no function to run, nothing to await.
      if (first[0] === ANSWER) return resolved(first.length > 1 ? parse(slice(first, 1)) : undefined);
      return follow(read(first), fn);
    },
    async Sleep(name: string, duration: unknown) {
      await follow(read(await host.sleep(text(name), typeof duration === 'string' ? text(duration) : duration)));
    },
    async SleepUntil(name: string, when: unknown) {
      let at = when;
      try {
        at = getTime(when); // a Date (NaN when invalid: the host says so)
      } catch {
        if (typeof when === 'string') at = text(when);
      }
      await follow(read(await host.sleepUntil(text(name), at)));
    },
    async WaitForEvent(name: string, options?: unknown) {
      return follow(read(await host.waitForEvent(text(name), options)));
    },
    NonRetryableError,
  };
  Object.assign(internals.context, members);
}
