import { isValidStepName, MAX_STEP_NAME_CHARS } from '@gi/domain';
import type { DurableRun, JournalEntry, StepError, StepKind, StepRecord, WaitReason } from '@gi/domain';
import type { DurablePlan, StepOutcome } from '../../guest/internal/durable-plans';
import { SandboxError } from '../host/host-module';
import { nestsDeeperThan, RUN_BUDGET } from '../run/run-budget';
import { limitVerdict, type Verdict } from '../run/run-verdict';
import { formatBytes } from '../sandbox-options';
import { durationMs, shown, wakeTime } from './durations';
import { eventTimeoutMs, retryDelayMs, stepOptions, type StepOptions } from './durable-options';
import { stepIdempotencyKey } from './idempotency-key';
import { JournalWrites } from './journal-writes';
import { MemoryJournal, type LocalEvent } from './memory-journal';

/** Journal writes of one run under way at once; the others wait their turn. */
export const JOURNAL_WRITES_IN_FLIGHT = 16;
/** Results of steps waiting for their turn to be journalled, at most; past it the run ends. */
export const JOURNAL_WAITING_BYTES = 64 * 1024 * 1024;
/** The longest one timer of the sandbox waits; a longer wait takes several. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a run's durable calls are served. */
export interface RunJournalOptions {
  /** The live journal of a durable run; without it, a journal in memory for the run alone. */
  durable?: DurableRun;
  /** Without `durable`: `skip` ends every sleep, retry delay and event wait at once. */
  sleeps?: 'wait' | 'skip';
  /** Without `durable`: the events WaitForEvent receives, in order per name. */
  events?: readonly LocalEvent[];
  /** Ends the run: it suspends, or its code no longer matches its journal. */
  halt(verdict: Verdict): void;
  now?: () => number;
}

/** A step under way: from its first attempt to its end, or to a retry delay that suspends the run. */
interface OpenStep {
  id: number;
  name: string;
  occurrence: number;
  key: string;
  /** Attempts made so far (those of earlier runs included). */
  attempts: number;
  startedAt: number;
  options: StepOptions;
}

/** A wait going on in the sandbox (a timer there): a short sleep or retry delay, or an event wait of a run without a store. */
interface SandboxWait {
  reason: WaitReason;
  occurrence: number;
  /** The step whose retry delay it is. */
  step?: OpenStep;
}

const HALT: DurablePlan = { do: 'halt' };
const NOTHING: DurablePlan = { do: 'answer', json: null };
const keyOf = (name: string, occurrence: number) => `${name}\u0000${occurrence}`;

const KIND_CALLS: Record<StepKind, string> = {
  step: 'a step (Context.Step)',
  sleep: 'a sleep (Context.Sleep or Context.SleepUntil)',
  event: 'an event wait (Context.WaitForEvent)',
};

/**
 * The durable calls of one run, on the host: each call is known by its name and occurrence (counted
 * per name in call order, from 1); a call the journal holds is answered from it without running
 * anything, and a new one is written to it before it counts as done. Decides what each call does
 * next (a DurablePlan for the sandbox side, guest/durable.ts): answer, throw, run an attempt, wait
 * in the sandbox, or halt.
 *
 * Suspension: a wait longer than `suspendAfterMs` (any event wait of a durable run) asks the run to
 * suspend; it ends once it is idle with no step running, no journal write under way and no wait in the
 * sandbox, so steps going on in parallel finish and are journalled first. Its result names the
 * earliest `until` of the waits it suspends for.
 */
export class RunJournal {
  private readonly source: DurableRun;
  private readonly suspends: boolean;
  private readonly skip: boolean;
  private readonly now: () => number;
  private readonly halt: (verdict: Verdict) => void;
  private readonly counts = new Map<string, number>();
  private readonly entries: Map<string, JournalEntry>;
  private readonly steps = new Map<number, OpenStep>();
  private readonly waits = new Map<number, SandboxWait>();
  private readonly writes = new JournalWrites(JOURNAL_WRITES_IN_FLIGHT, JOURNAL_WAITING_BYTES);
  private nextId = 1;
  /** The earliest wait the run suspends for, once one asked. */
  private wakeAt: WaitReason | null = null;

  constructor(options: RunJournalOptions) {
    this.source = options.durable ?? new MemoryJournal(options.events);
    this.suspends = options.durable !== undefined;
    this.skip = !this.suspends && options.sleeps === 'skip';
    this.now = options.now ?? Date.now;
    this.halt = options.halt;
    this.entries = new Map(this.source.journal.map((entry) => [keyOf(entry.name, entry.occurrence), entry]));
  }

  /** `Context.Step(name, fn, options)`: the journal's answer, or the first attempt to run. */
  step(name: unknown, options: unknown): DurablePlan {
    const checked = nameOf(name, 'Context.Step');
    const parsed = stepOptions(options);
    const occurrence = this.count(checked);
    const entry = this.journalled('step', checked, occurrence, `Context.Step(${shown(checked)})`);
    if (entry === 'halt') return HALT;
    if (entry?.status === 'done' || entry?.status === 'failed') return answerOf(entry);
    const step: OpenStep = {
      id: this.nextId++,
      name: checked,
      occurrence,
      key: stepIdempotencyKey(this.source.botId, this.source.invocationId, checked, occurrence),
      attempts: entry?.attempts ?? 0,
      startedAt: entry?.startedAt ?? this.now(),
      options: parsed,
    };
    this.steps.set(step.id, step);
    return entry?.status === 'retrying' && entry.until !== null ? this.retryAt(step, entry.until) : this.attempt(step);
  }

  /** How an attempt of step `id` went: its end written (done, failed) or a failed attempt (retrying), and what follows. */
  stepEnded(id: number, outcome: StepOutcome): DurablePlan | Promise<DurablePlan> {
    const step = this.steps.get(id);
    if (!step) throw new SandboxError('TypeError', 'No such step is under way.');
    const label = `step ${shown(step.name)} #${step.occurrence}`;
    const { maxResultBytes } = this.source.limits;
    switch (outcome[0]) {
      case 'tooLarge':
        return this.fail(step, 'RangeError', `The result of ${label} is at least ${outcome[1]} bytes as JSON, over the limit of ${formatBytes(maxResultBytes)} (STEP_RESULT_MAX_SIZE).`);
      case 'notJson':
        return this.fail(step, 'TypeError', `The result of ${label} is not JSON data (${outcome[1]}): return objects, arrays, strings, numbers, booleans or null.`);
      case 'result': {
        const json = outcome[1];
        const bytes = json === null ? 0 : Buffer.byteLength(json);
        if (bytes > maxResultBytes) return this.fail(step, 'RangeError', `The result of ${label} is ${bytes} bytes as JSON, over the limit of ${formatBytes(maxResultBytes)} (STEP_RESULT_MAX_SIZE).`);
        if (json !== null && nestsDeeperThan(json, RUN_BUDGET.responseDepth)) {
          return this.fail(step, 'TypeError', `The result of ${label} nests arrays and objects more than ${RUN_BUDGET.responseDepth} levels deep, more than can be journalled.`);
        }
        return this.end(step, { status: 'done', resultJson: json, finishedAt: this.now() }, bytes);
      }
      case 'error': {
        const [, name, message, retryable] = outcome;
        const error = { name, message };
        if (!retryable || step.attempts > step.options.retries.limit) return this.end(step, { status: 'failed', error, finishedAt: this.now() }, 0);
        const until = this.now() + retryDelayMs(step.options.retries, step.attempts);
        return this.write(this.record(step, { status: 'retrying', error, until }), 0, (entry) => (entry.status === 'retrying' ? this.retryAt(step, until) : this.close(step, answerOf(entry))), step);
      }
      default:
        throw new SandboxError('TypeError', 'No such outcome of a step.');
    }
  }

  /** `Context.Sleep(name, duration)`. */
  sleep(name: unknown, duration: unknown): DurablePlan | Promise<DurablePlan> {
    const checked = nameOf(name, 'Context.Sleep');
    const until = this.now() + durationMs(duration, 'The duration of Context.Sleep');
    return this.wait('sleep', checked, until, `Context.Sleep(${shown(checked)})`);
  }

  /** `Context.SleepUntil(name, when)`. */
  sleepUntil(name: unknown, when: unknown): DurablePlan | Promise<DurablePlan> {
    const checked = nameOf(name, 'Context.SleepUntil');
    return this.wait('sleep', checked, wakeTime(when, this.now(), 'Context.SleepUntil'), `Context.SleepUntil(${shown(checked)})`);
  }

  /** `Context.WaitForEvent(name, { timeout })`. */
  waitForEvent(name: unknown, options: unknown): DurablePlan | Promise<DurablePlan> {
    const checked = nameOf(name, 'Context.WaitForEvent');
    const until = this.now() + eventTimeoutMs(options);
    return this.wait('event', checked, until, `Context.WaitForEvent(${shown(checked)})`);
  }

  /** A wait in the sandbox is over: what follows it. */
  waited(id: number): DurablePlan | Promise<DurablePlan> {
    const wait = this.waits.get(id);
    if (!wait) throw new SandboxError('TypeError', 'No such wait is under way.');
    this.waits.delete(id);
    const { reason, occurrence, step } = wait;
    const left = reason.until - this.now();
    if (left > 0 && !this.skip) return this.inSandbox(reason, occurrence, left, step);
    if (step) return this.attempt(step);
    return reason.kind === 'event' ? this.timeOut(reason.name, occurrence) : NOTHING;
  }

  /** Called when the run has nothing to compute: it suspends now if it asked to and nothing else holds it. */
  idle(): void {
    if (this.wakeAt && this.steps.size === 0 && this.writes.pending === 0 && this.waits.size === 0) this.halt({ kind: 'suspended', wait: this.wakeAt });
  }

  private attempt(step: OpenStep): DurablePlan {
    step.attempts++;
    const { timeoutMs } = step.options;
    const timeout = timeoutMs === null ? null : { ms: timeoutMs, message: `Attempt ${step.attempts} of step ${shown(step.name)} #${step.occurrence} did not finish within its timeout of ${timeoutMs} ms.` };
    return { do: 'run', id: step.id, key: step.key, attempt: step.attempts, timeout, maxResultBytes: this.source.limits.maxResultBytes };
  }

  /** A step's next attempt, due at `until`: now, after a wait in the sandbox, or once the run is woken. */
  private retryAt(step: OpenStep, until: number): DurablePlan {
    const left = until - this.now();
    if (left <= 0 || this.skip) return this.attempt(step);
    const reason: WaitReason = { kind: 'retry', name: step.name, until };
    if (left <= this.source.suspendAfterMs) return this.inSandbox(reason, step.occurrence, left, step);
    this.steps.delete(step.id);
    return this.suspendFor(reason);
  }

  /** Writes a step's end; the call answers with the entry as stored (a slower attempt never overwrites an end). */
  private end(step: OpenStep, end: EndRecord, bytes: number): DurablePlan | Promise<DurablePlan> {
    return this.write(this.record(step, end), bytes, (entry) => this.close(step, answerOf(entry, entry.status === 'failed' && entry.attempts === step.attempts)), step);
  }

  /** Ends a step failed at once (its result cannot be journalled), with an error of its own. */
  private fail(step: OpenStep, name: string, message: string): DurablePlan | Promise<DurablePlan> {
    return this.end(step, { status: 'failed', error: { name, message }, finishedAt: this.now() }, 0);
  }

  private close(step: OpenStep, plan: DurablePlan): DurablePlan {
    this.steps.delete(step.id);
    return plan;
  }

  private record(step: OpenStep, end: EndRecord): () => Promise<JournalEntry> {
    const record = { name: step.name, occurrence: step.occurrence, attempts: step.attempts, startedAt: step.startedAt, ...end } as StepRecord;
    return () => this.source.record(record);
  }

  /** A sleep or event wait: as the journal holds it, or begun now (its end fixed at first reach). */
  private wait(kind: 'sleep' | 'event', name: string, until: number, call: string): DurablePlan | Promise<DurablePlan> {
    const occurrence = this.count(name);
    const entry = this.journalled(kind, name, occurrence, call);
    if (entry === 'halt') return HALT;
    if (entry) return this.waitFor(entry);
    return this.write(() => this.source.beginWait({ kind, name, occurrence, startedAt: this.now(), until }), 0, (begun) => this.waitFor(begun));
  }

  private waitFor(entry: JournalEntry): DurablePlan | Promise<DurablePlan> {
    if (entry.status !== 'waiting') return entry.kind === 'event' ? { do: 'answer', json: entry.resultJson ?? 'null' } : NOTHING;
    const reason: WaitReason = { kind: entry.kind === 'event' ? 'event' : 'sleep', name: entry.name, until: entry.until ?? this.now() };
    const left = reason.until - this.now();
    if (reason.kind === 'sleep') {
      if (left <= 0 || this.skip) return NOTHING;
      return left <= this.source.suspendAfterMs ? this.inSandbox(reason, entry.occurrence, left) : this.suspendFor(reason);
    }
    if (left <= 0 || this.skip) return this.timeOut(entry.name, entry.occurrence);
    // An event can only reach a suspended run.
    return this.suspends ? this.suspendFor(reason) : this.inSandbox(reason, entry.occurrence, left);
  }

  private timeOut(name: string, occurrence: number): DurablePlan | Promise<DurablePlan> {
    return this.write(() => this.source.timeOut({ name, occurrence }), 0, (entry) => (entry.status === 'waiting' ? { do: 'answer', json: 'null' } : this.waitFor(entry)));
  }

  private inSandbox(reason: WaitReason, occurrence: number, left: number, step?: OpenStep): DurablePlan {
    const id = this.nextId++;
    this.waits.set(id, { reason, occurrence, step });
    return { do: 'wait', id, ms: Math.min(left, MAX_TIMER_MS) };
  }

  private suspendFor(reason: WaitReason): DurablePlan {
    if (!this.wakeAt || reason.until < this.wakeAt.until) this.wakeAt = reason;
    return HALT;
  }

  /**
   * A journal write in its turn, then what follows from the entry as stored. A write refused (a limit,
   * the lease lost) makes the call throw the store's message, and ends `step` if it is one's.
   */
  private write(write: () => Promise<JournalEntry>, bytes: number, then: (entry: JournalEntry) => DurablePlan | Promise<DurablePlan>, step?: OpenStep): DurablePlan | Promise<DurablePlan> {
    const written = this.writes.add(bytes, write);
    if (!written) {
      this.halt(limitVerdict(`The connector's steps returned results faster than they can be journalled: more than ${formatBytes(JOURNAL_WAITING_BYTES)} waited to be written. Await steps before starting more.`));
      return HALT;
    }
    return written.then(then, (error: unknown) => {
      const refused: DurablePlan = { do: 'throw', name: 'Error', message: error instanceof Error ? error.message : 'The journal could not be written.' };
      return step ? this.close(step, refused) : refused;
    });
  }

  private count(name: string): number {
    const occurrence = (this.counts.get(name) ?? 0) + 1;
    this.counts.set(name, occurrence);
    return occurrence;
  }

  /** The journal's entry for this call, if any; 'halt' when it holds another kind there (the run ends). */
  private journalled(kind: StepKind, name: string, occurrence: number, call: string): JournalEntry | null | 'halt' {
    const entry = this.entries.get(keyOf(name, occurrence));
    if (!entry || entry.kind === kind) return entry ?? null;
    this.halt({
      kind: 'failed',
      reason: 'threw',
      message:
        `The connector's code no longer matches this invocation's journal: ${shown(name)} #${occurrence} is journalled as ${KIND_CALLS[entry.kind]}, ` +
        `but the code now makes ${KIND_CALLS[kind]} there: ${call}. Durable calls must come with the same names in the same order on every run of an invocation.`,
    });
    return 'halt';
  }
}

type EndRecord = { status: 'done'; resultJson: string | null; finishedAt: number } | { status: 'failed'; error: StepError; finishedAt: number } | { status: 'retrying'; error: StepError; until: number };

/** A finished entry as the call's answer: its result, or its error thrown again. */
function answerOf(entry: JournalEntry, own = false): DurablePlan {
  if (entry.status === 'failed') return { do: 'throw', name: entry.error?.name ?? 'Error', message: entry.error?.message ?? '', ...(own && { own }) };
  return { do: 'answer', json: entry.resultJson };
}

function nameOf(value: unknown, call: string): string {
  if (typeof value === 'string' && isValidStepName(value)) return value;
  throw new SandboxError('TypeError', `${call} expects a name: a text of 1 to ${MAX_STEP_NAME_CHARS} characters with no control characters (the same name again counts its occurrences); not ${shown(value)}.`);
}
