import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { DurableRun, JournalEntry, JournalLimits, StepRecord, WaitRecord } from '@gi/domain';

/** A journal write as the fake saw it. */
export type FakeWrite = { op: 'record'; step: StepRecord } | { op: 'beginWait'; wait: WaitRecord } | { op: 'timeOut'; step: Pick<JournalEntry, 'name' | 'occurrence'> };

const keyOf = (name: string, occurrence: number) => `${name}\u0000${occurrence}`;

/**
 * A DurableRun that keeps its journal in memory, as a store would: an entry done or failed is never
 * changed, an event wait takes a kept event of its name, a timed-out wait becomes done with `null`.
 * Tests read what was written (`writes`, `entries()`), and can make it refuse a write (`refuse`),
 * answer a write with an entry of their choosing (`answerWith`), or hold writes until released (`hold`).
 */
export class FakeDurableRun implements DurableRun {
  readonly botId: string;
  readonly invocationId: string;
  readonly journal: JournalEntry[];
  readonly limits: JournalLimits;
  suspendAfterMs: number;
  /** Every write asked for, in order (refused ones too). */
  readonly writes: FakeWrite[] = [];
  /** Writes under way now, and the most there were at once. */
  inFlight = 0;
  maxInFlight = 0;
  private readonly stored = new Map<string, JournalEntry>();
  private readonly kept = new Map<string, string[]>();
  private refusal: ((write: FakeWrite) => string | null) | null = null;
  private override: ((write: FakeWrite) => JournalEntry | null) | null = null;
  private held: Array<() => void> | null = null;

  constructor(options: { botId?: string; invocationId?: string; journal?: JournalEntry[]; limits?: Partial<JournalLimits>; suspendAfterMs?: number } = {}) {
    this.botId = options.botId ?? 'bot-1';
    this.invocationId = options.invocationId ?? 'inv-1';
    this.journal = options.journal ?? [];
    this.limits = { ...DEFAULT_JOURNAL_LIMITS, ...options.limits };
    this.suspendAfterMs = options.suspendAfterMs ?? 2000;
    for (const entry of this.journal) this.stored.set(keyOf(entry.name, entry.occurrence), { ...entry });
  }

  /** The journal as stored now, in the order entries were first written: the journal of the next run. */
  entries(): JournalEntry[] {
    return [...this.stored.values()].map((entry) => ({ ...entry }));
  }

  /** Writes for which `refuse` gives a message are rejected with it (and change nothing). */
  refuse(refuse: ((write: FakeWrite) => string | null) | null): this {
    this.refusal = refuse;
    return this;
  }

  /** Writes for which `answer` gives an entry resolve with it (nothing is stored). */
  answerWith(answer: ((write: FakeWrite) => JournalEntry | null) | null): this {
    this.override = answer;
    return this;
  }

  /** Holds every write from now on until the function returned is called. */
  hold(): () => void {
    this.held = [];
    return () => {
      const waiting = this.held ?? [];
      this.held = null;
      for (const go of waiting) go();
    };
  }

  /** An event sent to the invocation: completes its waiting event wait of that name, or is kept for the next. */
  send(name: string, payload: unknown): void {
    const waiting = [...this.stored.values()].find((entry) => entry.kind === 'event' && entry.name === name && entry.status === 'waiting');
    const payloadJson = JSON.stringify(payload);
    if (waiting) Object.assign(waiting, { status: 'done', resultJson: payloadJson, finishedAt: Date.now(), until: null });
    else this.kept.set(name, [...(this.kept.get(name) ?? []), payloadJson]);
  }

  record(step: StepRecord): Promise<JournalEntry> {
    return this.write({ op: 'record', step }, () => {
      const key = keyOf(step.name, step.occurrence);
      const before = this.stored.get(key);
      if (before && (before.status === 'done' || before.status === 'failed')) return before;
      const entry: JournalEntry = {
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
      };
      this.stored.set(key, entry);
      return entry;
    });
  }

  beginWait(wait: WaitRecord): Promise<JournalEntry> {
    return this.write({ op: 'beginWait', wait }, () => {
      const key = keyOf(wait.name, wait.occurrence);
      const before = this.stored.get(key);
      if (before) return before;
      const payloadJson = wait.kind === 'event' ? this.kept.get(wait.name)?.shift() : undefined;
      const base = { name: wait.name, occurrence: wait.occurrence, kind: wait.kind, error: null, attempts: 0, startedAt: wait.startedAt };
      const entry: JournalEntry =
        payloadJson === undefined
          ? { ...base, status: 'waiting', resultJson: null, finishedAt: null, until: wait.until }
          : { ...base, status: 'done', resultJson: payloadJson, finishedAt: wait.startedAt, until: null };
      this.stored.set(key, entry);
      return entry;
    });
  }

  timeOut(step: Pick<JournalEntry, 'name' | 'occurrence'>): Promise<JournalEntry> {
    return this.write({ op: 'timeOut', step }, () => {
      const entry = this.stored.get(keyOf(step.name, step.occurrence));
      if (!entry) throw new Error(`no wait ${step.name} #${step.occurrence}`);
      if (entry.status === 'waiting') Object.assign(entry, { status: 'done', resultJson: 'null', finishedAt: Date.now(), until: null });
      return entry;
    });
  }

  private async write(write: FakeWrite, apply: () => JournalEntry): Promise<JournalEntry> {
    this.writes.push(write);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.held) await new Promise<void>((resolve) => this.held?.push(resolve));
      else await Promise.resolve();
      const refused = this.refusal?.(write);
      if (refused) throw new Error(refused);
      return { ...(this.override?.(write) ?? apply()) };
    } finally {
      this.inFlight--;
    }
  }
}
