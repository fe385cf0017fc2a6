import fc from 'fast-check';
import type { ConnectorRunRequest, LogLine, Progress, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

const entity: WebhookEntity = { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null };
const SECRETS = { API_KEY: 'sk_live_0123456789', PIN: 'abc' };

/**
 * Every run of 4 characters of `secret` found in the text that left the run, `[secret]` marks aside.
 * Numbers are left out: a timestamp such as 1795935442658 holds "7959" by chance, not by a leak.
 */
const leaks = (left: unknown, secret: string) => {
  const shown = JSON.stringify(left, (_key, value: unknown) => (typeof value === 'number' ? 0 : value)).split('[secret]').join('\u0000');
  return Array.from({ length: secret.length - 3 }, (_, i) => secret.slice(i, i + 4)).filter((piece) => shown.includes(piece));
};

/** Runs `code` with `secret` as Context.Secrets.KEY, and returns everything that left the run. */
async function everythingLeft(runtime: QuickJsConnectorRuntime, code: string, secret: string, limits?: ConnectorRunRequest['limits'], body: unknown = {}) {
  const streamed: LogLine[] = [];
  const progress: Progress[] = [];
  const result = await runtime.run({
    cacheKey: `bot/cuts@${code.length}`, code, entity: { ...entity, RequestBody: body }, secrets: { KEY: secret }, timeoutMs: 5000, allowedHosts: [], limits,
    onLogs: (lines) => streamed.push(...lines), onProgress: (p) => progress.push(p),
  });
  return { result, streamed, progress };
}

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

  it.each([
    ['a RaiseError title (cut at 200)', `Context.RaiseError('x'.repeat(180) + Context.Secrets.KEY, 'm');`],
    ['a RaiseError message (cut at 2,000)', `Context.RaiseError('t', 'x'.repeat(1980) + Context.Secrets.KEY);`],
    ['a thrown message (cut at 2,000)', `throw new Error('x'.repeat(1985) + Context.Secrets.KEY);`],
    ['a thrown string', `throw 'x'.repeat(1985) + Context.Secrets.KEY;`],
    ['a thrown stack (cut at 4,000)', `const e = new Error('m'); e.stack = 'x'.repeat(3985) + Context.Secrets.KEY; throw e;`],
    ['a progress text (cut at 1,000)', `Context.SetProgress(5, 'x'.repeat(980) + Context.Secrets.KEY); Context.SetResponseEntity({ ResponseBody: 1 });`],
    ['a progress text held back', `Context.SetProgress(1, 'a'); Context.SetProgress(5, 'x'.repeat(980) + Context.Secrets.KEY); Context.SetResponseEntity({ ResponseBody: 1 });`],
    ['a log line past the log limit', `Context.Log('x'.repeat(1000)); Context.Log('x'.repeat(1000) + Context.Secrets.KEY);`],
  ])('lets no 4 characters of a secret out of %s, where the cut falls inside it', async (_case, code) => {
    const secret = 'sk_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ_12345';
    const left = await everythingLeft(runtime, code, secret, { logBytes: 2030 });
    expect(leaks(left, secret)).toEqual([]);
  });

  it('leaves a ResponseBody that holds a value as the connector wrote it', async () => {
    expect(await run('Context.SetResponseEntity({ ResponseBody: { echoed: Context.Secrets.API_KEY } });')).toMatchObject({ kind: 'ok', responseBody: { echoed: SECRETS.API_KEY } });
  });
});

describe('secrets across cuts (in-process: the same code as on worker threads)', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());

  it('lets no 4 characters of a secret out, whatever the secret, its place and the cut (fast-check)', async () => {
    // One code for every case (compiled once): the case and its padding come in the request body.
    const code = `
      const { where, pad } = Context.GetRequestEntity().RequestBody;
      const text = 'x'.repeat(pad) + Context.Secrets.KEY;
      if (where === 'title') Context.RaiseError(text.slice(-(pad % 260) - Context.Secrets.KEY.length), 'm');
      if (where === 'message') Context.RaiseError('t', text);
      if (where === 'thrown') throw new Error(text + 'y'.repeat(pad % 7));
      if (where === 'progress') Context.SetProgress(1, text.slice(-(pad % 1100) - Context.Secrets.KEY.length));
      if (where === 'log') Context.Log(text);
      Context.SetResponseEntity({ ResponseBody: 1 });`;
    const secret = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'), minLength: 4, maxLength: 60 });
    const where = fc.constantFrom('title', 'message', 'thrown', 'progress', 'log');
    await fc.assert(
      fc.asyncProperty(secret, where, fc.integer({ min: 1900, max: 2100 }), fc.integer({ min: 1024, max: 2100 }), async (value, place, pad, logBytes) => {
        const left = await everythingLeft(runtime, code, value, { logBytes }, { where: place, pad });
        expect(leaks(left, value)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

});
