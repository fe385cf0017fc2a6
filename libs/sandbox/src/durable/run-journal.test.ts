import fc from 'fast-check';
import type { JournalEntry } from '@gi/domain';
import type { DurablePlan } from '../../guest/internal/durable-plans';
import type { Verdict } from '../run/run-verdict';
import { FakeDurableRun } from './fake-durable-run.fixture';
import { JOURNAL_WAITING_BYTES, JOURNAL_WRITES_IN_FLIGHT, RunJournal } from './run-journal';

/** A RunJournal on a fake clock, with the verdicts it halts its run with. */
function journalOn(fake: FakeDurableRun, now = { at: 1_000_000 }) {
  const halted: Verdict[] = [];
  const journal = new RunJournal({ durable: fake, halt: (verdict) => halted.push(verdict), now: () => now.at });
  return { journal, halted, now };
}

const planOf = (plan: DurablePlan | Promise<DurablePlan>) => Promise.resolve(plan);
const runPlan = (plan: DurablePlan) => {
  if (plan.do !== 'run') throw new Error(`expected an attempt to run, got ${JSON.stringify(plan)}`);
  return plan;
};
/** Runs every step of `names` to its end in order, each returning [name, its place]: the answers. */
async function runAll(journal: RunJournal, names: readonly string[]): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const [i, name] of names.entries()) {
    let plan = journal.step(name, undefined);
    if (plan.do === 'run') plan = await planOf(journal.stepEnded(plan.id, ['result', JSON.stringify([name, i])]));
    if (plan.do !== 'answer') throw new Error(`expected an answer, got ${JSON.stringify(plan)}`);
    answers.push(plan.json === null ? undefined : JSON.parse(plan.json));
  }
  return answers;
}

describe('RunJournal', () => {
  it('counts occurrences per name in call order: the n-th call of a name is its occurrence n, whatever the other names do', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('send', 'Send', 'report', 'é', 'a b'), { maxLength: 60 }), async (names) => {
        const fake = new FakeDurableRun();
        await runAll(journalOn(fake).journal, names);
        const seen = new Map<string, number>();
        const expected = names.map((name) => {
          seen.set(name, (seen.get(name) ?? 0) + 1);
          return [name, seen.get(name)];
        });
        expect(fake.entries().map(({ name, occurrence }) => [name, occurrence])).toEqual(expected);
      }),
    );
  });

  it('answers a replay of any sequence of steps from the journal of its first run: same answers, nothing run or written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 40 }), async (names) => {
        const first = new FakeDurableRun();
        const answers = await runAll(journalOn(first).journal, names);
        const replay = new FakeDurableRun({ journal: first.entries() });
        const { journal } = journalOn(replay);
        const replayed = names.map((name) => {
          const plan = journal.step(name, undefined);
          if (plan.do !== 'answer') throw new Error(`the replay would run ${name}: ${JSON.stringify(plan)}`);
          return plan.json === null ? undefined : JSON.parse(plan.json);
        });
        expect(replayed).toEqual(answers);
        expect(replay.writes).toEqual([]);
      }),
    );
  });

  it.each([
    ['constant', [500, 500, 500]],
    ['linear', [500, 1000, 1500]],
    ['exponential', [500, 1000, 2000]],
  ] as const)('journals each failed attempt as retrying, due its %s backoff after the failure', async (backoff, delays) => {
    const fake = new FakeDurableRun({ suspendAfterMs: 10_000 });
    const { journal, now } = journalOn(fake);
    let plan = runPlan(journal.step('flaky', { retries: { limit: 3, delay: 500, backoff } }));
    const dues: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect(plan.attempt).toBe(attempt);
      now.at += 7; // the attempt took 7 ms
      const next = await planOf(journal.stepEnded(plan.id, ['error', 'Error', `try ${attempt}`, true]));
      if (attempt === 4) {
        expect(next).toEqual({ do: 'throw', name: 'Error', message: 'try 4', own: true });
        break;
      }
      const due = now.at + delays[attempt - 1];
      dues.push(due);
      expect(next).toEqual({ do: 'wait', id: expect.any(Number), ms: delays[attempt - 1] });
      if (next.do !== 'wait') throw new Error('no wait');
      now.at = due;
      plan = runPlan(await planOf(journal.waited(next.id)));
    }
    expect(fake.writes.map((write) => (write.op === 'record' && write.step.status === 'retrying' ? write.step.until : write.op === 'record' && write.step.status))).toEqual([...dues, 'failed']);
  });

  it('suspends only when idle with no step under way, no journal write and no wait in the sandbox, until the earliest wait', async () => {
    const fake = new FakeDurableRun({ suspendAfterMs: 1000 });
    const { journal, halted, now } = journalOn(fake);
    const step = runPlan(journal.step('work', undefined));
    const long = journal.sleep('long', '2 hours');
    const short = journal.sleep('short', 500);
    journal.idle();
    expect(halted).toEqual([]); // a step is under way, and two writes
    expect(await planOf(long)).toEqual({ do: 'halt' });
    const shortWait = await planOf(short);
    expect(shortWait).toEqual({ do: 'wait', id: expect.any(Number), ms: 500 });
    expect(await planOf(journal.sleep('sooner', '1 hour'))).toEqual({ do: 'halt' });
    journal.idle();
    expect(halted).toEqual([]); // the step still runs, and a short wait goes on in the sandbox
    expect(await planOf(journal.stepEnded(step.id, ['result', '1']))).toEqual({ do: 'answer', json: '1' });
    journal.idle();
    expect(halted).toEqual([]); // the short wait still goes on
    now.at += 500;
    if (shortWait.do !== 'wait') throw new Error('no wait');
    expect(await planOf(journal.waited(shortWait.id))).toEqual({ do: 'answer', json: null });
    journal.idle();
    expect(halted).toEqual([{ kind: 'suspended', wait: { kind: 'sleep', name: 'sooner', until: 1_000_000 + 3_600_000 } }]);
  });

  it('does not suspend while the function of a step still runs, and does once it is journalled', async () => {
    const nap: JournalEntry = { name: 'nap', occurrence: 1, kind: 'sleep', status: 'waiting', resultJson: null, error: null, attempts: 0, startedAt: 0, finishedAt: null, until: 5_000_000 };
    const { journal, halted } = journalOn(new FakeDurableRun({ journal: [nap] }));
    const step = runPlan(journal.step('work', undefined));
    expect(journal.sleep('nap', '1 hour')).toEqual({ do: 'halt' });
    journal.idle();
    expect(halted).toEqual([]);
    expect(await planOf(journal.stepEnded(step.id, ['result', '"done"']))).toEqual({ do: 'answer', json: '"done"' });
    journal.idle();
    expect(halted).toEqual([{ kind: 'suspended', wait: { kind: 'sleep', name: 'nap', until: 5_000_000 } }]);
  });

  it('does not suspend while a journal write is under way', async () => {
    const nap: JournalEntry = { name: 'nap', occurrence: 1, kind: 'sleep', status: 'waiting', resultJson: null, error: null, attempts: 0, startedAt: 0, finishedAt: null, until: 5_000_000 };
    const fake = new FakeDurableRun({ journal: [nap] });
    const release = fake.hold();
    const { journal, halted, now } = journalOn(fake);
    expect(journal.sleep('nap', '1 hour')).toEqual({ do: 'halt' });
    const begun = planOf(journal.sleep('past', 0));
    journal.idle();
    expect(halted).toEqual([]);
    release();
    now.at += 1;
    expect(await begun).toEqual({ do: 'answer', json: null });
    journal.idle();
    expect(halted).toEqual([{ kind: 'suspended', wait: { kind: 'sleep', name: 'nap', until: 5_000_000 } }]);
  });

  it('never suspends a run without a store: a long sleep waits in the sandbox, an event wait until its timeout', async () => {
    const halted: Verdict[] = [];
    const journal = new RunJournal({ halt: (verdict) => halted.push(verdict), now: () => 0 });
    expect(await planOf(journal.sleep('nap', '300 days'))).toEqual({ do: 'wait', id: expect.any(Number), ms: 2 ** 31 - 1 });
    expect(await planOf(journal.waitForEvent('report', { timeout: '1 hour' }))).toEqual({ do: 'wait', id: expect.any(Number), ms: 3_600_000 });
    journal.idle();
    expect(halted).toEqual([]);
  });

  it('halts with a clear failure when the journal holds another kind of call there', () => {
    const entry: JournalEntry = { name: 'x', occurrence: 1, kind: 'event', status: 'waiting', resultJson: null, error: null, attempts: 0, startedAt: 0, finishedAt: null, until: 5 };
    const { journal, halted } = journalOn(new FakeDurableRun({ journal: [entry] }));
    expect(journal.sleep('x', 10)).toEqual({ do: 'halt' });
    expect(halted).toEqual([{ kind: 'failed', reason: 'threw', message: expect.stringMatching(/^The connector's code no longer matches this invocation's journal: "x" #1 is journalled as an event wait/) }]);
  });

  it(`keeps at most ${JOURNAL_WRITES_IN_FLIGHT} writes under way, and ends the run once more than ${JOURNAL_WAITING_BYTES / 1024 / 1024} MiB of results wait to be written`, async () => {
    const fake = new FakeDurableRun({ limits: { maxResultBytes: 2 * 1024 * 1024 } });
    fake.hold();
    const { journal, halted } = journalOn(fake);
    const result = JSON.stringify('x'.repeat(1024 * 1024));
    const plans: Array<DurablePlan | Promise<DurablePlan>> = [];
    // 63 results of 1 MiB and 2 bytes wait within 64 MiB; one more would not.
    for (let i = 0; i < JOURNAL_WRITES_IN_FLIGHT + 63; i++) plans.push(journal.stepEnded(runPlan(journal.step('big', undefined)).id, ['result', result]));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.inFlight).toBe(JOURNAL_WRITES_IN_FLIGHT);
    expect(halted).toEqual([]);
    expect(journal.stepEnded(runPlan(journal.step('big', undefined)).id, ['result', result])).toEqual({ do: 'halt' });
    expect(halted).toEqual([{ kind: 'failed', reason: 'limit', message: expect.stringContaining('more than 64 MiB waited to be written. Await steps before starting more.') }]);
    expect(plans.filter((plan) => !(plan instanceof Promise))).toEqual([]);
  });
});
