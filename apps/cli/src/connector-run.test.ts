import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureIo } from './fake-service.fixture';
import { runCli } from './run-cli';

const noService = async () => {
  throw new Error('not in tests');
};
const EXAMPLES = join(__dirname, '../../../examples/connectors');

describe('gi connector run (local, no server)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-run-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function gi(argv: string[]) {
    const io = captureIo();
    const code = await runCli(argv, io, {}, noService);
    return { code, out: io.stdout(), err: io.stderr() };
  }
  const write = (name: string, code: string) => {
    const file = join(dir, name);
    writeFileSync(file, code);
    return file;
  };

  it('runs a connector against a request built with the service\'s entity rules', async () => {
    const file = write('echo.js', `
      const e = Context.GetRequestEntity();
      Context.Log('seen', e.RequestParams);
      e.ResponseBody = { params: e.RequestParams, headers: e.RequestHeaders, body: e.RequestBody };
      Context.SetResponseEntity(e);`);
    const run = await gi(['connector', 'run', file, '--body', '{"orderId":7}', '--query', 'a=1', '--query', 'a=2', '--header', 'X-Trace: t1']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ params: 'a=1&a=2', headers: 'Content-Type=application%2Fjson&X-Trace=t1', body: { orderId: 7 } });
    expect(run.err).toContain('[info] seen a=1&a=2');
    expect(run.err).toMatch(/duration \d+/);
  });

  it('runs the shipped ack example', async () => {
    const run = await gi(['connector', 'run', join(EXAMPLES, 'ack.js'), '--body', '{"orderId": 42}']);
    expect([run.code, JSON.parse(run.out)]).toEqual([0, { Status: 'Accepted', Message: 'order 42' }]);
  });

  it('renders the reply as the media type asked for', async () => {
    const file = write('text.js', 'const e = Context.GetRequestEntity(); e.ResponseBody = { hi: 1 }; Context.SetResponseEntity(e);');
    const run = await gi(['connector', 'run', file, '--response-content-type', 'application/xml']);
    expect(run.out.trim()).toBe('<?xml version="1.0" encoding="UTF-8"?><hi>1</hi>');
  });

  it('exits 1 with the title and message of RaiseError', async () => {
    const file = write('raise.js', 'Context.RaiseError("Bad order", "no lines");');
    const run = await gi(['connector', 'run', file]);
    expect(run.code).toBe(1);
    expect(run.err).toContain('RaiseError: Bad order: no lines (the caller would get 422)');
  });

  it('reports compile errors as file:line:column', async () => {
    const file = write('broken.js', 'const a = 1;\nconst b = ;');
    const run = await gi(['connector', 'run', file]);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:\\d+: `));
  });

  it('stops a connector at its timeout', async () => {
    const file = write('loop.js', 'while (true) {}');
    const run = await gi(['connector', 'run', file, '--timeout', '1']);
    expect(run.code).toBe(1);
    expect(run.err).toContain('timed out');
  });

  it('refuses bodies the service would refuse', async () => {
    const malformed = await gi(['connector', 'run', join(EXAMPLES, 'ack.js'), '--body', '{"orderId":']);
    expect([malformed.code, malformed.err]).toEqual([2, expect.stringContaining('not valid JSON')]);
    const polluting = await gi(['connector', 'run', join(EXAMPLES, 'ack.js'), '--body', '{"__proto__":{"x":1}}']);
    expect([polluting.code, polluting.err]).toEqual([1, expect.stringContaining('the request is not valid')]);
  });
});
