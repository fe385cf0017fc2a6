import type { RunInput } from '../run/run-connector';
import { DEFAULT_RUN_LIMITS, resolveEnvironment } from '../sandbox-environment';
import { SandboxEngine } from './sandbox-engine';

describe('sandbox engine', () => {
  const input = (cacheKey: string, code: string, onWaitsOnHost: () => void): RunInput => ({
    cacheKey,
    code,
    entityJson: 'null',
    rawBody: null,
    timeoutMs: 2000,
    limits: DEFAULT_RUN_LIMITS,
    allowedHosts: [],
    onWaitsOnHost,
  });

  // A worker tells its pool a run waits on the host, and the pool then hands the thread other runs:
  // a run that only waited for its sandbox to be made computes right after, and must not be told so.
  it('says a run waits on the host only when it does, not while its sandbox is being made', async () => {
    const engine = await SandboxEngine.create(resolveEnvironment({}, false));
    try {
      const waited: string[] = [];
      const start = (key: string, code: string) => engine.start(input(key, code, () => waited.push(key)));
      const computing = 'Context.SetResponseEntity({ ResponseBody: 1 });';
      // New connectors, one after another in one turn: the first ones take the ready spares, the
      // last needs a sandbox made for it, so its start is a promise although it never waits.
      const starts = ['a', 'b', 'c', 'd'].map((key) => start(key, computing));
      expect(starts.some((outcome) => outcome instanceof Promise)).toBe(true);
      expect((await Promise.all(starts)).map((result) => result.kind)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(waited).toEqual([]);

      // Host work (a digest on Node's thread pool) is never done by the time the run awaits it; a short timer may be, on a loaded machine.
      const hostWork = 'await crypto.subtle.digest("SHA-256", new Uint8Array(1)); Context.SetResponseEntity({ ResponseBody: 2 });';
      expect((await start('e', hostWork)).kind).toBe('ok');
      expect(waited).toEqual(['e']);
    } finally {
      engine.dispose();
    }
  });
});
