import type { JournalEntry, JournalLimits, StepRecord, WaitRecord } from './journal';
import { JournalLimitExceeded } from './ports/journal-store';

/**
 * How every store writes a journal (JournalStore): the entry each write makes, which stored entries a
 * write leaves as they are, and the limits, checked in the write that grows the journal. The limits'
 * messages name the setting (docs/operations.md) and reach the connector (a step that fails) or the
 * sender of an event.
 */

/** The entry a step's record makes; a retried step keeps when its first attempt started. */
export function stepEntry(step: StepRecord, firstStartedAt = step.startedAt): JournalEntry {
  const entry = { name: step.name, occurrence: step.occurrence, kind: 'step' as const, attempts: step.attempts, startedAt: firstStartedAt };
  switch (step.status) {
    case 'done':
      return { ...entry, status: 'done', resultJson: step.resultJson, error: null, finishedAt: step.finishedAt, until: null };
    case 'failed':
      return { ...entry, status: 'failed', resultJson: null, error: step.error, finishedAt: step.finishedAt, until: null };
    case 'retrying':
      return { ...entry, status: 'retrying', resultJson: null, error: step.error, finishedAt: null, until: step.until };
  }
}

/** The entry a wait begins with: under way until its time, or (an event wait that takes a kept event) done with its payload. */
export function waitEntry(wait: WaitRecord, takenPayloadJson: string | null = null): JournalEntry {
  const entry = { name: wait.name, occurrence: wait.occurrence, kind: wait.kind, error: null, attempts: 0, startedAt: wait.startedAt };
  return takenPayloadJson === null
    ? { ...entry, status: 'waiting', resultJson: null, finishedAt: null, until: wait.until }
    : { ...entry, status: 'done', resultJson: takenPayloadJson, finishedAt: wait.startedAt, until: null };
}

/** The result of an event wait that timed out. */
export const TIMED_OUT_RESULT_JSON = 'null';

/**
 * A stored entry that a step's record leaves as it is (and returns): one that ended (`done`, `failed`),
 * so a slower attempt never overwrites a result, or one that is not a step (the run then finds the
 * mismatch and fails with it).
 */
export const isSettledForRecord = (entry: Pick<JournalEntry, 'kind' | 'status'>): boolean => entry.kind !== 'step' || entry.status === 'done' || entry.status === 'failed';

/** What one invocation's journal holds. */
export interface JournalUsage {
  /** Entries: steps, sleeps and event waits. */
  steps: number;
  /** Results and errors of its entries and payloads of its kept events, in bytes (journalBytesOf). */
  journalBytes: number;
  /** Events kept before a wait takes them. */
  keptEvents: number;
}

/** The size of one step's result (null: it returned nothing) or one event's payload, refused when over `maxResultBytes`. */
export function resultBytesWithin(json: string | null, limits: JournalLimits, what: 'result' | 'payload'): number {
  const bytes = json === null ? 0 : Buffer.byteLength(json);
  if (bytes > limits.maxResultBytes) {
    const subject = what === 'result' ? "The step's result" : "The event's payload";
    throw new JournalLimitExceeded(`${subject} is ${bytes} bytes as JSON, over the limit of ${limits.maxResultBytes} bytes (STEP_RESULT_MAX_SIZE).`);
  }
  return bytes;
}

/** The refusal of a write that would take `usage` past a limit by `growth`; null when it stays within them. */
export function journalLimitPassed(usage: JournalUsage, growth: Partial<JournalUsage>, limits: JournalLimits): JournalLimitExceeded | null {
  const steps = usage.steps + (growth.steps ?? 0);
  const bytes = usage.journalBytes + (growth.journalBytes ?? 0);
  const kept = usage.keptEvents + (growth.keptEvents ?? 0);
  if ((growth.steps ?? 0) > 0 && steps > limits.maxSteps) {
    return new JournalLimitExceeded(`The invocation's journal holds ${usage.steps} entries, the most one invocation may have (JOURNAL_MAX_STEPS = ${limits.maxSteps}).`);
  }
  if ((growth.keptEvents ?? 0) > 0 && kept > limits.maxKeptEvents) {
    return new JournalLimitExceeded(
      `${usage.keptEvents} events are kept for the invocation already, the most it may have before a wait takes them (JOURNAL_MAX_KEPT_EVENTS = ${limits.maxKeptEvents}).`,
    );
  }
  if ((growth.journalBytes ?? 0) > 0 && bytes > limits.maxJournalBytes) {
    return new JournalLimitExceeded(
      `The invocation's journal would hold ${bytes} bytes of results, errors and kept events, over the limit of ${limits.maxJournalBytes} bytes (JOURNAL_MAX_SIZE).`,
    );
  }
  return null;
}
