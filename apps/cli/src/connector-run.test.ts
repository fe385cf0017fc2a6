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

  it('gives the connector the body exactly as given for GetRawRequestBody, and shows the lines logged before and after a wait in order', async () => {
    const file = write('raw.js', `
      Context.Log('before the wait');
      await new Promise((resolve) => setTimeout(resolve, 700));
      Context.Log('after it');
      Context.SetResponseEntity({ ResponseBody: { raw: Context.GetRawRequestBody(), parsed: Context.GetRequestEntity().RequestBody } });`);
    const run = await gi(['connector', 'run', file, '--body', '{ "orderId" :  7 }']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ raw: '{ "orderId" :  7 }', parsed: { orderId: 7 } });
    expect(run.err.split('\n').slice(0, 2)).toEqual(['[info] before the wait', '[info] after it']);
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

  it('refuses an --allowed-host the service would refuse at deploy', async () => {
    const run = await gi(['connector', 'run', join(EXAMPLES, 'ack.js'), '--allowed-host', 'https://api.example.com']);
    expect(run.code).toBe(1);
    expect(run.err).toContain("--allowed-host: 'https://api.example.com' has a scheme: write the host alone, without https://");
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

  it('runs under the limits given as options, as a deployed integration would', async () => {
    const bomb = write('bomb.js', 'const a = []; for (;;) a.push(new Uint8Array(1 << 20));');
    const memory = await gi(['connector', 'run', bomb, '--memory-mib', '16']);
    expect([memory.code, memory.err]).toEqual([1, expect.stringContaining('failed: The connector used more than its memory limit of 16 MiB (limits.memoryMiB).')]);
    const spin = write('spin.js', 'for (;;) {}');
    const cpu = await gi(['connector', 'run', spin, '--cpu-seconds', '1', '--timeout', '60']);
    expect([cpu.code, cpu.err]).toEqual([1, expect.stringContaining('CPU time limit of 1 s (limits.cpuSeconds)')]);
    const chatty = write('chatty.js', "for (;;) Context.Log('x'.repeat(100));");
    const log = await gi(['connector', 'run', chatty, '--log-kib', '1']);
    expect([log.code, log.err]).toEqual([1, expect.stringContaining('log limit of 1 KiB')]);
    const bad = await gi(['connector', 'run', spin, '--pending-calls', '0']);
    expect([bad.code, bad.err]).toEqual([2, expect.stringContaining('--pending-calls must be a whole number from 1 to 64, got "0"')]);
  });

  it('refuses bodies the service would refuse', async () => {
    const malformed = await gi(['connector', 'run', join(EXAMPLES, 'ack.js'), '--body', '{"orderId":']);
    expect([malformed.code, malformed.err]).toEqual([2, expect.stringContaining('not valid JSON')]);
    const polluting = await gi(['connector', 'run', join(EXAMPLES, 'ack.js'), '--body', '{"__proto__":{"x":1}}']);
    expect([polluting.code, polluting.err]).toEqual([1, expect.stringContaining('the request is not valid')]);
  });
});
