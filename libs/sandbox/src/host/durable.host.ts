import { ANSWER, type DurablePlan, type StepOutcome } from '../../guest/internal/durable-plans';
import { RunJournal } from '../durable/run-journal';
import type { GlobalsModule, HostRun } from './host-module';

/** The durable calls' journal of a run, made at its first durable call. */
const journalOf = (run: HostRun): RunJournal =>
  run.local('durable', () => {
    const { durable, sleeps, events } = run.input;
    const journal = new RunJournal({ durable, sleeps, events, halt: (verdict) => run.halt(verdict) });
    run.onIdle(() => journal.idle());
    return journal;
  });

/** A plan as the sandbox side reads it (see ANSWER): text, which no connector hook can intercept on its way. */
const text = (plan: DurablePlan): string => (plan.do === 'answer' ? ANSWER + (plan.json ?? '') : JSON.stringify(plan));
const sent = (plan: DurablePlan | Promise<DurablePlan>): string | Promise<string> => (plan instanceof Promise ? plan.then(text) : text(plan));

/** `Context.Step`, `Sleep`, `SleepUntil`, `WaitForEvent` and `NonRetryableError` (libs/sandbox/guest/durable.ts). */
export const durableModule: GlobalsModule = {
  name: 'durable',
  globals: [],
  contextMembers: ['Step', 'Sleep', 'SleepUntil', 'WaitForEvent', 'NonRetryableError'],
  unmetered: ['stepEnded', 'sleep', 'sleepUntil', 'waitForEvent', 'waited'],
  functions: {
    step: (run, name, options) => sent(journalOf(run).step(name, options)),
    stepEnded: (run, id, ...outcome) => sent(journalOf(run).stepEnded(id as number, outcome as StepOutcome)),
    sleep: (run, name, duration) => sent(journalOf(run).sleep(name, duration)),
    sleepUntil: (run, name, when) => sent(journalOf(run).sleepUntil(name, when)),
    waitForEvent: (run, name, options) => sent(journalOf(run).waitForEvent(name, options)),
    waited: (run, id) => sent(journalOf(run).waited(id as number)),
  },
};
