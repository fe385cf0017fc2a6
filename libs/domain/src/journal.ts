/**
 * Durable steps: what a run journals so that a re-run (after a crash, a deploy, a lost lease or a
 * suspension) answers its finished steps from the journal instead of doing their work again.
 *
 * A run's durable calls are `Context.Step(name, fn)`, `Context.Sleep(name, ms)` /
 * `Context.SleepUntil(name, date)` and `Context.WaitForEvent(name, { timeout })`. Each one is known by
 * its name and occurrence: the n-th call with that name in the run (counted from 1, per name, in the
 * order the calls are made), so a loop that calls `Step("send", ...)` 500 times makes `send` 1 to 500.
 * The journal holds one entry per name and occurrence.
 */

export const STEP_KINDS = ['step', 'sleep', 'event'] as const;
/** A step runs the connector's function; a sleep waits until a time; an event wait, until an outside system sends an event (or its timeout). */
export type StepKind = (typeof STEP_KINDS)[number];

export const STEP_STATUSES = ['done', 'failed', 'retrying', 'waiting'] as const;
/**
 * - `done`: finished; `resultJson` is its result (a step's return value, an event's payload, `null` for an
 *   event wait that timed out or a sleep).
 * - `failed`: a step that threw on its last attempt, or a non-retryable error; a re-run throws `error` again.
 * - `retrying`: a step whose attempt `attempts` failed; its next attempt is due at `until`.
 * - `waiting`: a sleep or an event wait under way until `until`. A sleep is over once `until` has passed
 *   (nothing is written then); an event wait ends `done` with the payload, or with `null` once timed out.
 */
export type StepStatus = (typeof STEP_STATUSES)[number];

/** The error a failed step threw, as a re-run throws it again. */
export interface StepError {
  name: string;
  message: string;
}

/** Where a step stands in the journal: one per invocation, name and occurrence. */
export interface JournalEntry {
  name: string;
  /** Counted from 1 per name, in the order the run calls it. */
  occurrence: number;
  kind: StepKind;
  status: StepStatus;
  /** The result as JSON text (`done`); null otherwise, and for a step that returned `undefined`. */
  resultJson: string | null;
  /** The error of the last failed attempt (`failed`, `retrying`); null otherwise. */
  error: StepError | null;
  /** Attempts made of a step (0 for sleeps and event waits). */
  attempts: number;
  /** When the step was first started (the first attempt, or the wait begun). */
  startedAt: number;
  /** When it ended (`done`, `failed`); null while it goes on. */
  finishedAt: number | null;
  /** A wait's end (`waiting`: the wake time or the event's timeout) or a retry's due time (`retrying`); null otherwise. */
  until: number | null;
}

/**
 * What the run asks the journal to record for a step it ran: its end, or a failed attempt before a retry.
 * A step that returned `undefined` is recorded `done` with `resultJson` null (a re-run answers `undefined`).
 */
export type StepRecord = Pick<JournalEntry, 'name' | 'occurrence' | 'attempts' | 'startedAt'> &
  (
    | { status: 'done'; resultJson: string | null; finishedAt: number }
    | { status: 'failed'; error: StepError; finishedAt: number }
    | { status: 'retrying'; error: StepError; until: number }
  );

/** A wait the run begins: a sleep until a time, or an event wait until its timeout. */
export interface WaitRecord {
  kind: 'sleep' | 'event';
  name: string;
  occurrence: number;
  startedAt: number;
  until: number;
}

/** Why a suspended invocation waits, and until when at the latest: shown to pollers, the CLI and the console. */
export interface WaitReason {
  kind: 'sleep' | 'event' | 'retry';
  /** The step's name (the event's name, for an event wait). */
  name: string;
  /** When it is woken (by the sweeper) if nothing wakes it sooner. */
  until: number;
}

/** The limits of one invocation's journal (settings; docs/operations.md). */
export interface JournalLimits {
  /** Steps, sleeps and event waits in one invocation's journal. */
  maxSteps: number;
  /** One step's result (or event payload), as JSON text, in bytes. */
  maxResultBytes: number;
  /** All results and errors of one invocation's journal together, kept events included, in bytes. */
  maxJournalBytes: number;
  /** Events kept for an invocation before a wait takes them. */
  maxKeptEvents: number;
}

export const DEFAULT_JOURNAL_LIMITS: JournalLimits = {
  maxSteps: 100_000,
  maxResultBytes: 1024 * 1024,
  maxJournalBytes: 256 * 1024 * 1024,
  maxKeptEvents: 1000,
};

/** How many bytes an entry counts against its journal's total: its result and error text. */
export const journalBytesOf = (entry: Pick<JournalEntry, 'resultJson' | 'error'>): number =>
  (entry.resultJson === null ? 0 : Buffer.byteLength(entry.resultJson)) + (entry.error === null ? 0 : Buffer.byteLength(entry.error.name) + Buffer.byteLength(entry.error.message));

/** Names a step may have: 1 to 200 characters, none of them control characters. */
export const MAX_STEP_NAME_CHARS = 200;
export const isValidStepName = (name: string): boolean => name.length >= 1 && name.length <= MAX_STEP_NAME_CHARS && !/[\u0000-\u001f\u007f-\u009f]/.test(name);

/** An event's name, as the resume URL gives it: the same rule as a step's. */
export const isValidEventName = isValidStepName;
