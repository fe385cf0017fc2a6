import fc from 'fast-check';
import type { ConnectorRunRequest, ConnectorRunResult, JournalEntry } from '@gi/domain';
import { FakeDurableRun } from '../durable/fake-durable-run.fixture';
import { modulesNamedIn } from '../host/globals-library';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

/** The ResponseBody of a run that must succeed. */
function body(result: ConnectorRunResult): unknown {
  if (result.kind !== 'ok') throw new Error(`the run did not succeed: ${JSON.stringify(result)}`);
  return result.responseBody;
}

const steps = (fake: FakeDurableRun) => fake.entries().map(({ name, occurrence, status, resultJson, attempts }) => ({ name, occurrence, status, resultJson, attempts }));
const recordsOf = (fake: FakeDurableRun) => fake.writes.filter((write) => write.op === 'record');

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Context.Step (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: `bot/steps@${code.length}`, code, entity: null, timeoutMs: 20_000, allowedHosts: [], ...extra });
  const answer = (code: string) => `let calls = 0;\nconst counted = (fn) => (step) => (calls++, fn(step));\n${code}`;

  it('counts occurrences per name in call order, journals each before it resolves, and answers its JSON', async () => {
    const fake = new FakeDurableRun();
    const code = answer(`
      const sent = [];
      for (let i = 1; i <= 3; i++) sent.push(await Context.Step('send', counted(() => ({ to: 'r' + i, at: new Date(0) }))));
      const other = await Context.Step('other', counted(() => 'x'));
      const last = await Context.Step('send', counted(() => undefined));
      Context.SetResponseEntity({ ResponseBody: { sent, other, last: typeof last, calls } });`);
    expect(body(await run(code, { durable: fake }))).toEqual({
      sent: [1, 2, 3].map((i) => ({ to: `r${i}`, at: '1970-01-01T00:00:00.000Z' })),
      other: 'x',
      last: 'undefined',
      calls: 5,
    });
    expect(steps(fake)).toEqual([
      ...[1, 2, 3].map((i) => ({ name: 'send', occurrence: i, status: 'done', resultJson: `{"to":"r${i}","at":"1970-01-01T00:00:00.000Z"}`, attempts: 1 })),
      { name: 'other', occurrence: 1, status: 'done', resultJson: '"x"', attempts: 1 },
      { name: 'send', occurrence: 4, status: 'done', resultJson: null, attempts: 1 },
    ]);

    // A re-run from that journal answers every step from it: no function is called, nothing is written.
    const replay = new FakeDurableRun({ journal: fake.entries() });
    expect(body(await run(code, { durable: replay }))).toMatchObject({ calls: 0, last: 'undefined', other: 'x' });
    expect(replay.writes).toEqual([]);
  });

  it('replays any sequence of steps, in series and in parallel, from the journal of its first run: the same results, and no function called', async () => {
    // Each step: its name, what its function does, and the group it starts with (a group's steps start together).
    const step = fc.tuple(fc.constantFrom('a', 'b', 'send'), fc.constantFrom('value', 'undefined', 'throws'), fc.integer({ min: 0, max: 3 }));
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (plan) => {
        const code = answer(`
          const plan = ${JSON.stringify(plan)};
          const results = [];
          const one = async ([name, does], i) => {
            try {
              return await Context.Step(name, counted(() => {
                if (does === 'throws') throw new Context.NonRetryableError('no ' + i);
                return does === 'value' ? { i, name } : undefined;
              }));
            } catch (e) { return e.name + ': ' + e.message; }
          };
          for (let group = 0; group < 4; group++) {
            const started = plan.map((s, i) => [s, i]).filter(([s]) => s[2] === group);
            results.push(...(await Promise.all(started.map(([s, i]) => one(s, i)))).map((r) => r === undefined ? 'undefined' : r));
          }
          Context.SetResponseEntity({ ResponseBody: { results, calls } });`);
        const first = new FakeDurableRun();
        const ran = body(await run(code, { durable: first })) as { results: unknown[]; calls: number };
        expect(ran.calls).toBe(plan.length);
        const replay = new FakeDurableRun({ journal: first.entries() });
        expect(body(await run(code, { durable: replay }))).toEqual({ results: ran.results, calls: 0 });
        expect(replay.writes).toEqual([]);
      }),
      { numRuns: 15 },
    );
  }, 120_000);

  it('journals steps started together (Promise.all) once each, with at most 16 writes under way, whatever pendingCalls allows', async () => {
    const fake = new FakeDurableRun();
    const code = answer(`
      const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => Context.Step('item', counted(async () => i * 2))));
      Context.SetResponseEntity({ ResponseBody: { sum: results.reduce((a, b) => a + b, 0), calls } });`);
    const result = await run(code, { durable: fake, limits: { pendingCalls: 2 } });
    expect(body(result)).toEqual({ sum: 1999 * 2000, calls: 2000 });
    const records = recordsOf(fake);
    expect(records).toHaveLength(2000);
    expect(new Set(records.map((write) => write.op === 'record' && write.step.occurrence)).size).toBe(2000);
    expect(fake.maxInFlight).toBeLessThanOrEqual(16);
  }, 60_000);

  it('gives each attempt the same idempotency key: stable across runs and executors, distinct per name, occurrence and invocation', async () => {
    const code = `
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push(await Context.Step('send', ({ idempotencyKey }) => idempotencyKey));
      keys.push(await Context.Step('other', ({ idempotencyKey }) => idempotencyKey));
      const attempts = [];
      await Context.Step('flaky', ({ idempotencyKey, attempt }) => {
        attempts.push([idempotencyKey, attempt]);
        if (attempt < 3) throw new Error('again');
      }, { retries: { limit: 2, delay: 0 } });
      Context.SetResponseEntity({ ResponseBody: { keys, attempts } });`;
    const first = body(await run(code, { durable: new FakeDurableRun() })) as { keys: string[]; attempts: Array<[string, number]> };
    const again = body(await run(code, { durable: new FakeDurableRun() })) as typeof first;
    const elsewhere = body(await run(code, { durable: new FakeDurableRun({ invocationId: 'inv-2' }) })) as typeof first;
    expect(again).toEqual(first);
    expect(new Set(first.keys).size).toBe(4);
    for (const key of first.keys) expect(key).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(first.attempts.map(([, attempt]) => attempt)).toEqual([1, 2, 3]);
    expect(new Set(first.attempts.map(([key]) => key)).size).toBe(1);
    expect(elsewhere.keys.filter((key) => first.keys.includes(key))).toEqual([]);
  });

  it('stores a failed step and throws the same error again on a re-run, without calling the function', async () => {
    const fake = new FakeDurableRun();
    const code = answer(`
      class QuotaError extends Error { constructor(m) { super(m); this.name = 'QuotaError'; } }
      const seen = [];
      const odd = (name) => () => { const e = new Error('odd'); e.name = name; throw e; };
      for (const [name, fn] of [['custom', () => { throw new QuotaError('over quota'); }], ['type', () => null.x], ['final', () => { throw new Context.NonRetryableError('no such recipient'); }], ['proto', odd('__proto__')], ['ctor', odd('constructor')]]) {
        try { await Context.Step(name, counted(fn), { retries: { limit: 0 } }); } catch (e) { seen.push([e.name, e.message, e instanceof Error, e instanceof Context.NonRetryableError]); }
      }
      Context.SetResponseEntity({ ResponseBody: { seen, calls } });`);
    const first = body(await run(code, { durable: fake })) as { seen: unknown[]; calls: number };
    expect(first.calls).toBe(5);
    expect(first.seen).toEqual([
      ['QuotaError', 'over quota', true, false],
      ['TypeError', expect.stringContaining('null'), true, false],
      ['NonRetryableError', 'no such recipient', true, true],
      ['__proto__', 'odd', true, false],
      ['constructor', 'odd', true, false],
    ]);
    expect(fake.entries().map(({ status, error }) => [status, error?.name])).toEqual([
      ['failed', 'QuotaError'],
      ['failed', 'TypeError'],
      ['failed', 'NonRetryableError'],
      ['failed', '__proto__'],
      ['failed', 'constructor'],
    ]);
    const replay = new FakeDurableRun({ journal: fake.entries() });
    expect(body(await run(code, { durable: replay }))).toEqual({ seen: first.seen, calls: 0 });
    expect(replay.writes).toEqual([]);
  });

  it('retries with each backoff, journalling every failed attempt as retrying with its next time, and never retries a NonRetryableError', async () => {
    const timesOf = async (backoff: string) => {
      const fake = new FakeDurableRun();
      const code = `
        const at = [];
        const value = await Context.Step('flaky', ({ attempt }) => { at.push(Date.now()); if (attempt < 4) throw new Error('try ' + attempt); return attempt; },
          { retries: { limit: 5, delay: 30, backoff: '${backoff}' } });
        Context.SetResponseEntity({ ResponseBody: { value, at } });`;
      const { value, at } = body(await run(code, { durable: fake })) as { value: number; at: number[] };
      const retrying = recordsOf(fake).map((write) => (write.op === 'record' ? write.step : null));
      return { value, gaps: at.slice(1).map((t, i) => t - at[i]), retrying, entries: fake.entries() };
    };
    for (const [backoff, delays] of [['constant', [30, 30, 30]], ['linear', [30, 60, 90]], ['exponential', [30, 60, 120]]] as const) {
      const { value, gaps, retrying, entries } = await timesOf(backoff);
      expect(value).toBe(4);
      // A wait in the sandbox is never shorter than its delay (a busy machine makes it longer).
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(delays[i] - 2));
      expect(retrying.map((step) => [step?.status, step?.attempts, step && 'error' in step && step.error.message])).toEqual([
        ['retrying', 1, 'try 1'],
        ['retrying', 2, 'try 2'],
        ['retrying', 3, 'try 3'],
        ['done', 4, false],
      ]);
      expect(entries).toEqual([expect.objectContaining({ status: 'done', attempts: 4, resultJson: '4', error: null })]);
    }
    const fake = new FakeDurableRun();
    const code = answer(`
      try { await Context.Step('final', counted(() => { throw new Context.NonRetryableError('stop'); }), { retries: { limit: 5, delay: 1 } }); } catch {}
      try { await Context.Step('spent', counted(() => { throw new RangeError('always'); }), { retries: { limit: 2, delay: 1, backoff: 'constant' } }); } catch (e) { Context.Log(e.name + ': ' + e.message); }
      Context.SetResponseEntity({ ResponseBody: calls });`);
    const result = await run(code, { durable: fake });
    expect(body(result)).toBe(1 + 3);
    expect(result.logs.map((line) => line.message)).toEqual(['RangeError: always']);
    expect(fake.entries().map(({ name, status, attempts }) => [name, status, attempts])).toEqual([
      ['final', 'failed', 1],
      ['spent', 'failed', 3],
    ]);
  });

  it('times each attempt out, also one that never settles, and goes on with the run', async () => {
    const fake = new FakeDurableRun();
    const code = answer(`
      let error;
      try {
        await Context.Step('hangs', counted(() => new Promise(() => {})), { timeout: 40, retries: { limit: 2, delay: 1 } });
      } catch (e) { error = [e.name, e.message]; }
      const quick = await Context.Step('quick', () => new Promise((resolve) => setTimeout(() => resolve('in time'), 5)), { timeout: '5 seconds' });
      Context.SetResponseEntity({ ResponseBody: { error, quick, calls } });`);
    expect(body(await run(code, { durable: fake }))).toEqual({
      error: ['TimeoutError', 'Attempt 3 of step "hangs" #1 did not finish within its timeout of 40 ms.'],
      quick: 'in time',
      calls: 3,
    });
    expect(fake.entries()[0]).toMatchObject({ status: 'failed', attempts: 3, error: { name: 'TimeoutError' } });
  });

  it('resumes a journalled retrying step at its next attempt: at once when its time passed, after a wait in the sandbox, or by suspending', async () => {
    const retrying = (until: number): JournalEntry => ({
      name: 'flaky', occurrence: 1, kind: 'step', status: 'retrying', resultJson: null, error: { name: 'Error', message: 'try 2' }, attempts: 2, startedAt: Date.now() - 60_000, finishedAt: null, until,
    });
    const code = answer(`Context.SetResponseEntity({ ResponseBody: { got: await Context.Step('flaky', counted(({ attempt }) => attempt), { retries: { limit: 5 } }), calls } });`);
    const due = new FakeDurableRun({ journal: [retrying(Date.now() - 1)] });
    expect(body(await run(code, { durable: due }))).toEqual({ got: 3, calls: 1 });
    expect(due.entries()[0]).toMatchObject({ status: 'done', attempts: 3, resultJson: '3' });

    const started = Date.now();
    const soon = new FakeDurableRun({ journal: [retrying(started + 150)], suspendAfterMs: 5000 });
    expect(body(await run(code, { durable: soon }))).toEqual({ got: 3, calls: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(148);

    const until = Date.now() + 3_600_000;
    const later = new FakeDurableRun({ journal: [retrying(until)], suspendAfterMs: 5000 });
    expect(await run(code, { durable: later })).toMatchObject({ kind: 'suspended', wait: { kind: 'retry', name: 'flaky', until } });
    expect(later.writes).toEqual([]);
  });

  it('suspends for a retry delay longer than suspendAfterMs, once the failed attempt is journalled', async () => {
    const fake = new FakeDurableRun({ suspendAfterMs: 100 });
    const before = Date.now();
    const result = await run(`await Context.Step('flaky', () => { throw new Error('down'); }, { retries: { limit: 3, delay: '1 hour' } });`, { durable: fake });
    expect(result).toMatchObject({ kind: 'suspended', wait: { kind: 'retry', name: 'flaky' } });
    const { until } = (result as Extract<ConnectorRunResult, { kind: 'suspended' }>).wait;
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(fake.entries()).toEqual([expect.objectContaining({ status: 'retrying', attempts: 1, until, error: { name: 'Error', message: 'down' } })]);
  });

  it('fails a step at once, unretried, whose result is larger than maxResultBytes or not JSON data, naming the step, its occurrence, the size and the limit', async () => {
    const fake = new FakeDurableRun({ limits: { maxResultBytes: 100 } });
    const code = answer(`
      const errors = [];
      const attempt = async (name, fn) => { try { await Context.Step(name, counted(fn), { retries: { limit: 3, delay: 1 } }); } catch (e) { errors.push(e.name + ': ' + e.message); } };
      await attempt('fits', () => 'x'.repeat(98));
      await attempt('long', () => 'x'.repeat(5000));
      await attempt('wide', () => 'é'.repeat(60));
      await attempt('big', () => 10n);
      await attempt('cycle', () => { const a = {}; a.a = a; return a; });
      await attempt('fn', () => () => 1);
      Context.SetResponseEntity({ ResponseBody: { errors, calls } });`);
    const { errors, calls } = body(await run(code, { durable: fake })) as { errors: string[]; calls: number };
    expect(calls).toBe(6);
    expect(errors).toEqual([
      'RangeError: The result of step "long" #1 is at least 5002 bytes as JSON, over the limit of 100 bytes (STEP_RESULT_MAX_SIZE).',
      'RangeError: The result of step "wide" #1 is 122 bytes as JSON, over the limit of 100 bytes (STEP_RESULT_MAX_SIZE).',
      expect.stringMatching(/^TypeError: The result of step "big" #1 is not JSON data \(.+\): return objects, arrays/),
      expect.stringMatching(/^TypeError: The result of step "cycle" #1 is not JSON data \(.+\)/),
      'TypeError: The result of step "fn" #1 is not JSON data (a function has no JSON): return objects, arrays, strings, numbers, booleans or null.',
    ]);
    expect(fake.entries().map(({ name, status, attempts }) => [name, status, attempts])).toEqual([
      ['fits', 'done', 1],
      ...['long', 'wide', 'big', 'cycle', 'fn'].map((name) => [name, 'failed', 1]),
    ]);
  });

  it('fails a step with the message of a journal write the store refuses (a limit), and the connector may catch it', async () => {
    const refusal = "The invocation's journal holds 3 entries, the most one invocation may have (JOURNAL_MAX_STEPS = 3).";
    const fake = new FakeDurableRun().refuse((write) => (write.op === 'record' && write.step.occurrence > 3 ? refusal : null));
    const code = `
      const got = [];
      for (let i = 1; i <= 5; i++) { try { got.push(await Context.Step('s', () => i)); } catch (e) { got.push(e.message); } }
      Context.SetResponseEntity({ ResponseBody: got });`;
    expect(body(await run(code, { durable: fake }))).toEqual([1, 2, 3, refusal, refusal]);
    expect(fake.entries()).toHaveLength(3);
  });

  it('answers with the entry as stored when the journal already holds another end for the step (a slower attempt elsewhere)', async () => {
    const fake = new FakeDurableRun().answerWith((write) =>
      write.op === 'record' ? { name: 'pay', occurrence: 1, kind: 'step', status: 'done', resultJson: '{"charged":"elsewhere"}', error: null, attempts: 1, startedAt: 0, finishedAt: 1, until: null } : null,
    );
    expect(body(await run(`Context.SetResponseEntity({ ResponseBody: await Context.Step('pay', () => ({ charged: 'here' })) });`, { durable: fake }))).toEqual({ charged: 'elsewhere' });
  });

  it('redacts the run\'s secrets from the errors it journals', async () => {
    const fake = new FakeDurableRun();
    await run(`try { await Context.Step('call', () => { throw new Error('refused key ' + Context.Secrets.API_KEY); }); } catch {}`, {
      durable: fake,
      secrets: { API_KEY: 'sk_live_0123456789' },
    });
    expect(fake.entries()[0].error).toEqual({ name: 'Error', message: 'refused key [secret]' });
  });

  it('lets no 4 characters of a secret into the journal when the sandbox cuts a step error inside it', async () => {
    const secret = 'sk_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ_12345';
    for (const pad of [1970, 1985, 1996]) {
      const fake = new FakeDurableRun();
      await run(`try { await Context.Step('call', () => { throw new Error('x'.repeat(${pad}) + Context.Secrets.API_KEY); }); } catch {}`, { durable: fake, secrets: { API_KEY: secret } });
      const journalled = JSON.stringify(fake.entries()[0].error).split('[secret]').join('');
      expect(Array.from({ length: secret.length - 3 }, (_, i) => secret.slice(i, i + 4)).filter((piece) => journalled.includes(piece))).toEqual([]);
    }
  });

  it('fails the run, whatever the code catches, when the journal holds another kind of call where the code now makes a step', async () => {
    const journal: JournalEntry[] = [
      { name: 'send', occurrence: 1, kind: 'step', status: 'done', resultJson: '1', error: null, attempts: 1, startedAt: 0, finishedAt: 1, until: null },
      { name: 'send', occurrence: 2, kind: 'sleep', status: 'waiting', resultJson: null, error: null, attempts: 0, startedAt: 0, finishedAt: null, until: 1 },
    ];
    const fake = new FakeDurableRun({ journal });
    const code = answer(`
      for (let i = 0; i < 3; i++) { try { await Context.Step('send', counted(() => i)); } catch {} }
      Context.SetResponseEntity({ ResponseBody: 'went on' });`);
    const result = await run(code, { durable: fake });
    expect(result).toMatchObject({
      kind: 'failed',
      reason: 'threw',
      message:
        'The connector\'s code no longer matches this invocation\'s journal: "send" #2 is journalled as a sleep (Context.Sleep or Context.SleepUntil), but the code now makes a step (Context.Step) there: Context.Step("send"). Durable calls must come with the same names in the same order on every run of an invocation.',
    });
    expect(fake.writes).toEqual([]);
  });

  it('is a member of the frozen Context, loaded on first use even when the code names it in ways no scan sees', async () => {
    const code = `
      const [step, nonRetryable] = [['S', 'tep'].join(''), ['Non', 'Retryable', 'Error'].join('')];
      const value = await Context[step]('hidden', () => 'found');
      const before = Context[step];
      try { Context[step] = () => 1; } catch {}
      Context.SetResponseEntity({ ResponseBody: {
        value, kept: Context[step] === before, frozen: Object.isFrozen(Context),
        error: new Context[nonRetryable]('x') instanceof Error, members: Object.keys(Context).filter((key) => !/^[GSRLH]/.test(key) || key.startsWith(['Sl', 'eep'].join(''))).sort(),
      } });`;
    expect(modulesNamedIn(code)).toEqual([]);
    expect(modulesNamedIn("await Context.Sleep('nap', '1 day');")).toEqual(['durable']);
    expect(body(await run(code, { durable: new FakeDurableRun() }))).toEqual({
      value: 'found',
      kept: true,
      frozen: true,
      error: true,
      members: ['InboundAuth', 'NonRetryableError', 'Sleep', 'SleepUntil', 'WaitForEvent'],
    });
  });

  it.each([
    ['an empty name', `''`],
    ['a name of 201 characters', `'n'.repeat(201)`],
    ['a name of 10 million characters', `'n'.repeat(10_000_000)`],
    ['a control character', `'a\\nb'`],
    ['a number', `42`],
    ['no name', `undefined`],
  ])('refuses %s with a TypeError the connector can catch, counting nothing', async (_case, name) => {
    const fake = new FakeDurableRun();
    const result = await run(
      `let error; try { await Context.Step(${name}, () => 1); } catch (e) { error = e.name + ': ' + e.message; }
       Context.SetResponseEntity({ ResponseBody: { error, next: await Context.Step('ok', () => 2) } });`,
      { durable: fake },
    );
    expect(body(result)).toEqual({ error: expect.stringMatching(/^TypeError: Context\.Step expects a name: a text of 1 to 200 characters with no control characters/), next: 2 });
    expect(steps(fake)).toEqual([{ name: 'ok', occurrence: 1, status: 'done', resultJson: '2', attempts: 1 }]);
  });

  it.each([
    ['no function', `Context.Step('a')`, /^TypeError: Context\.Step expects a function to run/],
    ['an unknown option', `Context.Step('a', () => 1, { retry: 3 })`, /^TypeError: Context\.Step options: "retry" is not an option \(retries, timeout\)\.$/],
    ['a retry limit that is not a whole number', `Context.Step('a', () => 1, { retries: { limit: 1.5 } })`, /retries\.limit must be a whole number from 0 to 1000/],
    ['retries without a limit', `Context.Step('a', () => 1, { retries: { delay: '1 second' } })`, /retries\.limit must be a whole number/],
    ['an unknown backoff', `Context.Step('a', () => 1, { retries: { limit: 1, backoff: 'random' } })`, /backoff must be 'constant', 'linear' or 'exponential'; not "random"/],
    ['a delay in an unknown unit', `Context.Step('a', () => 1, { retries: { limit: 1, delay: '3 fortnights' } })`, /retries\.delay must be a duration: milliseconds .* not "3 fortnights"/],
    ['a negative timeout', `Context.Step('a', () => 1, { timeout: -5 })`, /options\.timeout must be a duration/],
    ['a zero timeout', `Context.Step('a', () => 1, { timeout: 0 })`, /options\.timeout must be longer than 0/],
  ])('refuses %s with a clear TypeError', async (_case, call, message) => {
    const result = await run(`try { await ${call}; } catch (e) { Context.SetResponseEntity({ ResponseBody: e.name + ': ' + e.message }); }`, { durable: new FakeDurableRun() });
    expect(body(result)).toMatch(message);
  });
});
