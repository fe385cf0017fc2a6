import fc from 'fast-check';
import { isValidStepName, journalBytesOf, MAX_STEP_NAME_CHARS } from './journal';
import type { JournalLimits, StepRecord } from './journal';
import { isSettledForRecord, journalLimitPassed, resultBytesWithin, stepEntry, TIMED_OUT_RESULT_JSON, waitEntry } from './journal-rules';
import { JournalLimitExceeded } from './ports/journal-store';

const limits: JournalLimits = { maxSteps: 10, maxResultBytes: 100, maxJournalBytes: 1000, maxKeptEvents: 5 };
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error as JournalLimitExceeded;
  }
  throw new Error('not refused');
};

describe('the entry each journal write makes', () => {
  const step = { name: 'send', occurrence: 3, attempts: 2, startedAt: 500 };
  const error = { name: 'TypeError', message: 'boom' };

  it('records a step done, failed or retrying, each with only the fields of its status', () => {
    expect(stepEntry({ ...step, status: 'done', resultJson: '{"ok":1}', finishedAt: 900 })).toEqual({
      name: 'send', occurrence: 3, kind: 'step', attempts: 2, startedAt: 500,
      status: 'done', resultJson: '{"ok":1}', error: null, finishedAt: 900, until: null,
    });
    expect(stepEntry({ ...step, status: 'failed', error, finishedAt: 900 })).toEqual({
      name: 'send', occurrence: 3, kind: 'step', attempts: 2, startedAt: 500,
      status: 'failed', resultJson: null, error, finishedAt: 900, until: null,
    });
    expect(stepEntry({ ...step, status: 'retrying', error, until: 1500 })).toEqual({
      name: 'send', occurrence: 3, kind: 'step', attempts: 2, startedAt: 500,
      status: 'retrying', resultJson: null, error, finishedAt: null, until: 1500,
    });
  });

  it('keeps when a retried step first started', () => {
    const retried: StepRecord = { ...step, status: 'done', resultJson: null, finishedAt: 900 };
    expect(stepEntry(retried, 100).startedAt).toBe(100);
    expect(stepEntry(retried).startedAt).toBe(500);
  });

  it('begins a wait under way until its time, or done at once with a kept event it takes', () => {
    const wait = { kind: 'event' as const, name: 'approved', occurrence: 1, startedAt: 700, until: 5000 };
    expect(waitEntry(wait)).toEqual({
      name: 'approved', occurrence: 1, kind: 'event', error: null, attempts: 0, startedAt: 700,
      status: 'waiting', resultJson: null, finishedAt: null, until: 5000,
    });
    expect(waitEntry(wait, '{"by":"ada"}')).toEqual({
      name: 'approved', occurrence: 1, kind: 'event', error: null, attempts: 0, startedAt: 700,
      status: 'done', resultJson: '{"by":"ada"}', finishedAt: 700, until: null,
    });
    // A taken payload of JSON null is still taken: only no payload at all leaves the wait under way.
    expect(waitEntry(wait, TIMED_OUT_RESULT_JSON)).toMatchObject({ status: 'done', resultJson: 'null', until: null });
  });

  it('leaves a step that ended, and anything not a step, as stored', () => {
    expect(isSettledForRecord({ kind: 'step', status: 'done' })).toBe(true);
    expect(isSettledForRecord({ kind: 'step', status: 'failed' })).toBe(true);
    expect(isSettledForRecord({ kind: 'step', status: 'retrying' })).toBe(false);
    expect(isSettledForRecord({ kind: 'step', status: 'waiting' })).toBe(false);
    expect(isSettledForRecord({ kind: 'sleep', status: 'waiting' })).toBe(true);
    expect(isSettledForRecord({ kind: 'event', status: 'retrying' })).toBe(true);
  });
});

describe('the size of a result', () => {
  it('counts UTF-8 bytes, none for no result, and refuses one over the limit naming what and the setting', () => {
    expect(resultBytesWithin(null, limits, 'result')).toBe(0);
    expect(resultBytesWithin('"é"', limits, 'result')).toBe(4);
    expect(resultBytesWithin('x'.repeat(100), limits, 'result')).toBe(100);
    const result = refusal(() => resultBytesWithin('x'.repeat(101), limits, 'result'));
    expect(result).toBeInstanceOf(JournalLimitExceeded);
    expect(result.name).toBe('JournalLimitExceeded');
    expect(result.message).toBe("The step's result is 101 bytes as JSON, over the limit of 100 bytes (STEP_RESULT_MAX_SIZE).");
    // 51 two-byte characters: 102 bytes, though only 51 characters.
    expect(refusal(() => resultBytesWithin('é'.repeat(51), limits, 'payload')).message).toBe(
      "The event's payload is 102 bytes as JSON, over the limit of 100 bytes (STEP_RESULT_MAX_SIZE).",
    );
  });

  it('counts an entry\'s result and error text against its journal, in bytes', () => {
    expect(journalBytesOf({ resultJson: null, error: null })).toBe(0);
    expect(journalBytesOf({ resultJson: '"é"', error: null })).toBe(4);
    expect(journalBytesOf({ resultJson: null, error: { name: 'Error', message: 'ça' } })).toBe(8);
    expect(journalBytesOf({ resultJson: '1', error: { name: 'E', message: 'm' } })).toBe(3);
  });
});

describe('the limits of a journal', () => {
  const usage = { steps: 10, journalBytes: 1000, keptEvents: 5 };

  it('lets a write grow the journal up to each limit, and names the limit one more would pass', () => {
    expect(journalLimitPassed({ steps: 9, journalBytes: 900, keptEvents: 4 }, { steps: 1, journalBytes: 100, keptEvents: 1 }, limits)).toBeNull();
    expect(journalLimitPassed({ ...usage, steps: 9 }, { steps: 2 }, limits)?.message).toBe(
      "The invocation's journal holds 9 entries, the most one invocation may have (JOURNAL_MAX_STEPS = 10).",
    );
    expect(journalLimitPassed({ ...usage, keptEvents: 4 }, { keptEvents: 2 }, limits)?.message).toBe(
      '4 events are kept for the invocation already, the most it may have before a wait takes them (JOURNAL_MAX_KEPT_EVENTS = 5).',
    );
    expect(journalLimitPassed({ ...usage, journalBytes: 990 }, { journalBytes: 11 }, limits)?.message).toBe(
      "The invocation's journal would hold 1001 bytes of results, errors and kept events, over the limit of 1000 bytes (JOURNAL_MAX_SIZE).",
    );
    expect(journalLimitPassed(usage, { steps: 1 }, limits)).toBeInstanceOf(JournalLimitExceeded);
  });

  it('never refuses a write that does not grow what is over its limit (a journal over it after the limit was lowered)', () => {
    const over = { steps: 50, journalBytes: 5000, keptEvents: 50 };
    expect(journalLimitPassed(over, {}, limits)).toBeNull();
    expect(journalLimitPassed(over, { steps: 0, journalBytes: 0, keptEvents: 0 }, limits)).toBeNull();
    // Taking a kept event into a wait shrinks what is kept and moves its bytes: no limit grows.
    expect(journalLimitPassed(over, { keptEvents: -1, journalBytes: -10 }, limits)).toBeNull();
    expect(journalLimitPassed(over, { keptEvents: -1, steps: 1 }, limits)?.message).toMatch(/JOURNAL_MAX_STEPS/);
    expect(journalLimitPassed(over, { keptEvents: 1 }, limits)?.message).toMatch(/JOURNAL_MAX_KEPT_EVENTS/);
    expect(journalLimitPassed(over, { journalBytes: 1 }, limits)?.message).toMatch(/JOURNAL_MAX_SIZE/);
  });

  it('refuses exactly the writes that would take a count past its limit (property)', () => {
    const count = fc.integer({ min: 0, max: 20 });
    fc.assert(
      fc.property(count, count, count, fc.integer({ min: -3, max: 3 }), fc.integer({ min: -3, max: 3 }), fc.integer({ min: -3, max: 3 }), (steps, kept, bytes, dSteps, dKept, dBytes) => {
        const small = { maxSteps: 10, maxResultBytes: 10, maxJournalBytes: 10, maxKeptEvents: 10 };
        const passed = journalLimitPassed({ steps, journalBytes: bytes, keptEvents: kept }, { steps: dSteps, journalBytes: dBytes, keptEvents: dKept }, small);
        const over = (dSteps > 0 && steps + dSteps > 10) || (dKept > 0 && kept + dKept > 10) || (dBytes > 0 && bytes + dBytes > 10);
        expect(passed !== null).toBe(over);
      }),
    );
  });
});

describe('step names', () => {
  it('are 1 to 200 characters', () => {
    expect(isValidStepName('')).toBe(false);
    expect(isValidStepName('a')).toBe(true);
    expect(isValidStepName('a'.repeat(MAX_STEP_NAME_CHARS))).toBe(true);
    expect(isValidStepName('a'.repeat(MAX_STEP_NAME_CHARS + 1))).toBe(false);
  });

  it('refuse a control character anywhere (C0, DEL and C1), and allow any printable one', () => {
    for (const control of ['\u0000', '\n', '\u001f', '\u007f', '\u0085', '\u009f']) {
      expect([`${control}send`, `se${control}nd`, `send${control}`].map(isValidStepName)).toEqual([false, false, false]);
    }
    for (const printable of [' ', '~', '\u00a0', 'é', '送', '😀']) expect(isValidStepName(`send ${printable}`)).toBe(true);
  });
});
