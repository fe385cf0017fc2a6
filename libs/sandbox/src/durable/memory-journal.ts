import { randomUUID } from 'node:crypto';
import { DEFAULT_JOURNAL_LIMITS, journalBytesOf } from '@gi/domain';
import type { DurableRun, JournalEntry, JournalLimits, StepRecord, WaitRecord } from '@gi/domain';

/** An event a run without a store receives (`ConnectorRunRequest.events`), its payload as JSON text. */
export interface LocalEvent {
  name: string;
  payloadJson: string;
}

const keyOf = (name: string, occurrence: number) => `${name}\u0000${occurrence}`;

/**
 * The journal of a run that has no store (a replay of a draft, `gi connector run`): kept in memory for
 * the run alone, with a store's semantics and limits: a finished entry is never changed, an event wait
 * takes the first event of its name given with the run, a limit passed is refused with a message. It
 * is never suspended (`suspendAfterMs` is infinite: there is nothing to resume it from).
 */
export class MemoryJournal implements DurableRun {
  readonly botId = 'local';
  /** Keys of one local run differ from any other's. */
  readonly invocationId = randomUUID();
  readonly journal: JournalEntry[] = [];
  readonly suspendAfterMs = Infinity;
  private readonly entries = new Map<string, JournalEntry>();
  private readonly events = new Map<string, string[]>();
  private bytes = 0;

  constructor(
    events: readonly LocalEvent[] = [],
    readonly limits: JournalLimits = DEFAULT_JOURNAL_LIMITS,
  ) {
    for (const { name, payloadJson } of events) {
      const kept = this.events.get(name) ?? [];
      kept.push(payloadJson);
      this.events.set(name, kept);
    }
  }

  async record(step: StepRecord): Promise<JournalEntry> {
    const before = this.entries.get(keyOf(step.name, step.occurrence));
    if (before && (before.status === 'done' || before.status === 'failed')) return { ...before };
    return this.write(before, {
      name: step.name,
      occurrence: step.occurrence,
      kind: 'step',
      status: step.status,
      resultJson: step.status === 'done' ? step.resultJson : null,
      error: step.status === 'done' ? null : step.error,
      attempts: step.attempts,
      startedAt: before?.startedAt ?? step.startedAt,
      finishedAt: step.status === 'retrying' ? null : step.finishedAt,
      until: step.status === 'retrying' ? step.until : null,
    });
  }

  async beginWait(wait: WaitRecord): Promise<JournalEntry> {
    const before = this.entries.get(keyOf(wait.name, wait.occurrence));
    if (before) return { ...before };
    const payloadJson = wait.kind === 'event' ? this.events.get(wait.name)?.shift() : undefined;
    const base = { name: wait.name, occurrence: wait.occurrence, kind: wait.kind, error: null, attempts: 0, startedAt: wait.startedAt };
    return this.write(
      undefined,
      payloadJson === undefined
        ? { ...base, status: 'waiting', resultJson: null, finishedAt: null, until: wait.until }
        : { ...base, status: 'done', resultJson: payloadJson, finishedAt: wait.startedAt, until: null },
    );
  }

  async timeOut(step: Pick<JournalEntry, 'name' | 'occurrence'>): Promise<JournalEntry> {
    const before = this.entries.get(keyOf(step.name, step.occurrence));
    if (!before) throw new Error(`The journal has no wait '${step.name}' #${step.occurrence}.`);
    if (before.status !== 'waiting') return { ...before };
    return this.write(before, { ...before, status: 'done', resultJson: 'null', finishedAt: Date.now(), until: null });
  }

  /** Stores `entry` in place of `before`, within the limits (the messages name the service's settings). */
  private write(before: JournalEntry | undefined, entry: JournalEntry): JournalEntry {
    const { maxSteps, maxJournalBytes } = this.limits;
    if (!before && this.entries.size >= maxSteps) {
      throw new Error(`The invocation's journal holds ${this.entries.size} entries, the most one invocation may have (JOURNAL_MAX_STEPS = ${maxSteps}).`);
    }
    const bytes = this.bytes - (before ? journalBytesOf(before) : 0) + journalBytesOf(entry);
    if (bytes > this.bytes && bytes > maxJournalBytes) {
      throw new Error(`The invocation's journal would hold ${bytes} bytes of results, errors and kept events, over the limit of ${maxJournalBytes} bytes (JOURNAL_MAX_SIZE).`);
    }
    this.bytes = bytes;
    this.entries.set(keyOf(entry.name, entry.occurrence), entry);
    return { ...entry };
  }
}
