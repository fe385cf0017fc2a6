import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLI, ROOT, startService } from './service-process';
import type { ServiceProcess } from './service-process';

interface Run {
  code: number;
  out: string;
  err: string;
}

/**
 * The README flow through the built `gi` binary against the real embedded service. The service makes
 * its own admin token (ADMIN_TOKEN unset), and the CLI finds it the way a user's would: in DATA_DIR.
 */
describe('gi command line (built CLI against the embedded service)', () => {
  let service: ServiceProcess;
  let token: string;
  let tokenId: string;
  let asyncId: string;

  const gi = (...args: string[]) =>
    new Promise<Run>((resolve) => {
      const env = { PATH: process.env.PATH, GI_URL: service.baseUrl, DATA_DIR: service.dataDir };
      execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env, timeout: 30_000 }, (error, out, err) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, out, err });
      });
    });

  beforeAll(async () => {
    service = await startService({ env: { ADMIN_TOKEN: '' } });
  });
  afterAll(() => service.dispose());

  it('defines an entity', async () => {
    const run = await gi('entity', 'create', 'acme', 'Order', '--field', 'CustomerId');
    expect(run).toEqual({ code: 0, out: 'Entity Order of bot acme: RequestParams, RequestBody, RequestHeaders, ResponseBody, RequestFiles, CustomerId\n', err: '' });
  });

  it('deploys the example connector and reports a compile error by file, line and column', async () => {
    const deployed = await gi('connector', 'deploy', 'examples/connectors/ack.js', '--bot', 'acme', '--integration', 'ack', '--entity', 'Order');
    expect(deployed).toMatchObject({ code: 0, out: expect.stringMatching(/^Deployed ack version 1 on bot acme: entity Order, pool default/) });

    const bad = join(service.dataDir, 'bad.js');
    writeFileSync(bad, 'const entity = Context.GetRequestEntity();\nconst x = ;\n');
    const refused = await gi('connector', 'deploy', bad, '--bot', 'acme', '--integration', 'bad', '--entity', 'Order');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(new RegExp(`^error: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:\\d+: .+\\n$`));
  });

  it('creates a token: the token alone on stdout, its id and expiry on stderr', async () => {
    const run = await gi('token', 'create', '--bot', 'acme', '--ttl', '3600', '--label', 'e2e');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^\S+\n$/);
    const match = /^token (\S+) for bot acme, expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n$/.exec(run.err);
    expect(match).not.toBeNull();
    token = run.out.trim();
    tokenId = (match as RegExpExecArray)[1];
  });

  it('shows the webhook configuration', async () => {
    const run = await gi('webhook', '--bot', 'acme');
    expect(run.code).toBe(0);
    expect(run.out).toContain(`base URL  ${service.baseUrl}`);
    expect(run.out).toContain(`sync           ${service.baseUrl}/api/Platform/acme/Order/ack/GenericIntegration`);
    expect(run.out).toContain(`event          ${service.baseUrl}/api/Platform/acme/GenericIntegrationEvent?invocationId={invocationId}&name={name}`);
  });

  it('invokes synchronously with a given token and with one it mints itself', async () => {
    const given = await gi('invoke', '--bot', 'acme', '--integration', 'ack', '--body', '{"orderId":42}', '--token', token);
    expect(given).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(given.out)).toEqual({ Status: 'Accepted', Message: 'order 42' });

    const minted = await gi('invoke', '--bot', 'acme', '--entity', 'Order', '--integration', 'ack', '--body', '{"orderId":7}');
    expect(JSON.parse(minted.out)).toEqual({ Status: 'Accepted', Message: 'order 7' });
  });

  it('deploys a TypeScript project with a local import and a package, runs it, and shows the files as written', async () => {
    const project = mkdtempSync(join(tmpdir(), 'gi-e2e-ts-'));
    try {
      const write = (path: string, content: string) => {
        mkdirSync(dirname(join(project, path)), { recursive: true });
        writeFileSync(join(project, path), content);
      };
      write('package.json', '{ "name": "orders", "private": true }\n');
      write('node_modules/tiny-case/package.json', '{ "name": "tiny-case", "version": "1.0.0", "main": "index.js" }\n');
      write('node_modules/tiny-case/index.js', 'exports.upper = (text) => String(text).toUpperCase();\n');
      write('src/label.ts', 'export const label = (id: number): string => `order ${id}`;\n');
      const entry = [
        "import { upper } from 'tiny-case';",
        "import { label } from './label';",
        'const entity = Context.GetRequestEntity();',
        "if (!entity) Context.RaiseError('Missing entity', 'null');",
        'const id: number = await Promise.resolve(entity.RequestBody.orderId);',
        "entity.ResponseBody = { Status: 'Accepted', Message: upper(label(id)) };",
        'Context.SetResponseEntity(entity);',
        '',
      ].join('\n');
      write('src/index.ts', entry);

      const deployed = await gi('connector', 'deploy', join(project, 'src/index.ts'), '--bot', 'acme', '--integration', 'ts', '--entity', 'Order');
      expect(deployed).toMatchObject({ code: 0, out: expect.stringMatching(/^Deployed ts version 1 on bot acme/) });
      const invoked = await gi('invoke', '--bot', 'acme', '--entity', 'Order', '--integration', 'ts', '--body', '{"orderId":42}');
      expect(invoked).toMatchObject({ code: 0, err: '' });
      expect(JSON.parse(invoked.out)).toEqual({ Status: 'Accepted', Message: 'ORDER 42' });

      const shown = await gi('connector', 'show', '--bot', 'acme', '--integration', 'ts');
      expect(shown.out).toContain('sources        src/index.ts, src/label.ts (bundled; --bundle shows the bundle)');
      expect(shown.out).toContain(`--- src/index.ts ---\n${entry}--- src/label.ts ---\nexport const label = (id: number): string => \`order \${id}\`;\n`);
      expect(shown.out).not.toContain('exports.upper');
      const bundle = await gi('connector', 'show', '--bot', 'acme', '--integration', 'ts', '--bundle');
      expect(bundle.out).toContain('exports.upper = (text) => String(text).toUpperCase();');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('invokes asynchronously: the invocationId first, then the final body', async () => {
    const run = await gi('invoke', '--bot', 'acme', '--integration', 'ack', '--async', '--body', '{"orderId":43}');
    expect(run.code).toBe(0);
    const [id, body, rest] = run.out.split('\n');
    expect(id).toMatch(/^\S+$/);
    expect(JSON.parse(body)).toEqual({ Status: 'Accepted', Message: 'order 43' });
    expect(rest).toBe('');
    asyncId = id;
  });

  it('prints the error of a failed run, sync or async, and exits 1', async () => {
    const strict = join(service.dataDir, 'strict.js');
    writeFileSync(strict, 'const entity = Context.GetRequestEntity();\nif (!entity.RequestBody || !entity.RequestBody.orderId) Context.RaiseError("Rejected", "An order needs an orderId");\n');
    expect((await gi('connector', 'deploy', strict, '--bot', 'acme', '--integration', 'strict', '--entity', 'Order')).code).toBe(0);

    const sync = await gi('invoke', '--bot', 'acme', '--integration', 'strict', '--body', '{}');
    expect(sync.code).toBe(1);
    expect(sync.out).toBe('');
    expect(sync.err).toMatch(/^error: Rejected: An order needs an orderId \(invocation \S+\)\n$/);

    const async = await gi('invoke', '--bot', 'acme', '--integration', 'strict', '--body', '{}', '--async');
    expect(async.code).toBe(1);
    expect(async.out).toMatch(/^\S+\n$/);
    expect(async.err).toMatch(/error: Rejected: An order needs an orderId \(invocation \S+\)\n$/);
  });

  it('revokes the token, after which calls with it are refused', async () => {
    expect(await gi('token', 'revoke', '--bot', 'acme', tokenId)).toEqual({ code: 0, out: `Revoked token ${tokenId} of bot acme\n`, err: '' });
    const refused = await gi('invoke', '--bot', 'acme', '--integration', 'ack', '--body', '{"orderId":1}', '--token', token);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^error: .+\n$/);
    expect(refused.err).not.toContain(token);

    const listed = await gi('token', 'list', '--bot', 'acme');
    expect(listed.out).toMatch(new RegExp(`^${tokenId}\\s+revoked\\s`, 'm'));
  });

  it('lists the invocations and shows one with its outcome', async () => {
    const listed = await gi('invocations', 'list', '--bot', 'acme', '--json');
    expect(listed.code).toBe(0);
    const invocations = JSON.parse(listed.out) as Array<{ id: string; status: string; mode: string }>;
    expect(invocations.length).toBeGreaterThanOrEqual(5);
    expect(invocations).toContainEqual(expect.objectContaining({ id: asyncId, status: 'Completed', mode: 'async' }));

    const table = await gi('invocations', 'list', '--bot', 'acme', '--status', 'Completed');
    expect(table.out.split('\n')[0]).toMatch(/^ID\s+INTEGRATION\s+ENTITY\s+MODE\s+STATUS/);

    const shown = await gi('invocations', 'show', '--bot', 'acme', asyncId);
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/^status\s+Completed$/m);
    expect(shown.out).toContain('"Message": "order 43"');
  });

  it('sends a job its event through the public event URL with a token it mints: kept before the job waits for it, refused once it ended', async () => {
    const slow = join(service.dataDir, 'slow.js');
    writeFileSync(slow, 'await new Promise((resolve) => setTimeout(resolve, 60000));\n');
    expect((await gi('connector', 'deploy', slow, '--bot', 'acme', '--integration', 'slow', '--entity', 'Order')).code).toBe(0);
    const minted = (await gi('token', 'create', '--bot', 'acme', '--ttl', '600')).out.trim();
    const started = await fetch(`${service.baseUrl}/api/Platform/acme/Order/slow/GenericIntegration?asyncResponse=true`, { method: 'POST', headers: { authorization: `Bearer ${minted}` } });
    const { invocationId } = (await started.json()) as { invocationId: string };

    // Running, and not waiting for it yet: the event is kept for the job's next wait of that name.
    const kept = await gi('invocations', 'event', '--bot', 'acme', invocationId, '--name', 'approved', '--body', '{"by": "ada"}');
    expect(kept).toEqual({ code: 0, out: `Event "approved" kept for invocation ${invocationId} of bot acme: it does not wait for it yet, its next wait for "approved" takes it\n`, err: '' });
    expect(await gi('invocations', 'steps', '--bot', 'acme', invocationId)).toEqual({ code: 0, out: '', err: `No steps: invocation ${invocationId} has journalled none (Context.Step, Context.Sleep, Context.WaitForEvent)\n` });
    expect((await gi('invocations', 'list', '--bot', 'acme', '--status', 'Waiting')).err).toBe('No invocations for bot acme with status Waiting\n');

    expect((await gi('invocations', 'cancel', '--bot', 'acme', invocationId)).code).toBe(0);
    const refused = await gi('--json', 'invocations', 'event', '--bot', 'acme', invocationId, '--name', 'approved', '--body', '{}');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out)).toMatchObject({ type: 'urn:gi:problem:already-finished', status: 409, invocationId, exitCode: 1 });
    const unknown = await gi('invocations', 'event', '--bot', 'acme', 'no-such-invocation', '--name', 'approved', '--body', '{}');
    expect(unknown).toMatchObject({ code: 1, err: expect.stringMatching(/^error: .*no-such-invocation.*\n$/) });
  });

  it('fails with one clear line, never showing the admin token', async () => {
    const unknown = await gi('connector', 'show', '--bot', 'acme', '--integration', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^error: .*nope.*\n$/);
    const usage = await gi('token', 'create');
    expect(usage).toEqual({ code: 2, out: '', err: "error: missing --bot (see 'gi token create --help')\n" });
  });

  it('prints its release with --version, as package.json names it', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const text = await gi('--version');
    expect(text).toEqual({ code: 0, out: expect.stringMatching(new RegExp(`^gi +${version.replace(/\./g, '\\.')}\nnode +v\\d+`)), err: '' });
    const asJson = await gi('version', '--json');
    expect(JSON.parse(asJson.out)).toEqual({ version, node: expect.stringMatching(/^v\d+\./), platform: `${process.platform}-${process.arch}` });
  });

  it("with --json, fails with the service's problem document on stdout and the same exit code", async () => {
    const failed = await gi('--json', 'connector', 'show', '--bot', 'acme', '--integration', 'nope');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.out)).toMatchObject({ type: expect.stringMatching(/^urn:gi:problem:/), title: expect.any(String), status: 404, detail: expect.stringContaining('nope'), exitCode: 1 });
    expect(failed.err).toMatch(/^error: .*nope.*\n$/);
  });
});
