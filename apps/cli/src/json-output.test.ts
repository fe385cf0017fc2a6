import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliAgainstFakeService, FAKE_ADMIN_TOKEN, problem } from './fake-service.fixture';
import { asJsonDocument } from './run-cli';

describe('--json on every command, failures included', () => {
  const cli = cliAgainstFakeService();
  const { gi } = cli;

  it('gi version and gi --version: the release, Node.js and platform, also as JSON', async () => {
    const text = await gi(['--version'], { GI_URL: 'not a url' });
    expect(text).toEqual({ code: 0, out: `gi        dev\nnode      ${process.version}\nplatform  ${process.platform}-${process.arch}\n`, err: '' });
    expect((await gi(['version'])).out).toBe(text.out);
    const asJson = await gi(['version', '--json']);
    expect(JSON.parse(asJson.out)).toEqual({ version: 'dev', node: process.version, platform: `${process.platform}-${process.arch}` });
  });

  it("passes the service's problem document through as it came, with the exit code", async () => {
    const body = { type: 'urn:gi:problem:not-found', title: 'Not Found', status: 404, detail: 'bot acme has no integration ack', traceId: 't1' };
    cli.service.on('GET', '/admin/bots/acme/integrations/ack', problem(404, body.title, body.detail, { type: body.type, traceId: 't1' }));
    const result = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ack', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out)).toEqual({ ...body, exitCode: 1 });
    expect(result.err).toBe('error: Not Found: bot acme has no integration ack\n');
  });

  it('reports a usage error as a problem document with exit code 2', async () => {
    const result = await gi(['--json', 'token', 'create']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.out)).toEqual({
      type: 'urn:gi:problem:cli-usage',
      title: 'Invalid command line',
      status: 400,
      detail: 'missing --bot',
      help: 'gi token create --help',
      exitCode: 2,
    });
    expect((await gi(['--json', 'nonsense'])).out).toContain('"detail": "unknown command \\"nonsense\\""');
  });

  it('reports invalid settings, an unreachable service and a local failure with their own types', async () => {
    const settings = await gi(['--json', 'entity', 'list', '--bot', 'acme'], { GI_URL: 'ftp://x' });
    expect(JSON.parse(settings.out)).toMatchObject({ type: 'urn:gi:problem:cli-settings', status: 400, exitCode: 2 });
    expect(settings.code).toBe(2);

    const unreachable = await gi(['--json', 'entity', 'list', '--bot', 'acme'], { GI_URL: 'http://127.0.0.1:9', GI_ADMIN_TOKEN: FAKE_ADMIN_TOKEN });
    expect(JSON.parse(unreachable.out)).toMatchObject({ type: 'urn:gi:problem:cli-unreachable', title: 'Service unreachable', status: 503, exitCode: 1 });
    expect(unreachable.code).toBe(1);

    const local = await gi(['--json', 'connector', 'run', '/nonexistent/x.js']);
    expect(JSON.parse(local.out)).toMatchObject({ type: 'urn:gi:problem:cli-failed', title: 'Command failed', status: 422, exitCode: 1 });
  });

  it('keeps what a command printed before it failed, as the member output of the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-json-'));
    try {
      const file = join(dir, 'raise.js');
      writeFileSync(file, "Context.Log('about to refuse');\nContext.RaiseError('Refused', 'no order id');\n");
      const result = await gi(['--json', 'connector', 'run', file]);
      expect(result.code).toBe(1);
      const document = JSON.parse(result.out);
      expect(document).toMatchObject({ type: 'urn:gi:problem:cli-failed', status: 422, exitCode: 1, detail: expect.stringContaining('RaiseError: Refused') });
      expect(JSON.stringify(document.output)).toContain('about to refuse');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('help with --json is a document too; a missing command is a usage problem', async () => {
    const help = await gi(['--json', 'help', 'token', 'create']);
    expect(help.code).toBe(0);
    expect(JSON.parse(help.out).help).toMatch(/^Usage: gi token create --bot BOT/);
    const none = await gi(['--json']);
    expect(none.code).toBe(2);
    expect(JSON.parse(none.out)).toMatchObject({ type: 'urn:gi:problem:cli-usage', detail: 'no command given' });
  });

  it('prints one document even when a command wrote text or nothing', () => {
    expect(JSON.parse(asJsonDocument('{"a": 1}\n'))).toEqual({ a: 1 });
    expect(JSON.parse(asJsonDocument('done\n'))).toEqual({ output: 'done' });
    expect(JSON.parse(asJsonDocument(''))).toEqual({});
  });
});
