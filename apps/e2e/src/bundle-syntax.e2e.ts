import { serviceWithConnector } from './deployed-connector';

const ANSWERS = "Context.SetResponseEntity({ ResponseBody: { version: 'one' } });\n";

/**
 * A bundle sent to the built control API with its sources (as `gi connector deploy` sends one) that
 * the sandbox cannot compile: refused at the source file its author wrote, the live version kept.
 */
describe('deploying a bundle that does not compile (built embedded service)', () => {
  const deployed = serviceWithConnector('acme', 'Order', 'shop', ANSWERS);
  const deploy = (sources: { path: string; content: string }[]) =>
    deployed.api.admin('PUT', '/bots/acme/integrations/shop', { entityName: 'Order', code: '// bundled\nconst total = two( +;\n', sources });

  it('names the file, line and column of the source that does not parse, an imported one included', async () => {
    const refused = await deploy([
      { path: 'src/index.ts', content: "import { two } from './lib';\nContext.Log(two());\n" },
      { path: 'src/lib.ts', content: 'export const two = (): number => {\n  return 2 +;\n};\n' },
    ]);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.json).toMatchObject({ file: 'src/lib.ts', line: 2, column: 13, message: 'Unexpected ";"', detail: 'The connector code does not compile: src/lib.ts:2:13: Unexpected ";".' });

    const mjs = await deploy([{ path: 'src/index.mjs', content: "import { two } from './lib.mjs';\nContext.Log(two( +);\n" }]);
    expect(mjs.json).toMatchObject({ file: 'src/index.mjs', line: 2, column: 19 });
  });

  it('gives the position in the bundle when every source parses, and keeps the live version', async () => {
    const refused = await deploy([{ path: 'src/index.ts', content: 'Context.Log(1);\n' }]);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ line: 2, column: expect.any(Number) });
    expect(refused.json.file).toBeUndefined();
    expect(refused.json.detail).toMatch(/ of the bundle\)\.$/);
    const live = await deployed.api.postJson(deployed.url(), deployed.token, {});
    expect([live.status, live.json]).toEqual([200, { version: 'one' }]);
    expect((await deployed.api.admin('GET', '/bots/acme/integrations/shop/versions')).json.latest).toBe(1);
  });
});
