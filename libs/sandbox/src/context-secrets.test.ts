import type { ConnectorRunRequest, LogLine, Progress, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from './quickjs-connector.runtime';

const entity: WebhookEntity = { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null };
const SECRETS = { API_KEY: 'sk_live_0123456789', PIN: 'abc' };

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Context.Secrets (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: `bot/secrets@${code.length}`, code, entity, secrets: SECRETS, timeoutMs: 5000, allowedHosts: [], ...extra });

  it('reads the run\'s secrets from a frozen object that connector code cannot change', async () => {
    const result = await run(`
      const s = Context.Secrets;
      let wrote = 'no';
      try { s.API_KEY = 'x'; s.NEW = 'y'; } catch (e) { wrote = e.name; }
      Context.SetResponseEntity({ ResponseBody: {
        key: s.API_KEY, pin: Context.Secrets.PIN, missing: s.NOPE === undefined, same: s === Context.Secrets,
        frozen: Object.isFrozen(s), names: Object.keys(s).sort(), afterWrite: s.API_KEY, hasNew: 'NEW' in s,
      } });`);
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: { key: SECRETS.API_KEY, pin: 'abc', missing: true, same: true, frozen: true, names: ['API_KEY', 'PIN'], afterWrite: SECRETS.API_KEY, hasNew: false },
    });
  });

  it('is an empty object for a run without secrets, and nothing of a run is left to the next', async () => {
    await run('Context.SetResponseEntity({ ResponseBody: Context.Secrets.API_KEY });');
    const result = await run('Context.SetResponseEntity({ ResponseBody: Object.keys(Context.Secrets).length });', { secrets: undefined });
    expect(result).toMatchObject({ kind: 'ok', responseBody: 0 });
  });

  it('redacts the values from log lines, streamed or not, and progress messages; short values stay', async () => {
    const streamed: LogLine[] = [];
    const progress: Progress[] = [];
    const result = await run(
      `Context.Log('key=' + Context.Secrets.API_KEY, { nested: Context.Secrets.API_KEY });
       console.error(new Error('failed with ' + Context.Secrets.API_KEY));
       Context.Log('pin ' + Context.Secrets.PIN);
       Context.SetProgress(50, 'using ' + Context.Secrets.API_KEY);
       await new Promise((resolve) => setTimeout(resolve, 700));
       Context.Log('later ' + Context.Secrets.API_KEY);
       Context.SetResponseEntity({ ResponseBody: 'done' });`,
      { onLogs: (lines) => streamed.push(...lines), onProgress: (p) => progress.push(p) },
    );
    const all = [...streamed, ...result.logs].map((l) => l.message);
    expect(all).toEqual(['key=[secret] {"nested":"[secret]"}', 'Error: failed with [secret]', 'pin abc', 'later [secret]']);
    expect(progress.map((p) => p.message)).toContain('using [secret]');
    expect(JSON.stringify([streamed, result, progress])).not.toContain(SECRETS.API_KEY);
  });

  it('redacts RaiseError titles and messages, and thrown errors\' messages', async () => {
    const raised = await run('Context.RaiseError("bad " + Context.Secrets.API_KEY, "with " + Context.Secrets.API_KEY);');
    expect(raised).toMatchObject({ kind: 'raised', title: 'bad [secret]', message: 'with [secret]' });
    const thrown = await run('throw new Error("token " + Context.Secrets.API_KEY + " refused");');
    expect(thrown).toMatchObject({ kind: 'failed', reason: 'threw' });
    expect(JSON.stringify(thrown)).not.toContain(SECRETS.API_KEY);
    expect(thrown.kind === 'failed' && thrown.message).toContain('token [secret] refused');
  });

  it('leaves a ResponseBody that holds a value as the connector wrote it', async () => {
    expect(await run('Context.SetResponseEntity({ ResponseBody: { echoed: Context.Secrets.API_KEY } });')).toMatchObject({ kind: 'ok', responseBody: { echoed: SECRETS.API_KEY } });
  });
});
