import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

/**
 * A connector must not be able to predict another run's Math.random: every run, the first of a new
 * integration included, draws from a seed of its own (sandboxes are made ahead as spares, and an
 * integration's first run compiles into one).
 */
describe('Math.random across runs and integrations', () => {
  const code = 'Context.SetResponseEntity({ ResponseBody: [Math.random(), Math.random(), Math.random()] });';
  const draws = async (runtime: QuickJsConnectorRuntime, cacheKey: string) => {
    const result = await runtime.run({ cacheKey, code, entity: null, timeoutMs: 2000, allowedHosts: [] });
    expect(result.kind).toBe('ok');
    return JSON.stringify(result.kind === 'ok' && result.responseBody);
  };

  it.each([
    ['on worker threads', 1],
    ['on the calling thread', 0],
  ])('%s, the first run of every new integration and every later run draws numbers of its own', async (_, workers) => {
    const runtime = await createQuickJsRuntime({ workers });
    try {
      const seen: string[] = [];
      for (let i = 0; i < 12; i++) seen.push(await draws(runtime, `bot-${i}/new@1`));
      for (let i = 0; i < 12; i++) seen.push(await draws(runtime, 'bot-0/new@1'));
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen[0]).not.toContain('0.3311202810018534');
    } finally {
      await runtime.close();
    }
  });
});
