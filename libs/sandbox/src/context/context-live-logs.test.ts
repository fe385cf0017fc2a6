import type { LogLine, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { RUN_BUDGET } from '../run/run-budget';

const entity: WebhookEntity = { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null };

/** Lines logged while runs go on reach the caller in batches before the run ends (see RUN_BUDGET.logBatchMs). */
describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Log lines as they happen (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers, limits: { logBytes: 1 << 20 } });
  });
  afterAll(() => runtime.close());

  /** Runs `code`, recording each batch with whether the run had ended when it arrived. */
  async function run(code: string) {
    const batches: Array<{ lines: LogLine[]; ended: boolean }> = [];
    let ended = false;
    const result = await runtime.run({ cacheKey: 'bot/live@1', code, entity, timeoutMs: 10_000, allowedHosts: [], onLogs: (lines) => batches.push({ lines, ended }) });
    ended = true;
    return { result, batches, messages: (lines: LogLine[]) => lines.map((line) => line.message) };
  }

  it('hands over the lines logged before a wait while the run waits, and the rest with the result', async () => {
    const { result, batches, messages } = await run(`
      Context.Log('starting');
      console.error('a warning');
      await new Promise((resolve) => setTimeout(resolve, ${RUN_BUDGET.logBatchMs + 300}));
      Context.Log('done');`);
    expect(result.kind).toBe('ok');
    expect(batches.map((batch) => messages(batch.lines))).toEqual([['starting', 'a warning']]);
    expect(batches[0].ended).toBe(false);
    expect(batches[0].lines[1]).toMatchObject({ level: 'error' });
    expect(messages(result.logs)).toEqual(['done']);
  });

  it('hands over nothing while a run that ends sooner goes on: every line comes with its result', async () => {
    const { result, batches, messages } = await run(`
      Context.Log('one');
      await new Promise((resolve) => setTimeout(resolve, 20));
      Context.Log('two');
      throw new Error('broken');`);
    expect(batches).toEqual([]);
    expect(messages(result.logs)).toEqual(['one', 'two', expect.stringMatching(/^Error: broken/)]);
  });

  it('hands over full batches of a connector logging fast, in order, and lines of a busy loop without waiting for it', async () => {
    const total = RUN_BUDGET.logBatchLines * 2 + 7;
    const { result, batches, messages } = await run(`
      for (let i = 0; i < ${total}; i++) Context.Log('line ' + i);
      const end = Date.now() + ${RUN_BUDGET.logBatchMs + 100};
      Context.Log('busy');
      while (Date.now() < end) {}
      Context.Log('after');
      while (Date.now() < end + 50) {}`);
    expect(result.kind).toBe('ok');
    const all = [...batches.flatMap((batch) => messages(batch.lines)), ...messages(result.logs)];
    expect(all).toEqual([...Array.from({ length: total }, (_, i) => `line ${i}`), 'busy', 'after']);
    expect(batches.map((batch) => batch.lines.length)).toEqual([RUN_BUDGET.logBatchLines, RUN_BUDGET.logBatchLines, 9]);
    expect(batches.every((batch) => !batch.ended)).toBe(true);
    expect(result.logs).toEqual([]);
  });

  it('still ends a run at its log limit, counting the lines it handed over', async () => {
    const { result, batches } = await run(`for (let i = 0; ; i++) Context.Log('x');`);
    expect(result).toMatchObject({ kind: 'failed', reason: 'limit' });
    const lines = batches.reduce((count, batch) => count + batch.lines.length, 0) + result.logs.length;
    // Every line the connector may write, and the host's line saying why it stopped.
    expect(lines).toBe(RUN_BUDGET.logLines + 1);
    expect(result.logs.at(-1)?.message).toMatch(/log lines/);
  });
});
