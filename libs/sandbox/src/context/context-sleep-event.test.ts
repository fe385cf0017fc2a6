import type { ConnectorRunRequest, ConnectorRunResult, JournalEntry } from '@gi/domain';
import { FakeDurableRun } from '../durable/fake-durable-run.fixture';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

function body(result: ConnectorRunResult): unknown {
  if (result.kind !== 'ok') throw new Error(`the run did not succeed: ${JSON.stringify(result)}`);
  return result.responseBody;
}

/** Resolves once `predicate` holds (checked on every turn of the event loop). */
async function eventually(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('the state never came');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const HOUR = 3_600_000;
const waiting = (kind: 'sleep' | 'event', name: string, until: number, occurrence = 1): JournalEntry => ({
  name, occurrence, kind, status: 'waiting', resultJson: null, error: null, attempts: 0, startedAt: until - HOUR, finishedAt: null, until,
});

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Context.Sleep, SleepUntil and WaitForEvent, and suspension (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: `bot/sleeps@${code.length}`, code, entity: null, timeoutMs: 20_000, allowedHosts: [], ...extra });

  describe('a durable run', () => {
    it('waits a short sleep in the sandbox and suspends for a long one, its wake time fixed when first reached', async () => {
      const fake = new FakeDurableRun({ suspendAfterMs: 1000 });
      const started = Date.now();
      const code = `
        Context.Log('before');
        await Context.Sleep('short', 60);
        await Context.Step('between', () => 1);
        await Context.Sleep('long', '2 hours');
        Context.SetResponseEntity({ ResponseBody: 'woke' });`;
      const result = await run(code, { durable: fake });
      expect(Date.now() - started).toBeGreaterThanOrEqual(58);
      expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'long' } });
      const { until } = (result as Extract<ConnectorRunResult, { kind: 'suspended' }>).wait;
      expect(until).toBeGreaterThanOrEqual(started + 2 * HOUR);
      expect(result.logs.map((line) => line.message)).toEqual(['before', `Suspended until ${new Date(until).toISOString()}: sleeps in "long".`]);
      expect(fake.entries().map(({ name, kind, status, until: at }) => [name, kind, status, at])).toEqual([
        ['short', 'sleep', 'waiting', expect.any(Number)],
        ['between', 'step', 'done', null],
        ['long', 'sleep', 'waiting', until],
      ]);

      // Resumed before its time, it suspends again until the same time; once the time passed, it goes on.
      const early = new FakeDurableRun({ journal: fake.entries(), suspendAfterMs: 1000 });
      expect(await run(code, { durable: early })).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'long', until } });
      const due = new FakeDurableRun({ journal: fake.entries().map((entry) => (entry.name === 'long' ? { ...entry, until: Date.now() - 1 } : entry)), suspendAfterMs: 1000 });
      const woken = await run(code, { durable: due });
      expect(body(woken)).toBe('woke');
      expect(due.writes).toEqual([]);
    });

    it('sleeps until a Date, a timestamp or an ISO text, and refuses anything else clearly', async () => {
      const fake = new FakeDurableRun({ suspendAfterMs: 100 });
      const at = Date.now() + 100 * 24 * HOUR;
      const past = await run(`
        await Context.SleepUntil('date', new Date(0));
        await Context.SleepUntil('stamp', 1000);
        await Context.SleepUntil('text', '2001-02-03T04:05:06Z');
        const errors = [];
        for (const bad of [new Date(NaN), 'tomorrow', '2030-01-01T10:00', {}, '${new Date(Date.now() + 400 * 24 * HOUR).toISOString()}']) {
          try { await Context.SleepUntil('bad', bad); } catch (e) { errors.push(e.name + ': ' + e.message); }
        }
        Context.SetResponseEntity({ ResponseBody: errors });`, { durable: fake });
      expect(body(past)).toEqual([
        'TypeError: Context.SleepUntil expects a valid Date, a timestamp in milliseconds or an ISO 8601 text with its time zone ("2026-12-01T09:00:00Z"); not NaN.',
        expect.stringContaining('not "tomorrow"'),
        expect.stringContaining('not "2030-01-01T10:00"'),
        expect.stringContaining('not {}'),
        expect.stringMatching(/^TypeError: Context\.SleepUntil is more than 365 days ahead/),
      ]);
      expect(fake.entries().map(({ name, until }) => [name, until])).toEqual([
        ['date', 0],
        ['stamp', 1000],
        ['text', Date.UTC(2001, 1, 3, 4, 5, 6)],
      ]);
      const future = await run(`await Context.SleepUntil('new year', new Date(${at}));`, { durable: new FakeDurableRun() });
      expect(future).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'new year', until: at } });
    });

    it('refuses durations it cannot read with a TypeError', async () => {
      const code = `
        const errors = [];
        for (const bad of [-1, NaN, '5', 'soon', '1 fortnight', '400 days', null, [1]]) {
          try { await Context.Sleep('nap', bad); } catch (e) { errors.push(e.message); }
        }
        await Context.Sleep('nap', '0 ms');
        Context.SetResponseEntity({ ResponseBody: errors });`;
      const errors = body(await run(code, { durable: new FakeDurableRun() })) as string[];
      expect(errors).toHaveLength(8);
      for (const message of errors) expect(message).toMatch(/^The duration of Context\.Sleep must be a duration: milliseconds \(a number from 0\) or a text like "30 seconds"/);
    });

    it('suspends only once the steps running in parallel are journalled, whatever the code catches', async () => {
      const fake = new FakeDurableRun({ journal: [waiting('sleep', 'nap', Date.now() + HOUR)] });
      const release = fake.hold();
      let journalAtEnd: JournalEntry[] = [];
      const ended = run(
        `for (;;) {
           try {
             await Promise.all([
               Context.Sleep('nap', '1 hour'),
               Context.Step('slow', () => new Promise((resolve) => setTimeout(() => resolve('done'), 30))),
               (async () => { await Context.Sleep('short', 20); return Context.Step('after', () => 'also'); })(),
             ]);
           } catch {}
           Context.SetResponseEntity({ ResponseBody: 'must not end' });
         }`,
        { durable: fake },
      ).then((result) => ((journalAtEnd = fake.entries()), result));
      await eventually(() => fake.writes.some((write) => write.op === 'record' && write.step.name === 'slow'));
      release();
      const result = await ended;
      expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'nap' } });
      expect(journalAtEnd.map(({ name, status }) => [name, status])).toEqual([
        ['nap', 'waiting'],
        ['short', 'waiting'],
        ['slow', 'done'],
        ['after', 'done'],
      ]);
    });

    it('suspends only once a step whose function still runs is journalled', async () => {
      const fake = new FakeDurableRun({ journal: [waiting('sleep', 'nap', Date.now() + HOUR)] });
      const result = await run(
        `await Promise.all([Context.Sleep('nap', '1 hour'), Context.Step('slow', () => new Promise((resolve) => setTimeout(() => resolve('done'), 50)))]);`,
        { durable: fake },
      );
      expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'nap' } });
      expect(fake.entries().map(({ name, status, resultJson }) => [name, status, resultJson])).toEqual([
        ['nap', 'waiting', null],
        ['slow', 'done', '"done"'],
      ]);
    });

    it('suspends only once the journal writes it started are done', async () => {
      const fake = new FakeDurableRun({ journal: [waiting('sleep', 'nap', Date.now() + HOUR)] });
      const release = fake.hold();
      let journalAtEnd: JournalEntry[] = [];
      const ended = run(`await Promise.all([Context.Sleep('nap', '1 hour'), Context.Sleep('short', 0)]);`, { durable: fake }).then((result) => ((journalAtEnd = fake.entries()), result));
      await eventually(() => fake.writes.length === 1);
      release();
      expect(await ended).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'nap' } });
      expect(journalAtEnd.map(({ name }) => name)).toEqual(['nap', 'short']);
    });

    it("suspends whatever the connector races the wait with: its own timers and requests do not hold the run", async () => {
      const result = await run(
        `let escaped = 'no';
         try {
           await Promise.race([Context.Sleep('nap', '1 day'), new Promise((resolve) => setTimeout(resolve, 300))]);
           escaped = 'by the timer';
         } catch { escaped = 'by a catch'; }
         Context.SetResponseEntity({ ResponseBody: escaped });`,
        // Journalled already: the sleep asks to suspend as it is called, whatever a busy machine makes of the timer.
        { durable: new FakeDurableRun({ journal: [waiting('sleep', 'nap', Date.now() + HOUR)] }) },
      );
      expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'nap' } });
    });

    it('suspends until the earliest of the waits it is held by', async () => {
      const now = Date.now();
      const result = await run(
        `await Promise.all([Context.Sleep('two', '2 hours'), Context.WaitForEvent('three', { timeout: '3 hours' }), Context.SleepUntil('one', ${now + HOUR}), Context.Step('retry', () => { throw new Error('x'); }, { retries: { limit: 1, delay: '90 minutes' } })]);`,
        { durable: new FakeDurableRun({ suspendAfterMs: 10 }) },
      );
      expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'sleep', name: 'one', until: now + HOUR } });
    });

    it('answers an event kept before the wait, suspends for one not come, times out to null, and replays the answer', async () => {
      const fake = new FakeDurableRun();
      fake.send('approval', { approved: true, by: 'ops' });
      const code = `
        const approval = await Context.WaitForEvent('approval', { timeout: '1 hour' });
        const report = await Context.WaitForEvent('report');
        Context.SetResponseEntity({ ResponseBody: { approval, report } });`;
      const before = Date.now();
      const first = await run(code, { durable: fake });
      expect(first).toMatchObject({ kind: 'suspended', wait: { kind: 'event', name: 'report' } });
      // The default timeout: 24 hours.
      expect((first as Extract<ConnectorRunResult, { kind: 'suspended' }>).wait.until).toBeGreaterThanOrEqual(before + 24 * HOUR);
      expect(fake.entries().map(({ name, status, resultJson }) => [name, status, resultJson])).toEqual([
        ['approval', 'done', '{"approved":true,"by":"ops"}'],
        ['report', 'waiting', null],
      ]);

      fake.send('report', { delivered: 41 });
      const resumed = new FakeDurableRun({ journal: fake.entries() });
      expect(body(await run(code, { durable: resumed }))).toEqual({ approval: { approved: true, by: 'ops' }, report: { delivered: 41 } });
      expect(resumed.writes).toEqual([]);

      const timedOut = new FakeDurableRun({ journal: [fake.entries()[0], waiting('event', 'report', Date.now() - 1)] });
      expect(body(await run(code, { durable: timedOut }))).toEqual({ approval: { approved: true, by: 'ops' }, report: null });
      expect(timedOut.writes).toEqual([{ op: 'timeOut', step: { name: 'report', occurrence: 1 } }]);
    });

    it('gives the event that won the race with a timeout', async () => {
      const fake = new FakeDurableRun({ journal: [waiting('event', 'report', Date.now() - 1)] });
      fake.answerWith((write) => (write.op === 'timeOut' ? { ...waiting('event', 'report', 0), status: 'done', resultJson: '"late but first"', until: null } : null));
      expect(body(await run(`Context.SetResponseEntity({ ResponseBody: await Context.WaitForEvent('report') });`, { durable: fake }))).toBe('late but first');
    });

    it('suspends with an event wait however short its timeout: an event can only reach a suspended run', async () => {
      const result = await run(`await Context.WaitForEvent('ping', { timeout: '3 seconds' });`, { durable: new FakeDurableRun({ suspendAfterMs: 60_000 }) });
      expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'event', name: 'ping' } });
    });

    it('fails the run when the journal holds a step where the code now sleeps', async () => {
      const journal: JournalEntry[] = [{ name: 'x', occurrence: 1, kind: 'step', status: 'done', resultJson: '1', error: null, attempts: 1, startedAt: 0, finishedAt: 1, until: null }];
      const result = await run(`try { await Context.WaitForEvent('x'); } catch {} Context.SetResponseEntity({ ResponseBody: 1 });`, { durable: new FakeDurableRun({ journal }) });
      expect(result).toMatchObject({ kind: 'failed', message: expect.stringContaining('"x" #1 is journalled as a step (Context.Step), but the code now makes an event wait (Context.WaitForEvent) there') });
    });

    it('rejects a sleep whose journal write is refused, with the store\'s message', async () => {
      const fake = new FakeDurableRun().refuse(() => 'The run lost its lease; it stops.');
      expect(body(await run(`try { await Context.Sleep('nap', 1); } catch (e) { Context.SetResponseEntity({ ResponseBody: e.message }); }`, { durable: fake }))).toBe(
        'The run lost its lease; it stops.',
      );
    });
  });

  describe('a run without a journal (a replay, gi connector run)', () => {
    it("keeps a journal in memory for the run alone: a step runs once per occurrence, and nothing suspends", async () => {
      const started = Date.now();
      const result = await run(`
        let calls = 0;
        const a = await Context.Step('a', () => ++calls);
        const b = await Context.Step('a', () => ++calls);
        await Context.Sleep('nap', 80);
        Context.SetResponseEntity({ ResponseBody: { a, b, calls } });`);
      expect(body(result)).toEqual({ a: 1, b: 2, calls: 2 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(78);
    });

    it('waits a sleep longer than the run may last until its time limit: no suspension exists without a store', async () => {
      const result = await run(`await Context.Sleep('nap', '5 seconds');`, { timeoutMs: 300 });
      expect(result).toMatchObject({ kind: 'failed', reason: 'timeout' });
    });

    it('with sleeps: skip, ends sleeps, retry delays and event waits at once, event waits answering the events given in order', async () => {
      const started = Date.now();
      const result = await run(
        `
        await Context.Sleep('nap', '3 days');
        await Context.SleepUntil('later', new Date(Date.now() + 100 * 24 * 3600 * 1000));
        const tries = await Context.Step('flaky', ({ attempt }) => { if (attempt < 3) throw new Error('no'); return attempt; }, { retries: { limit: 5, delay: '1 day' } });
        const events = [];
        for (let i = 0; i < 3; i++) events.push(await Context.WaitForEvent('report', { timeout: '7 days' }));
        events.push(await Context.WaitForEvent('other'));
        Context.SetResponseEntity({ ResponseBody: { tries, events } });`,
        { sleeps: 'skip', events: [{ name: 'report', payload: { n: 1 } }, { name: 'elsewhere', payload: 0 }, { name: 'report', payload: 'two' }] },
      );
      expect(body(result)).toEqual({ tries: 3, events: [{ n: 1 }, 'two', null, null] });
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    it('with sleeps: wait, answers an event given at once and waits for the timeout of one not given', async () => {
      const started = Date.now();
      const result = await run(
        `const got = await Context.WaitForEvent('report', { timeout: '1 day' });
         const none = await Context.WaitForEvent('none', { timeout: 120 });
         Context.SetResponseEntity({ ResponseBody: { got, none } });`,
        { sleeps: 'wait', events: [{ name: 'report', payload: [1, 2] }] },
      );
      expect(body(result)).toEqual({ got: [1, 2], none: null });
      expect(Date.now() - started).toBeGreaterThanOrEqual(118);
    });
  });
});
