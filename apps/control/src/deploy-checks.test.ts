import { controlApp } from './control-app.fixture';

/**
 * A bundle (gi connector deploy of a project) that does not compile in the sandbox is refused with
 * the file, line and column of the source its author wrote, not of the bundle.
 */
describe('deploying a bundle that does not compile', () => {
  // The fixture's sandbox refuses code containing "syntax error".
  const BROKEN_BUNDLE = '// bundled\n/* syntax error */\n';
  const LIB = { path: 'src/lib.ts', content: 'export const two = (): number => 2;\n' };

  async function deploy(sources: { path: string; content: string }[]) {
    const { admin } = controlApp();
    expect((await admin('PUT', '/bots/acme/entities/Order', { fields: [] })).status).toBe(200);
    const reply = await admin('PUT', '/bots/acme/integrations/shop', { entityName: 'Order', code: BROKEN_BUNDLE, sources });
    expect((await admin('GET', '/bots/acme/integrations/shop')).status).toBe(404);
    return reply;
  }

  it.each([
    ['src/index.ts', "import { two } from './lib';\nconst total: number = two(;\nContext.Log(total);\n", 2, 27, 'Unexpected ";"'],
    ['src/index.js', "import { two } from './lib';\nconst total = two(;\nContext.Log(total);\n", 2, 19, 'Unexpected ";"'],
    ['src/index.mjs', "import { two } from './lib';\n\nContext.Log(two() +);\n", 3, 20, 'Unexpected ")"'],
  ])('points at the line and column of a %s entry', async (path, content, line, column, message) => {
    const reply = await deploy([{ path, content }, LIB]);
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ file: path, line, column, message });
    expect(reply.json.detail).toBe(`The connector code does not compile: ${path}:${line}:${column}: ${message}.`);
  });

  it('points into an imported local module when the entry is fine', async () => {
    const reply = await deploy([
      { path: 'src/index.ts', content: "import { two } from './lib';\nContext.Log(two());\n" },
      { path: 'src/lib.ts', content: 'export const two = (): number => {\n  return 2 +;\n};\n' },
    ]);
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ file: 'src/lib.ts', line: 2, column: 13, message: 'Unexpected ";"' });
  });

  it('gives the position in the bundle when every source parses', async () => {
    const reply = await deploy([{ path: 'src/index.ts', content: 'Context.Log(1);\n' }, { path: 'data/prices.csv', content: 'not, parsed (\n' }]);
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ line: 1, column: 8, message: 'unexpected token' });
    expect(reply.json.file).toBeUndefined();
    expect(reply.json.detail).toBe('The connector code does not compile: unexpected token (line 1, column 8 of the bundle).');
  });
});
