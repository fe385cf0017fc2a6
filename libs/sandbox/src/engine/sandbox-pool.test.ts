import { INITIAL_ENGINE_BYTES } from './engine-instance';
import { ConnectorRun, type RunInput } from '../run/run-connector';
import type { Sandbox } from './sandbox';
import { DEFAULT_RUN_LIMITS, resolveEnvironment } from '../sandbox-environment';
import { RUNS_PER_THREAD } from '../sandbox-options';
import { SandboxPool } from './sandbox-pool';

describe('sandbox pool', () => {
  let pool: SandboxPool;
  beforeEach(async () => {
    pool = new SandboxPool(resolveEnvironment({}, false));
    await pool.warm();
  });
  afterEach(() => pool.dispose());

  const input = (cacheKey: string, code: string): RunInput => ({ cacheKey, code, entityJson: 'null', rawBody: null, timeoutMs: 2000, limits: DEFAULT_RUN_LIMITS, allowedHosts: [] });

  /** Runs `run` in the sandbox the pool gives it and hands it back. */
  async function runOnce(run: RunInput): Promise<{ sandbox: Sandbox; compiledAhead: boolean; kind: string; memoryBytes: number }> {
    const sandbox = pool.take(run) ?? (await pool.make(run));
    const compiledAhead = sandbox.connector?.code === run.code;
    const connectorRun = new ConnectorRun(sandbox, run);
    const result = connectorRun.start() ?? (await connectorRun.finish());
    const memoryBytes = sandbox.instance.memoryBytes;
    pool.giveBack(sandbox, run);
    return { sandbox, compiledAhead, kind: result.kind, memoryBytes };
  }

  it("compiles a connector into a sandbox on its first run, and runs it there again", async () => {
    const ack = input('bot/ack@1', 'Context.SetResponseEntity({ ResponseBody: 1 });');
    const first = await runOnce(ack);
    expect(first).toMatchObject({ compiledAhead: true, kind: 'ok' });
    for (let i = 0; i < 3; i++) expect((await runOnce(ack)).sandbox).toBe(first.sandbox);
    // A new version is another key, with a sandbox of its own.
    const next = await runOnce(input('bot/ack@2', ack.code));
    expect(next).toMatchObject({ compiledAhead: true, kind: 'ok' });
    expect(next.sandbox).not.toBe(first.sandbox);
  });

  it('keeps connectors that alternate ready, each in a sandbox of its own', async () => {
    const runs = ['a', 'b', 'c'].map((name) => input(`bot/${name}@1`, `Context.SetResponseEntity({ ResponseBody: '${name}' });`));
    const sandboxes = new Map<string, Set<Sandbox>>();
    for (let round = 0; round < 4; round++) {
      for (const run of runs) {
        const { sandbox, compiledAhead } = await runOnce(run);
        expect(compiledAhead).toBe(true);
        sandboxes.set(run.cacheKey, (sandboxes.get(run.cacheKey) ?? new Set()).add(sandbox));
      }
    }
    expect([...sandboxes.values()].map((set) => set.size)).toEqual([1, 1, 1]);
  });

  it('gives a key that comes back with other code a sandbox for that code', async () => {
    const first = await runOnce(input('bot/edited@1', 'Context.SetResponseEntity({ ResponseBody: 1 });'));
    const edited = await runOnce(input('bot/edited@1', 'Context.SetResponseEntity({ ResponseBody: 2 });'));
    expect(edited).toMatchObject({ compiledAhead: true, kind: 'ok' });
    expect(edited.sandbox).not.toBe(first.sandbox);
  });

  it('never compiles ahead code that closes its function body early', async () => {
    const early = input('bot/early@1', '}, Context.Log("outside"), async function () {');
    for (let i = 0; i < 4; i++) expect(await runOnce(early)).toMatchObject({ compiledAhead: false, kind: 'ok' });
  });

  it('drops a sandbox that grew large during its run, so its memory is freed', async () => {
    const big = input('bot/big@1', 'const a = new Uint8Array(40 * 1024 * 1024); Context.SetResponseEntity({ ResponseBody: a.length });');
    const grown = await runOnce(big);
    expect(grown.memoryBytes).toBeGreaterThan(40 * 1024 * 1024);
    const again = await runOnce(big);
    expect(again.sandbox).not.toBe(grown.sandbox);
    expect((await runOnce(input('bot/small@1', 'Context.SetResponseEntity({ ResponseBody: 1 });'))).memoryBytes).toBe(INITIAL_ENGINE_BYTES);
  });

  it('keeps at most as many idle sandboxes as runs a thread holds, dropping those of the connectors that ran least recently', async () => {
    const runs = Array.from({ length: RUNS_PER_THREAD + 2 }, (_, i) => input(`bot/c${i}@1`, `Context.SetResponseEntity({ ResponseBody: ${i} });`));
    const first = new Map<string, Sandbox>();
    for (const run of runs) first.set(run.cacheKey, (await runOnce(run)).sandbox);
    // The two that ran first lost their sandboxes; the ones after them kept theirs.
    // Compared as booleans: a failure printing two sandboxes would fill the test worker's heap.
    for (const run of runs.slice(2).reverse()) expect((await runOnce(run)).sandbox === first.get(run.cacheKey)).toBe(true);
    for (const run of runs.slice(0, 2)) expect((await runOnce(run)).sandbox === first.get(run.cacheKey)).toBe(false);
  });

  it("keeps the sandboxes of a connector's runs that wait on the host together: its next wave makes none", async () => {
    const waits = input('bot/waits@1', 'await new Promise((resolve) => setTimeout(resolve, 20)); Context.SetResponseEntity({ ResponseBody: 1 });');
    const wave = async () => {
      const sandboxes = await Promise.all(Array.from({ length: RUNS_PER_THREAD }, async () => pool.take(waits) ?? (await pool.make(waits))));
      const results = await Promise.all(sandboxes.map((sandbox) => {
        const run = new ConnectorRun(sandbox, waits);
        return Promise.resolve(run.start() ?? run.finish());
      }));
      for (const sandbox of sandboxes) pool.giveBack(sandbox, waits);
      expect(results.map((result) => result.kind)).toEqual(Array(RUNS_PER_THREAD).fill('ok'));
      return new Set(sandboxes);
    };
    const first = await wave();
    const second = await wave();
    expect([...second].filter((sandbox) => !first.has(sandbox)).length).toBe(0);
  });
});
