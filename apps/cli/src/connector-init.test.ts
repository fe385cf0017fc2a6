import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureIo } from './fake-service.fixture';
import { runCli } from './run-cli';

const noService = async () => {
  throw new Error('not in tests');
};

describe('gi connector init', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-init-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function gi(argv: string[]) {
    const io = captureIo();
    const code = await runCli(argv, io, {}, noService);
    return { code, out: io.stdout(), err: io.stderr() };
  }

  it('writes a starter project that gi connector run runs against its sample request', async () => {
    const project = join(dir, 'My Orders');
    const init = await gi(['connector', 'init', project]);
    expect(init.code).toBe(0);
    expect(init.out).toContain(`Next: cd ${project} && gi connector run src/index.ts --request samples/order.json`);
    for (const file of ['src/index.ts', 'src/order.ts', 'context.d.ts', 'tsconfig.json', 'package.json', 'samples/order.json', 'README.md']) {
      expect(existsSync(join(project, file))).toBe(true);
    }
    expect(readFileSync(join(project, 'context.d.ts'), 'utf8')).toBe(readFileSync(join(__dirname, '../../../examples/connectors/context.d.ts'), 'utf8'));
    const tsconfig = JSON.parse(readFileSync(join(project, 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions).toMatchObject({ noEmit: true, strict: true, lib: ['es2023'] });
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'my-orders', scripts: { typecheck: 'tsc --noEmit' } });

    const run = await gi(['connector', 'run', join(project, 'src/index.ts'), '--request', join(project, 'samples/order.json')]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ Status: 'Accepted', Message: 'order 42 for Ada: 1 item(s), 7.00', Total: 7, Forwarded: null });
    expect(run.err).toContain('[info] accepted order 42 for Ada: 1 item(s), 7.00 from shop');
    // The starter's own validation answers 422 through RaiseError.
    const invalid = await gi(['connector', 'run', join(project, 'src/index.ts'), '--body', '{"orderId": "x"}']);
    expect(invalid).toMatchObject({ code: 1, err: expect.stringContaining('RaiseError: Invalid order: orderId must be a number.') });
  });

  it('refuses a directory that is not empty, and writes nothing', async () => {
    const taken = join(dir, 'taken');
    await gi(['connector', 'init', taken]);
    writeFileSync(join(taken, 'src/index.ts'), 'mine');
    expect(await gi(['connector', 'init', taken])).toEqual({
      code: 1,
      out: '',
      err: `error: ${taken} is not empty: gi connector init writes a new project into an empty or new directory\n`,
    });
    expect(readFileSync(join(taken, 'src/index.ts'), 'utf8')).toBe('mine');
  });
});
