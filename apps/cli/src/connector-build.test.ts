import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { MAX_CONNECTOR_CODE_BYTES } from '@gi/domain';
import { buildConnector } from './connector-build';
import { captureIo } from './fake-service.fixture';
import { runCli } from './run-cli';

const noService = async () => {
  throw new Error('not in tests');
};

describe('connector bundles (gi connector deploy and run)', () => {
  let project: string;
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'gi-bundle-'));
    write('package.json', '{ "name": "shop", "private": true }\n');
    // A tiny CommonJS package in the project's node_modules, as npm installs one.
    write('node_modules/shout/package.json', '{ "name": "shout", "version": "1.0.0", "main": "index.js" }\n');
    write('node_modules/shout/index.js', 'exports.shout = (text) => text.toUpperCase() + "!";\n');
    write('src/format.ts', 'export const label = (id: number): string => `order ${id}`;\n');
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  function write(path: string, content: string): string {
    const file = join(project, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    return file;
  }
  /** The message of the CliError building the file fails with. */
  const refusal = (file: string) => buildConnector(file).then(() => 'built', (error: Error) => error.message);
  /** The position as reported: the file as the command line shows it, line, column from 1. */
  const at = (file: string, line: number, column: number) => `${relative(process.cwd(), file)}:${line}:${column}`;

  async function run(argv: string[]) {
    const io = captureIo();
    const code = await runCli(argv, io, {}, noService);
    return { code, out: io.stdout(), err: io.stderr() };
  }

  it('bundles a TypeScript entry with its local imports and a package of node_modules, and top-level await works', async () => {
    const entry = write(
      'src/index.ts',
      [
        "import { label } from './format';",
        "import { shout } from 'shout';",
        'interface Reply { Message: string }',
        'const id: number = await Promise.resolve(Context.GetRequestEntity()?.RequestBody.orderId);',
        'const reply: Reply = { Message: shout(label(id)) };',
        'Context.SetResponseEntity({ ResponseBody: reply });',
        '',
      ].join('\n'),
    );
    const built = await buildConnector(entry);
    expect(built.code).not.toMatch(/\bimport\b|\bexport\b|interface Reply/);
    // The project's own files, entry first; the package is in the bundle but not among the sources.
    expect(built.sources).toEqual([
      { path: 'src/index.ts', content: readFileSync(entry, 'utf8') },
      { path: 'src/format.ts', content: readFileSync(join(project, 'src/format.ts'), 'utf8') },
    ]);

    const result = await run(['connector', 'run', entry, '--body', '{"orderId": 42}']);
    expect(result).toMatchObject({ code: 0, out: '{"Message":"ORDER 42!"}\n' });
  });

  it('sends a plain .js script exactly as written, top-level return included, and bundles a .js module', async () => {
    const script = 'const e = Context.GetRequestEntity();\nif (!e) return;\nContext.SetResponseEntity(e);\n';
    expect(await buildConnector(write('plain.js', script))).toEqual({ code: script, sources: [] });
    const module = await buildConnector(write('src/module.js', "import { label } from './format';\nContext.Log(label(1));\n"));
    expect(module.code).toContain('order ${id}');
    expect(module.sources.map((s) => s.path)).toEqual(['src/module.js', 'src/format.ts']);
  });

  it('keeps a file from outside the project root (a monorepo\'s shared folder) under a path that never climbs out', async () => {
    const monorepo = mkdtempSync(join(tmpdir(), 'gi-monorepo-'));
    try {
      mkdirSync(join(monorepo, 'apps/shop/src'), { recursive: true });
      mkdirSync(join(monorepo, 'shared'), { recursive: true });
      writeFileSync(join(monorepo, 'apps/shop/package.json'), '{ "name": "shop" }\n');
      writeFileSync(join(monorepo, 'shared/label.ts'), 'export const label = (id: number) => `order ${id}`;\n');
      const entry = join(monorepo, 'apps/shop/src/index.ts');
      writeFileSync(entry, "import { label } from '../../../shared/label';\nContext.Log(label(1));\n");
      const built = await buildConnector(entry);
      expect(built.sources.map((s) => s.path)).toEqual(['apps/shop/src/index.ts', 'shared/label.ts']);
    } finally {
      rmSync(monorepo, { recursive: true, force: true });
    }
  });

  it('refuses a syntax error with file, line and column of the original source, before anything runs', async () => {
    const entry = write('src/broken.ts', "import { label } from './format';\nconst text: string = label(;\n");
    expect(await refusal(entry)).toBe(`${at(entry, 2, 28)}: Unexpected ";"`);
    // In an imported file too.
    write('src/broken-lib.ts', 'export const two = (): number => {\n  return 2 +;\n};\n');
    const importer = write('src/uses-broken.ts', "import { two } from './broken-lib';\nContext.Log(two());\n");
    expect(await refusal(importer)).toBe(`${at(join(project, 'src/broken-lib.ts'), 2, 13)}: Unexpected ";"`);
    // A .js module entry and an .mjs entry.
    const js = write('src/broken.js', "import { label } from './format';\nContext.Log(label(1) +);\n");
    expect(await refusal(js)).toBe(`${at(js, 2, 23)}: Unexpected ")"`);
    const mjs = write('src/broken.mjs', "import { label } from './format.ts';\n\nconst x = [label(1);\n");
    expect(await refusal(mjs)).toBe(`${at(mjs, 3, 20)}: Expected "]" but found ";"`);
    const result = await run(['connector', 'run', entry]);
    expect(result).toEqual({ code: 1, out: '', err: `error: ${at(entry, 2, 28)}: Unexpected ";"\n` });
  });

  it('refuses top-level return and exports in a bundled entry, saying why', async () => {
    const returning = write('src/returning.ts', "import { label } from './format';\nif (!Context.GetRequestEntity()) return;\nContext.Log(label(1));\n");
    expect(await refusal(returning)).toMatch(
      new RegExp(`^${at(returning, 2, 34)}: Top-level return cannot be used inside an ECMAScript module: a bundled connector is a module, where \`return\` cannot end the code`),
    );
    const exporting = write('src/exporting.ts', 'export const x = 1;\nContext.Log(x);\n');
    expect(await refusal(exporting)).toContain('the entry file exports x: a connector is the code of its entry file, which exports nothing');
  });

  it('refuses a Node.js built-in module, naming the import', async () => {
    const entry = write('src/node-api.ts', "import { readFileSync } from 'node:fs';\nimport { createHash } from 'crypto';\nContext.Log(readFileSync('x'), createHash('sha256'));\n");
    const message = await refusal(entry);
    expect(message).toContain(`${at(entry, 1, 30)}: "node:fs" is a Node.js built-in module: connectors run in a sandbox without Node's APIs`);
    expect(message).toContain(`${at(entry, 2, 28)}: "crypto" is a Node.js built-in module`);
    // Also where a package imports one.
    write('node_modules/reads-files/package.json', '{ "name": "reads-files", "main": "index.js" }\n');
    write('node_modules/reads-files/index.js', "const fs = require('fs');\nexports.read = (p) => fs.readFileSync(p);\n");
    const viaPackage = write('src/via-package.ts', "import { read } from 'reads-files';\nContext.Log(read('x'));\n");
    expect(await refusal(viaPackage)).toContain(`${at(join(project, 'node_modules/reads-files/index.js'), 1, 20)}: "fs" is a Node.js built-in module`);
  });

  it('refuses a bundle over the size limit before sending it', async () => {
    write('src/big.ts', `export const big = ${JSON.stringify('x'.repeat(MAX_CONNECTOR_CODE_BYTES))};\n`);
    const entry = write('src/uses-big.ts', "import { big } from './big';\nContext.Log(big.length);\n");
    expect(await refusal(entry)).toMatch(/: the connector code is 1,048,\d{3} bytes, over the limit of 1 MiB \(1,048,576 bytes\); for a bundle, import less/);
    expect(await refusal(write('other.txt', 'x'))).toContain('other.txt: a connector entry file ends in .js, .ts, .mts, .cts, .mjs');
  });
});
