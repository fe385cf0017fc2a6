import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliEnv } from '@gi/config';
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

  async function gi(argv: string[], options: { stdin?: string; env?: CliEnv } = {}) {
    const io = captureIo({ stdin: options.stdin });
    const code = await runCli(argv, io, options.env ?? {}, noService);
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

  it('gives the connector secrets from a dotenv or JSON file and the environment (which wins), redacted from what it prints', async () => {
    const file = write('secrets.js', `
      Context.Log('using ' + Context.Secrets.API_KEY);
      Context.SetResponseEntity({ ResponseBody: { key: Context.Secrets.API_KEY, other: Context.Secrets.OTHER, names: Object.keys(Context.Secrets).sort() } });`);
    const dotenv = write('local.env', '# local secrets\nAPI_KEY="from-the-file-123"\n\nOTHER=plain value\n');
    const fromFile = await gi(['connector', 'run', file, '--secrets-file', dotenv]);
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.out)).toEqual({ key: 'from-the-file-123', other: 'plain value', names: ['API_KEY', 'OTHER'] });
    expect(fromFile.err).toContain('[info] using [secret]');
    expect(fromFile.err).not.toContain('from-the-file-123');

    const jsonFile = write('local.json', '{"API_KEY": "from-json-4567"}');
    const env = { variables: { API_KEY: 'from-the-env-890' } };
    const both = await gi(['connector', 'run', file, '--secrets-file', jsonFile, '--secret-env', 'API_KEY'], { env });
    expect(JSON.parse(both.out)).toMatchObject({ key: 'from-the-env-890', names: ['API_KEY'] });

    expect(await gi(['connector', 'run', file, '--secret-env', 'MISSING'], { env })).toMatchObject({ code: 1, err: expect.stringContaining('--secret-env MISSING: the environment variable MISSING is not set') });
    const bad = write('bad.env', 'lower=x\n');
    expect(await gi(['connector', 'run', file, '--secrets-file', bad])).toMatchObject({ code: 1, err: expect.stringContaining(`--secrets-file ${bad}:1: A secret name must be`) });
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

  describe('durable calls', () => {
    const campaign = () =>
      write(
        'campaign.js',
        `let calls = 0;
         const sent = [];
         for (const to of ['a', 'b']) sent.push(await Context.Step('send', ({ attempt }) => { calls++; if (attempt < 2) throw new Error('busy'); return to; }, { retries: { limit: 2, delay: '1 hour' } }));
         await Context.Sleep('between batches', '2 days');
         const report = await Context.WaitForEvent('report', { timeout: '3 days' });
         const again = await Context.WaitForEvent('report', { timeout: '3 days' });
         Context.SetResponseEntity({ ResponseBody: { sent, calls, report, again } });`,
      );

    it('runs steps, and with --skip-sleeps ends sleeps, retry delays and event waits at once, waits answering the --event of their name in order', async () => {
      const payload = write('report.json', '{"delivered": 41}');
      const run = await gi(['connector', 'run', campaign(), '--skip-sleeps', '--event', `report=@${payload}`, '--event', 'other=1', '--event', 'report="second"']);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.out)).toEqual({ sent: ['a', 'b'], calls: 4, report: { delivered: 41 }, again: 'second' });
    });

    it('really waits without --skip-sleeps: a sleep longer than the run may last times it out', async () => {
      const run = await gi(['connector', 'run', write('nap.js', "await Context.Sleep('nap', '1 hour');"), '--timeout', '1']);
      expect([run.code, run.err]).toEqual([1, expect.stringContaining('timed out: The connector did not finish within its time limit of 1000 ms.')]);
    });

    it.each([
      ['no name', ['=1'], 'error: --event "=1" must look like name=<JSON> or name=@file'],
      ['no equals sign', ['report'], 'error: --event "report" must look like name=<JSON> or name=@file'],
      ['a payload that is not JSON', ['report=hello'], "error: --event report: the payload is not valid JSON"],
    ])('refuses an --event with %s', async (_case, event, message) => {
      const run = await gi(['connector', 'run', campaign(), '--event', ...event]);
      expect(run.code).toBe(2);
      expect(run.err).toContain(message);
    });

    it('says clearly when an --event file cannot be read', async () => {
      const run = await gi(['connector', 'run', campaign(), '--event', `report=@${join(dir, 'none.json')}`]);
      expect([run.code, run.err]).toEqual([1, `error: --event report: cannot read ${join(dir, 'none.json')}: no such file\n`]);
    });
  });

  describe('against a mock API on this machine', () => {
    let mock: Server;
    let port: number;
    const seen: Array<{ url: string; body: string }> = [];
    beforeAll(async () => {
      mock = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => {
          seen.push({ url: req.url ?? '', body });
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ reference: 'R-1' }));
        });
      });
      await new Promise<void>((resolve) => mock.listen(0, '127.0.0.1', resolve));
      port = (mock.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => mock.close(() => resolve())));

    const callApi = join(EXAMPLES, 'call-api.js');
    const order = () => JSON.stringify({ orderId: 5, apiBase: `http://127.0.0.1:${port}` });

    it('is refused without --trust-loopback, with a message naming the flag', async () => {
      const run = await gi(['connector', 'run', callApi, '--body', order(), '--allowed-host', '127.0.0.1']);
      expect(run.code).toBe(1);
      expect(run.err).toContain('The address 127.0.0.1 is private, loopback or link-local and cannot be requested.');
      expect(run.err).toContain('run gi connector run with --trust-loopback');
    });

    it('is reached with --trust-loopback, the allowed hosts still applying', async () => {
      seen.length = 0;
      const run = await gi(['connector', 'run', callApi, '--body', order(), '--allowed-host', '127.0.0.1', '--trust-loopback']);
      expect([run.code, JSON.parse(run.out)]).toEqual([0, { Status: 'Forwarded', Reference: 'R-1' }]);
      expect(seen).toEqual([{ url: '/orders', body: '{"orderId":5}' }]);
      const unlisted = await gi(['connector', 'run', callApi, '--body', order(), '--allowed-host', 'api.example.com', '--trust-loopback']);
      expect(unlisted.code).toBe(1);
      expect(unlisted.err).toContain(`The host '127.0.0.1:${port}' is not in this integration's allowed hosts.`);
      expect(seen).toHaveLength(1);
    });

    it('honours CONNECTOR_TRUSTED_ADDRESSES as the service does', async () => {
      const run = await gi(['connector', 'run', callApi, '--body', order(), '--allowed-host', '127.0.0.1'], { env: { CONNECTOR_TRUSTED_ADDRESSES: '::ffff:127.0.0.1' } });
      expect([run.code, JSON.parse(run.out)]).toEqual([0, { Status: 'Forwarded', Reference: 'R-1' }]);
      const bad = await gi(['connector', 'run', callApi], { env: { CONNECTOR_TRUSTED_ADDRESSES: 'localhost' } });
      expect([bad.code, bad.err]).toEqual([2, expect.stringContaining('CONNECTOR_TRUSTED_ADDRESSES: comma-separated IP addresses')]);
    });
  });

  describe('request bodies and saved sample requests', () => {
    const echo = () =>
      write(
        'echo-all.js',
        `const e = Context.GetRequestEntity();
         Context.SetResponseEntity({ ResponseBody: { params: e.RequestParams, headers: e.RequestHeaders, body: e.RequestBody, raw: Context.GetRawRequestBody() } });`,
      );

    it('reads the body from stdin with --body-file -, as JSON unless --content-type says otherwise', async () => {
      const json = await gi(['connector', 'run', echo(), '--body-file', '-'], { stdin: '{"orderId": 9}' });
      expect([json.code, JSON.parse(json.out).body]).toEqual([0, { orderId: 9 }]);
      const text = await gi(['connector', 'run', echo(), '--body-file', '-', '--content-type', 'text/plain'], { stdin: 'plain words' });
      expect(JSON.parse(text.out)).toMatchObject({ body: 'plain words', headers: 'Content-Type=text%2Fplain' });
    });

    it('says clearly when --body-file cannot be read', async () => {
      const missing = await gi(['connector', 'run', echo(), '--body-file', join(dir, 'nope.json')]);
      expect([missing.code, missing.err]).toEqual([1, `error: --body-file: cannot read ${join(dir, 'nope.json')}: no such file\n`]);
      const directory = await gi(['connector', 'run', echo(), '--body-file', dir]);
      expect(directory.err).toBe(`error: --body-file: cannot read ${dir}: it is a directory\n`);
    });

    it('runs a saved sample request', async () => {
      const sample = write(
        'order.json',
        JSON.stringify({ query: { source: 'crm', tag: ['a', 'b'] }, headers: { 'X-Trace': 't1', 'X-Tenant': 'acme' }, body: { orderId: 42 } }),
      );
      const run = await gi(['connector', 'run', echo(), '--request', sample]);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.out)).toEqual({
        params: 'source=crm&tag=a&tag=b',
        headers: 'Content-Type=application%2Fjson&X-Trace=t1&X-Tenant=acme',
        body: { orderId: 42 },
        raw: '{"orderId":42}',
      });
    });

    it('sends a string body exactly as given, and a query string as written', async () => {
      const sample = write('raw.json', JSON.stringify({ query: '?a=1&a=2&b=', contentType: 'application/xml', body: '<order id="7"/>' }));
      const run = await gi(['connector', 'run', echo(), '--request', sample]);
      expect(JSON.parse(run.out)).toMatchObject({ params: 'a=1&a=2&b=', headers: 'Content-Type=application%2Fxml', raw: '<order id="7"/>' });
    });

    it('lets the command line override the sample: the body with its type, and each query or header name', async () => {
      const sample = write(
        'base.json',
        JSON.stringify({ query: 'source=crm&tag=a&tag=b', headers: { 'X-Trace': 't1', 'X-Tenant': 'acme' }, contentType: 'application/xml', body: '<a/>' }),
      );
      const run = await gi(['connector', 'run', echo(), '--request', sample, '--body', '{"orderId":1}', '--query', 'tag=c', '--header', 'x-trace: t2']);
      expect(JSON.parse(run.out)).toEqual({
        params: 'source=crm&tag=c',
        headers: 'Content-Type=application%2Fjson&X-Tenant=acme&x-trace=t2',
        body: { orderId: 1 },
        raw: '{"orderId":1}',
      });
      const typed = await gi(['connector', 'run', echo(), '--request', sample, '--content-type', 'text/plain']);
      expect(JSON.parse(typed.out)).toMatchObject({ body: '<a/>', headers: 'Content-Type=text%2Fplain&X-Trace=t1&X-Tenant=acme' });
      const piped = await gi(['connector', 'run', echo(), '--request', sample, '--body-file', '-'], { stdin: '{"from":"stdin"}' });
      expect(JSON.parse(piped.out)).toMatchObject({ body: { from: 'stdin' }, headers: 'Content-Type=application%2Fjson&X-Trace=t1&X-Tenant=acme' });
    });

    it.each([
      ['not JSON', '{"body": ', 'not valid JSON'],
      ['not an object', '[1, 2]', 'must be a JSON object with the fields query, headers, contentType, body'],
      ['a misspelt field', '{"header": {"X-A": "1"}}', '"header": not a field of a sample request (query, headers, contentType, body)'],
      ['a bad query', '{"query": 5}', 'query must be a query string such as "a=1&b=2" or an object of names to values'],
      ['a header that is not a string', '{"headers": {"X-A": 1}}', 'headers.X-A must be a string'],
      ['a bad header name', '{"headers": {"X A": "1"}}', 'headers.X A is not a valid header name'],
      ['a Content-Type header', '{"headers": {"content-type": "text/plain"}}', 'headers.content-type goes in the contentType field'],
      ['an empty contentType', '{"contentType": ""}', 'contentType must not be empty'],
    ])('refuses a sample request with %s, naming the field', async (_what, text, message) => {
      const sample = write('bad.json', text);
      const run = await gi(['connector', 'run', echo(), '--request', sample]);
      expect(run.code).toBe(2);
      expect(run.err).toContain(`error: --request ${sample}: ${message}`);
      expect(run.err).toContain("(see 'gi connector run --help')");
    });

    it('says clearly when the sample request cannot be read', async () => {
      const missing = await gi(['connector', 'run', echo(), '--request', join(dir, 'none.json')]);
      expect([missing.code, missing.err]).toEqual([1, `error: --request: cannot read ${join(dir, 'none.json')}: no such file\n`]);
      if (process.getuid?.() !== 0) {
        const locked = write('locked.json', '{}');
        chmodSync(locked, 0o000);
        expect((await gi(['connector', 'run', echo(), '--request', locked])).err).toContain('permission denied');
      }
    });
  });
});
