import { INITIAL_ENGINE_BYTES } from './engine-instance';
import { runConnector, type RunInput } from './run-connector';
import { DEFAULT_RUN_LIMITS, resolveEnvironment } from './sandbox-environment';
import { SandboxPool } from './sandbox-pool';

describe('sandbox pool', () => {
  let pool: SandboxPool;
  beforeEach(async () => {
    pool = new SandboxPool(resolveEnvironment({}, false));
    await pool.warm();
  });
  afterEach(() => pool.dispose());

  const input = (cacheKey: string, code: string): RunInput => ({ cacheKey, code, entity: null, timeoutMs: 2000, limits: DEFAULT_RUN_LIMITS, allowedHosts: [] });

  /** Runs `run` in the sandbox the pool gives it and hands the instance back; tells whether its code was compiled ahead. */
  async function runOnce(run: RunInput): Promise<{ compiledAhead: boolean; kind: string; memoryBytes: number }> {
    const sandbox = pool.takeIdle(run) ?? (await pool.takeNew(run));
    const compiledAhead = sandbox.preloadedFor(run.code) !== null;
    const outcome = await runConnector(sandbox, run);
    const memoryBytes = sandbox.instance.memoryBytes;
    pool.recycle(sandbox.instance, run, outcome.release());
    return { compiledAhead, kind: outcome.result.kind, memoryBytes };
  }

  it('compiles a connector ahead once it has run twice, per cache key and code', async () => {
    const ack = input('bot/ack@1', 'Context.SetResponseEntity({ ResponseBody: 1 });');
    expect((await runOnce(ack)).compiledAhead).toBe(false);
    expect((await runOnce(ack)).compiledAhead).toBe(false);
    expect(await runOnce(ack)).toMatchObject({ compiledAhead: true, kind: 'ok' });
    expect(await runOnce(ack)).toMatchObject({ compiledAhead: true, kind: 'ok' });
    // A new version is another key: compiled when it runs until it has run twice.
    expect((await runOnce(input('bot/ack@2', ack.code))).compiledAhead).toBe(false);
  });

  it('keeps connectors that alternate compiled ahead, on instances of their own', async () => {
    const runs = ['a', 'b', 'c'].map((name) => input(`bot/${name}@1`, `Context.SetResponseEntity({ ResponseBody: '${name}' });`));
    const seen: boolean[] = [];
    for (let round = 0; round < 5; round++) {
      for (const run of runs) seen.push((await runOnce(run)).compiledAhead);
      await new Promise((resolve) => setImmediate(resolve)); // the idle moment in which instances are added
    }
    expect(seen.slice(-3)).toEqual([true, true, true]);
  });

  it('never compiles ahead code that closes its function body early', async () => {
    const early = input('bot/early@1', '}, Context.Log("outside"), async function () {');
    for (let i = 0; i < 4; i++) expect(await runOnce(early)).toMatchObject({ compiledAhead: false, kind: 'ok' });
  });

  it('drops an instance that grew large during its run, so its memory is freed', async () => {
    const big = input('bot/big@1', 'const a = new Uint8Array(40 * 1024 * 1024); Context.SetResponseEntity({ ResponseBody: a.length });');
    expect(await runOnce(big)).toMatchObject({ kind: 'ok', memoryBytes: expect.any(Number) });
    for (let i = 0; i < 3; i++) {
      const small = await runOnce(input('bot/small@1', 'Context.SetResponseEntity({ ResponseBody: 1 });'));
      expect(small.memoryBytes).toBe(INITIAL_ENGINE_BYTES);
    }
  });
});
