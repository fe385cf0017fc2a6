import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliEnv } from '@gi/config';
import { captureIo, FakeService, problem } from './fake-service.fixture';
import { runCli } from './run-cli';

const ADMIN = 'admin-secret-0123456789abcdef';
const noUp = async () => {
  throw new Error('not in tests');
};

describe('admin commands against the control API', () => {
  let service: FakeService;
  let dir: string;
  beforeAll(async () => {
    service = await FakeService.start();
    dir = mkdtempSync(join(tmpdir(), 'gi-cli-'));
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => service.reset());

  async function gi(argv: string[], env: CliEnv = { GI_URL: service.url, GI_ADMIN_TOKEN: ADMIN }) {
    const io = captureIo();
    const code = await runCli(argv, io, env, noUp);
    const result = { code, out: io.stdout(), err: io.stderr() };
    expect(result.out + result.err).not.toContain(ADMIN);
    return result;
  }

  describe('entity create', () => {
    it('defines the entity with its extra fields, as the admin', async () => {
      service.on('PUT', '/admin/bots/acme/entities/Order', (req) => ({
        status: 200,
        json: { botId: 'acme', name: 'Order', fields: ['RequestParams', 'RequestBody', 'RequestHeaders', 'ResponseBody', 'RequestFiles', ...JSON.parse(req.body).fields], updatedAt: 1 },
      }));
      const result = await gi(['entity', 'create', 'acme', 'Order', '--field', 'CustomerId', '--field', 'Total']);
      expect(result).toEqual({
        code: 0,
        out: 'Entity Order of bot acme: RequestParams, RequestBody, RequestHeaders, ResponseBody, RequestFiles, CustomerId, Total\n',
        err: '',
      });
      const [request] = service.requestsTo('PUT', '/admin/bots/acme/entities/Order');
      expect(request.headers.authorization).toBe(`Bearer ${ADMIN}`);
      expect(request.headers['content-type']).toBe('application/json');
      expect(JSON.parse(request.body)).toEqual({ fields: ['CustomerId', 'Total'] });
    });

    it('prints the service reply with --json', async () => {
      const entity = { botId: 'acme', name: 'Order', fields: ['RequestParams'], updatedAt: '2026-01-01T00:00:00.000Z', extra: true };
      service.on('PUT', '/admin/bots/acme/entities/Order', { status: 200, json: entity });
      const result = await gi(['--json', 'entity', 'create', 'acme', 'Order']);
      expect(JSON.parse(result.out)).toEqual(entity);
    });

    it('refuses names that cannot be a path segment before calling the service', async () => {
      const result = await gi(['entity', 'create', '../etc', 'Order']);
      expect(result.code).toBe(2);
      expect(result.err).toBe(
        `error: <botId> "../etc" must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit (see 'gi entity create --help')\n`,
      );
      expect(service.requests).toHaveLength(0);
    });
  });

  describe('the admin token', () => {
    it('is read from <DATA_DIR>/admin-token when neither the option nor GI_ADMIN_TOKEN is set', async () => {
      writeFileSync(join(dir, 'admin-token'), `${ADMIN}\n`);
      service.on('GET', '/admin/bots/acme/tokens', { status: 200, json: { tokens: [] } });
      const result = await gi(['token', 'list', '--bot', 'acme'], { GI_URL: service.url, DATA_DIR: dir });
      expect(result.code).toBe(0);
      expect(service.requests[0].headers.authorization).toBe(`Bearer ${ADMIN}`);
    });

    it('is taken from --admin-token over GI_ADMIN_TOKEN', async () => {
      service.on('GET', '/admin/bots/acme/tokens', { status: 200, json: { tokens: [] } });
      await gi(['token', 'list', '--bot', 'acme', '--admin-token', 'flag-token'], { GI_URL: service.url, GI_ADMIN_TOKEN: ADMIN });
      expect(service.requests[0].headers.authorization).toBe('Bearer flag-token');
    });

    it('says where to put it when there is none', async () => {
      const result = await gi(['token', 'list', '--bot', 'acme'], { GI_URL: service.url, DATA_DIR: join(dir, 'nothing-here') });
      expect(result.code).toBe(1);
      expect(result.err).toBe(
        `error: no admin token: pass --admin-token, set GI_ADMIN_TOKEN, or set DATA_DIR to the service's data directory (looked for ${join(dir, 'nothing-here', 'admin-token')})\n`,
      );
    });

    it('names where a refused token came from, never its value', async () => {
      service.on('GET', '/admin/bots/acme/tokens', problem(401, 'Unauthorized', 'Invalid admin token'));
      const result = await gi(['token', 'list', '--bot', 'acme']);
      expect(result).toMatchObject({ code: 1, err: 'error: the service refused the admin token from --admin-token / GI_ADMIN_TOKEN (Unauthorized)\n' });
    });
  });

  describe('connector deploy', () => {
    it('sends the code and settings and summarizes the new version', async () => {
      const file = join(dir, 'ack.js');
      writeFileSync(file, 'Context.SetResponseEntity(Context.GetRequestEntity());\n');
      service.on('PUT', '/admin/bots/acme/integrations/ack', {
        status: 200,
        json: { botId: 'acme', integrationId: 'ack', version: 2, entityName: 'Order', pool: 'slow', timeoutSeconds: 90, allowedHosts: ['api.example.com', 'x.example.com'], deployedAt: 5 },
      });
      const result = await gi([
        'connector', 'deploy', file, '--bot', 'acme', '--integration', 'ack', '--entity', 'Order',
        '--pool', 'slow', '--timeout', '90', '--allowed-host', 'api.example.com', '--allowed-host', 'x.example.com',
        '--memory-mib', '32', '--log-kib', '8',
      ]);
      expect(result).toEqual({
        code: 0,
        out: 'Deployed ack version 2 on bot acme: entity Order, pool slow, timeout 90s, allowed hosts api.example.com, x.example.com\n',
        err: '',
      });
      expect(JSON.parse(service.requests[0].body)).toEqual({
        entityName: 'Order',
        code: 'Context.SetResponseEntity(Context.GetRequestEntity());\n',
        pool: 'slow',
        timeoutSeconds: 90,
        allowedHosts: ['api.example.com', 'x.example.com'],
        limits: { memoryMiB: 32, logKiB: 8 },
      });
    });

    it('sends an inbound auth scheme with its secrets and options, and refuses what cannot be one before calling', async () => {
      const file = join(dir, 'hook.js');
      writeFileSync(file, 'Context.SetResponseEntity({ ResponseBody: Context.InboundAuth });\n');
      const inboundAuth = { scheme: 'hmac', secret: 'PARTNER_KEY', previousSecret: 'PARTNER_KEY_OLD', allowBearer: true, header: 'X-Sig', algorithm: 'sha512', timestampHeader: 'X-Time', toleranceSeconds: 60 };
      service.on('PUT', '/admin/bots/acme/integrations/hook', {
        status: 200,
        json: { botId: 'acme', integrationId: 'hook', version: 1, entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [], inboundAuth, deployedAt: 5 },
      });
      const result = await gi([
        'connector', 'deploy', file, '--bot', 'acme', '--integration', 'hook', '--entity', 'Order',
        '--inbound-auth', 'hmac', '--inbound-secret', 'PARTNER_KEY', '--inbound-previous-secret', 'PARTNER_KEY_OLD', '--inbound-allow-bearer',
        '--inbound-option', 'header=X-Sig', '--inbound-option', 'algorithm=sha512', '--inbound-option', 'timestampHeader=X-Time', '--inbound-option', 'toleranceSeconds=60',
      ]);
      expect(result.out).toBe('Deployed hook version 1 on bot acme: entity Order, pool default, timeout 60s, allowed hosts none, inbound auth hmac (key in PARTNER_KEY or PARTNER_KEY_OLD), or a token of the bot\n');
      expect(JSON.parse(service.requests[0].body).inboundAuth).toEqual(inboundAuth);
      const refusals: Array<[string[], string]> = [
        [['--inbound-auth', 'oauth'], '--inbound-auth must be one of bearer, github'],
        [['--inbound-secret', 'X'], '--inbound-secret and the other --inbound-* options need --inbound-auth SCHEME'],
        [['--inbound-auth', 'hmac', '--inbound-option', 'colour=blue'], '--inbound-option must be NAME=VALUE'],
      ];
      for (const [argv, message] of refusals) {
        service.reset();
        const refused = await gi(['connector', 'deploy', file, '--bot', 'acme', '--integration', 'hook', '--entity', 'Order', ...argv]);
        expect([refused.code, refused.err]).toEqual([2, expect.stringContaining(message)]);
        expect(service.requests).toEqual([]);
      }
    });

    it('bundles a TypeScript entry and sends the bundle with the files it was built from', async () => {
      const project = join(dir, 'ts-project');
      mkdirSync(join(project, 'src'), { recursive: true });
      writeFileSync(join(project, 'package.json'), '{}');
      writeFileSync(join(project, 'src/index.ts'), "import { reply } from './reply';\nContext.SetResponseEntity({ ResponseBody: reply(1) });\n");
      writeFileSync(join(project, 'src/reply.ts'), 'export const reply = (n: number): object => ({ n });\n');
      service.on('PUT', '/admin/bots/acme/integrations/ts', {
        status: 200,
        json: { botId: 'acme', integrationId: 'ts', version: 1, entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [], deployedAt: 5 },
      });
      const result = await gi(['connector', 'deploy', join(project, 'src/index.ts'), '--bot', 'acme', '--integration', 'ts', '--entity', 'Order']);
      expect(result.code).toBe(0);
      const sent = JSON.parse(service.requests[0].body);
      expect(sent.code).toContain('var reply = (n) => ({ n });');
      expect(sent.sources).toEqual([
        { path: 'src/index.ts', content: "import { reply } from './reply';\nContext.SetResponseEntity({ ResponseBody: reply(1) });\n" },
        { path: 'src/reply.ts', content: 'export const reply = (n: number): object => ({ n });\n' },
      ]);

      // A compile error the service finds in the bundle is placed in the bundle.
      const message = 'SyntaxError: too deep';
      service.on('PUT', '/admin/bots/acme/integrations/ts', problem(400, 'Bad request', 'The connector code does not compile', { line: 3, column: 1, message }));
      const refused = await gi(['connector', 'deploy', join(project, 'src/index.ts'), '--bot', 'acme', '--integration', 'ts', '--entity', 'Order']);
      expect(refused.err).toBe(`error: ${join(project, 'src/index.ts')}: the bundle does not compile, at 3:1 of the bundle: ${message}\n`);
    });

    it('sends a callback URL and names it in the summary', async () => {
      const file = join(dir, 'hooked.js');
      writeFileSync(file, 'Context.SetResponseEntity(Context.GetRequestEntity());\n');
      const deployed = { botId: 'acme', integrationId: 'ack', version: 3, entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [] };
      service.on('PUT', '/admin/bots/acme/integrations/ack', { status: 200, json: { ...deployed, callbackUrl: 'https://hooks.example.com/gi' } });
      const result = await gi(['connector', 'deploy', file, '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--callback-url', 'https://hooks.example.com/gi']);
      expect(result.out).toBe('Deployed ack version 3 on bot acme: entity Order, pool default, timeout 60s, allowed hosts none, callbacks to https://hooks.example.com/gi\n');
      expect(JSON.parse(service.requests[0].body).callbackUrl).toBe('https://hooks.example.com/gi');
    });

    it('reports a compile error as file:line:column', async () => {
      const file = join(dir, 'broken.js');
      writeFileSync(file, 'const x = ;\n');
      const message = "SyntaxError: unexpected token in expression: ';'";
      const detail = `The connector code does not compile: ${message} (line 1, column 11).`;
      const deploy = ['connector', 'deploy', file, '--bot', 'acme', '--integration', 'ack', '--entity', 'Order'];
      service.on('PUT', '/admin/bots/acme/integrations/ack', problem(400, 'Bad request', detail, { line: 1, column: 11, message }));
      expect(await gi(deploy)).toEqual({ code: 1, out: '', err: `error: ${file}:1:11: ${message}\n` });
      // Without the compiler message, the detail is shown.
      service.on('PUT', '/admin/bots/acme/integrations/ack', problem(400, 'Bad request', detail, { line: 1, column: 11 }));
      expect(await gi(deploy)).toEqual({ code: 1, out: '', err: `error: ${file}:1:11: ${detail}\n` });
    });

    it('reports other refusals with the problem title and detail', async () => {
      const file = join(dir, 'ack.js');
      service.on('PUT', '/admin/bots/acme/integrations/ack', problem(404, 'Not found', 'Entity Order is not defined for bot acme'));
      const result = await gi(['connector', 'deploy', file, '--bot', 'acme', '--integration', 'ack', '--entity', 'Order']);
      expect(result).toMatchObject({ code: 1, err: 'error: Not found: Entity Order is not defined for bot acme\n' });
    });

    it('checks the file and the options before calling the service', async () => {
      const missing = await gi(['connector', 'deploy', join(dir, 'nope.js'), '--bot', 'acme', '--integration', 'ack', '--entity', 'Order']);
      expect(missing).toMatchObject({ code: 1, err: `error: cannot read ${join(dir, 'nope.js')}: no such file\n` });
      const badTimeout = await gi(['connector', 'deploy', 'x.js', '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--timeout', 'soon']);
      expect(badTimeout).toMatchObject({ code: 2, err: expect.stringContaining('--timeout must be a whole number from 1 to 86400, got "soon"') });
      const badMemory = await gi(['connector', 'deploy', 'x.js', '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--memory-mib', '1024']);
      expect(badMemory).toMatchObject({ code: 2, err: expect.stringContaining('--memory-mib must be a whole number from 16 to 512, got "1024"') });
      expect(service.requests).toHaveLength(0);
    });
  });

  it('connector show prints the settings, the versions and the code', async () => {
    service.on('GET', '/admin/bots/acme/integrations/ack', {
      status: 200,
      json: {
        botId: 'acme', integrationId: 'ack', version: 2, entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [],
        limits: { memoryMiB: 64, cpuSeconds: 60, responseBodyKiB: 10240, logKiB: 64, pendingCalls: 8 },
        deployedAt: '2026-01-02T00:00:00.000Z', code: 'return 1;',
        versions: [{ version: 2, deployedAt: '2026-01-02T00:00:00.000Z' }, { version: 1, deployedAt: '2026-01-01T00:00:00.000Z' }],
      },
    });
    const result = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ack']);
    expect(result.out).toBe(
      [
        'integration    ack',
        'bot            acme',
        'version        2 deployed 2026-01-02 00:00:00Z',
        'entity         Order',
        'pool           default',
        'timeout        60s',
        'allowed hosts  none',
        'inbound auth   bearer (a token of the bot)',
        'limits         memory 64 MiB, CPU 60 s, ResponseBody 10240 KiB, log 64 KiB, 8 pending calls',
        'versions       2 (2026-01-02 00:00:00Z), 1 (2026-01-01 00:00:00Z)',
        '',
        '--- code ---',
        'return 1;',
        '',
      ].join('\n'),
    );
  });

  it('connector show prints the source files of a bundled version, and the bundle with --bundle', async () => {
    service.on('GET', '/admin/bots/acme/integrations/ts', {
      status: 200,
      json: {
        botId: 'acme', integrationId: 'ts', version: 1, entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [],
        deployedAt: '2026-01-02T00:00:00.000Z', code: 'var reply = 1;\n',
        sources: [{ path: 'src/index.ts', content: "import { reply } from './reply';\n" }, { path: 'src/reply.ts', content: 'export const reply = 1;\n' }],
        versions: [{ version: 1, deployedAt: '2026-01-02T00:00:00.000Z' }],
      },
    });
    const shown = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ts']);
    expect(shown.out).toContain('sources        src/index.ts, src/reply.ts (bundled; --bundle shows the bundle)\n');
    expect(shown.out).toMatch(/\n\n--- src\/index.ts ---\nimport \{ reply \} from '.\/reply';\n--- src\/reply.ts ---\nexport const reply = 1;\n$/);
    const bundle = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ts', '--bundle']);
    expect(bundle.out).toMatch(/\n\n--- bundle ---\nvar reply = 1;\n$/);
  });

  describe('tokens', () => {
    it('create prints the token alone on stdout and its id and expiry on stderr', async () => {
      service.on('POST', '/admin/bots/acme/tokens', { status: 201, json: { token: 'tok.en.value', tokenId: 'tk1', expiresAt: '2026-01-01T01:00:00.000Z' } });
      const result = await gi(['token', 'create', '--bot', 'acme', '--ttl', '3600', '--label', 'crm']);
      expect(result).toEqual({ code: 0, out: 'tok.en.value\n', err: 'token tk1 for bot acme, expires 2026-01-01 01:00:00Z\n' });
      expect(JSON.parse(service.requests[0].body)).toEqual({ ttlSeconds: 3600, label: 'crm' });
    });

    it('create without --ttl asks for a permanent token; --json prints everything', async () => {
      service.on('POST', '/admin/bots/acme/tokens', { status: 201, json: { token: 't', tokenId: 'tk2', expiresAt: null } });
      const result = await gi(['token', 'create', '--bot', 'acme', '--json']);
      expect(JSON.parse(service.requests[0].body)).toEqual({});
      expect(JSON.parse(result.out)).toEqual({ token: 't', tokenId: 'tk2', expiresAt: null });
      expect(result.err).toBe('');
    });

    it('list shows each token state', async () => {
      service.on('GET', '/admin/bots/acme/tokens', {
        status: 200,
        json: {
          tokens: [
            { tokenId: 'tk1', label: 'crm', createdAt: '2026-01-01T00:00:00Z', expiresAt: null, revokedAt: null },
            { tokenId: 'tk2', label: null, createdAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:10:00Z', revokedAt: null },
            { tokenId: 'tk3', label: 'old', createdAt: '2026-01-01T00:00:00Z', expiresAt: null, revokedAt: '2026-01-02T00:00:00Z' },
          ],
        },
      });
      const result = await gi(['token', 'list', '--bot', 'acme']);
      expect(result.out).toBe(
        [
          'TOKEN ID  STATE    CREATED               EXPIRES               LABEL',
          'tk1       active   2026-01-01 00:00:00Z  never                 crm',
          'tk2       expired  2026-01-01 00:00:00Z  2026-01-01 00:10:00Z',
          'tk3       revoked  2026-01-01 00:00:00Z  never                 old',
          '',
        ].join('\n'),
      );
    });

    it('revoke deletes the token', async () => {
      service.on('DELETE', '/admin/bots/acme/tokens/tk1', { status: 204 });
      const result = await gi(['token', 'revoke', '--bot', 'acme', 'tk1']);
      expect(result).toEqual({ code: 0, out: 'Revoked token tk1 of bot acme\n', err: '' });
      expect(service.requestsTo('DELETE', '/admin/bots/acme/tokens/tk1')).toHaveLength(1);
    });

    it('revoke of an unknown token fails with the service problem', async () => {
      service.on('DELETE', '/admin/bots/acme/tokens/nope', problem(404, 'Not found', 'No token nope for bot acme'));
      expect(await gi(['token', 'revoke', '--bot', 'acme', 'nope'])).toEqual({ code: 1, out: '', err: 'error: Not found: No token nope for bot acme\n' });
    });
  });

  it('webhook prints the base URL, the bot id and every URL of every integration', async () => {
    const root = 'http://gi.example.com/api/Platform/acme';
    service.on('GET', '/admin/bots/acme/webhook', {
      status: 200,
      json: {
        baseUrl: 'http://gi.example.com',
        botId: 'acme',
        integrations: [
          {
            integrationId: 'ack',
            entityName: 'Order',
            urls: {
              sync: `${root}/Order/ack/GenericIntegration`,
              async: `${root}/Order/ack/GenericIntegration?asyncResponse=true`,
              fileTransfer: `${root}/Order/ack/GenericIntegrationFileTransfer`,
              poll: `${root}/GetGenericIntegrationResponse?invocationId={invocationId}`,
            },
          },
        ],
      },
    });
    const result = await gi(['webhook', '--bot', 'acme']);
    expect(result.out).toBe(
      [
        'base URL  http://gi.example.com',
        'bot id    acme',
        '',
        'ack (entity Order)',
        `  sync           ${root}/Order/ack/GenericIntegration`,
        `  async          ${root}/Order/ack/GenericIntegration?asyncResponse=true`,
        `  file transfer  ${root}/Order/ack/GenericIntegrationFileTransfer`,
        `  poll           ${root}/GetGenericIntegrationResponse?invocationId={invocationId}`,
        '',
      ].join('\n'),
    );
  });

  it('webhook shows per integration its scheme, what to paste into the provider and which key secrets are set', async () => {
    const root = 'https://hooks.example.com/api/Platform/acme';
    service.on('GET', '/admin/bots/acme/webhook', {
      status: 200,
      json: {
        baseUrl: 'https://hooks.example.com',
        botId: 'acme',
        integrations: [
          {
            integrationId: 'gh',
            entityName: 'Push',
            urls: { sync: `${root}/Push/gh/GenericIntegration` },
            inboundAuth: {
              scheme: 'github',
              provider: 'GitHub',
              fields: [
                { label: 'Payload URL', value: `${root}/Push/gh/GenericIntegration` },
                { label: 'Content type', value: 'application/json' },
                { label: 'Secret', value: 'the value of connector secret GH_SECRET' },
              ],
              secrets: [
                { name: 'GH_SECRET', set: true },
                { name: 'GH_OLD', set: false },
              ],
              note: 'Repository or organization Settings > Webhooks > Add webhook.',
            },
          },
        ],
      },
    });
    const result = await gi(['webhook', '--bot', 'acme']);
    expect(result.out).toBe(
      [
        'base URL  https://hooks.example.com',
        'bot id    acme',
        '',
        'gh (entity Push)',
        `  sync  ${root}/Push/gh/GenericIntegration`,
        '  inbound auth: github from GitHub',
        '  paste into GitHub:',
        `    Payload URL   ${root}/Push/gh/GenericIntegration`,
        '    Content type  application/json',
        '    Secret        the value of connector secret GH_SECRET',
        '  key secrets: GH_SECRET (set), GH_OLD (NOT SET: gi secrets set)',
        '  Repository or organization Settings > Webhooks > Add webhook.',
        '',
      ].join('\n'),
    );
  });

  describe('invocations', () => {
    const summary = {
      id: 'inv1', integrationId: 'ack', entityName: 'Order', mode: 'async', status: 'Failed', attempt: 1,
      createdAt: '2026-01-01T00:00:00.000Z', startedAt: '2026-01-01T00:00:01.000Z', finishedAt: '2026-01-01T00:00:02.500Z',
      durationMs: 1500, error: { code: 'connector_error', title: 'Missing entity', detail: 'The request entity is null' },
    };

    it('list passes the filters and shows one row per run', async () => {
      service.on('GET', '/admin/bots/acme/invocations', { status: 200, json: { invocations: [summary] } });
      const result = await gi(['invocations', 'list', '--bot', 'acme', '--status', 'failed', '--integration', 'ack', '--limit', '5']);
      expect(Object.fromEntries(service.requests[0].query)).toEqual({ status: 'Failed', integrationId: 'ack', limit: '5' });
      expect(result.out).toBe(
        [
          'ID    INTEGRATION  ENTITY  MODE   STATUS  ATTEMPT  CREATED               DURATION  ERROR',
          'inv1  ack          Order   async  Failed  1        2026-01-01 00:00:00Z  1.5 s     Missing entity: The request entity is null',
          '',
        ].join('\n'),
      );
    });

    it('list pages: it passes --before on, and tells how to ask for the next page', async () => {
      service.on('GET', '/admin/bots/acme/invocations', { status: 200, json: { invocations: [summary], nextBefore: 'c-2' } });
      const result = await gi(['invocations', 'list', '--bot', 'acme', '--limit', '1', '--before', 'c-1']);
      expect(Object.fromEntries(service.requests[0].query)).toEqual({ limit: '1', before: 'c-1' });
      expect(result.err).toContain('More: gi invocations list --bot acme --before c-2 --limit 1');
    });

    it('list refuses an unknown status', async () => {
      const result = await gi(['invocations', 'list', '--bot', 'acme', '--status', 'Done']);
      expect(result).toMatchObject({ code: 2, err: expect.stringContaining('--status must be one of Queued, Running, Waiting, Completed, Failed, Cancelled, got "Done"') });
    });

    it('show prints the run, its response body and the logs of the connector', async () => {
      service.on('GET', '/admin/bots/acme/invocations/inv1', {
        status: 200,
        json: {
          ...summary, status: 'Completed', error: null, progress: { percent: 100, message: 'done' },
          callback: { url: 'https://hooks.example.com/gi', state: 'pending', attempts: 2, nextAttemptAt: '2026-01-01T00:00:10.000Z', lastError: 'The receiver answered 500.', deliveredAt: null },
          outcome: { status: 'Completed', responseBody: { Status: 'Accepted' } },
          logs: [{ at: Date.parse('2026-01-01T00:00:01.200Z'), level: 'info', message: 'order 42' }],
        },
      });
      const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
      expect(result.out).toBe(
        [
          'invocation   inv1',
          'integration  ack',
          'entity       Order',
          'mode         async',
          'status       Completed',
          'attempt      1',
          'created      2026-01-01 00:00:00Z',
          'started      2026-01-01 00:00:01Z',
          'finished     2026-01-01 00:00:02Z',
          'duration     1.5 s',
          'progress     100% done',
          'callback     pending, 2 attempts, next 2026-01-01 00:00:10Z to https://hooks.example.com/gi (The receiver answered 500.)',
          '',
          '--- response body ---',
          '{',
          '  "Status": "Accepted"',
          '}',
          '',
          '--- logs ---',
          '2026-01-01 00:00:01Z INFO  order 42',
          '',
        ].join('\n'),
      );
    });
      it('show says a running invocation\'s lines are those so far, and marks each line with its attempt once there was more than one', async () => {
      service.on('GET', '/admin/bots/acme/invocations/inv1', {
        status: 200,
        json: {
          ...summary, status: 'Running', attempt: 2, finishedAt: null, durationMs: null, error: null, outcome: null,
          logs: [
            { at: '2026-01-01T00:00:01.000Z', level: 'info', message: 'page 1', attempt: 1 },
            { at: '2026-01-01T00:00:05.000Z', level: 'error', message: 'page 1 again', attempt: 2 },
          ],
        },
      });
      const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
      expect(result.out.split('\n').slice(-4)).toEqual(['--- logs so far ---', '2026-01-01 00:00:01Z #1 INFO  page 1', '2026-01-01 00:00:05Z #2 ERROR page 1 again', '']);
    });

    it('show --follow prints the lines written while the run goes on, each once, until it ends', async () => {
      const running = { ...summary, status: 'Running', finishedAt: null, durationMs: null, error: null, outcome: null };
      const line = (second: number, message: string) => ({ at: `2026-01-01T00:00:0${second}.000Z`, level: 'info', message, attempt: 1 });
      service.on(
        'GET',
        '/admin/bots/acme/invocations/inv1',
        { status: 200, json: { ...running, logs: [] } },
        { status: 200, json: { ...running, logs: [line(1, 'one'), line(2, 'two')] } },
        { status: 200, json: { ...running, logs: [line(1, 'one'), line(2, 'two')] } },
        { status: 200, json: { ...summary, logs: [line(1, 'one'), line(2, 'two'), line(3, 'three')] } },
      );
      const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1', '--follow']);
      expect(result.code).toBe(0);
      expect(result.out.split('\n').slice(-6)).toEqual([
        '--- no logs yet ---',
        '2026-01-01 00:00:01Z INFO  one',
        '2026-01-01 00:00:02Z INFO  two',
        '2026-01-01 00:00:03Z INFO  three',
        '--- Failed: Missing entity: The request entity is null ---',
        '',
      ]);
      expect(service.requestsTo('GET', '/admin/bots/acme/invocations/inv1')).toHaveLength(4);
    });

    it('show --follow --json prints the invocation once it has ended', async () => {
      service.on('GET', '/admin/bots/acme/invocations/inv1', { status: 200, json: { ...summary, status: 'Queued', logs: [] } }, { status: 200, json: { ...summary, logs: [] } });
      const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1', '-f', '--json']);
      expect(JSON.parse(result.out)).toMatchObject({ id: 'inv1', status: 'Failed' });
    });
  });

  describe('quotas', () => {
    const unset = { ratePerSecond: null, burst: null, maxInFlight: null };

    it('show lists what is set and what is enforced, for the bot and its tokens', async () => {
      service.on('GET', '/admin/bots/acme/quotas', {
        status: 200,
        json: {
          botId: 'acme',
          quotas: { ratePerSecond: 2.5, burst: null, maxInFlight: null },
          effective: { ratePerSecond: 2.5, burst: 3, maxInFlight: 100 },
          tokens: [{ tokenId: 't1', quotas: { ...unset, maxInFlight: 2 }, effective: { ...unset, maxInFlight: 2 } }],
        },
      });
      const result = await gi(['quota', 'show', '--bot', 'acme']);
      expect(result.out).toBe(
        [
          'FOR       QUOTA      SET      ENFORCED',
          'bot acme  rate       2.5/s    2.5/s',
          'bot acme  burst      default  3',
          'bot acme  in flight  default  100',
          'token t1  rate       default  none',
          'token t1  burst      default  none',
          'token t1  in flight  2        2',
          '',
        ].join('\n'),
      );
    });

    it('set sends exactly the quotas given, for the bot or one token', async () => {
      const reply = { botId: 'acme', quotas: unset, effective: unset, tokens: [] };
      service.on('PUT', '/admin/bots/acme/quotas', { status: 200, json: reply });
      service.on('PUT', '/admin/bots/acme/tokens/t1/quotas', { status: 200, json: { botId: 'acme', tokenId: 't1', quotas: unset, effective: unset } });
      expect((await gi(['quota', 'set', '--bot', 'acme', '--rate', '0.5', '--burst', '4', '--max-in-flight', '10'])).code).toBe(0);
      expect(JSON.parse(service.requestsTo('PUT', '/admin/bots/acme/quotas')[0].body)).toEqual({ ratePerSecond: 0.5, burst: 4, maxInFlight: 10 });
      expect((await gi(['quota', 'set', '--bot', 'acme', '--token', 't1', '--max-in-flight', '1'])).code).toBe(0);
      expect(JSON.parse(service.requestsTo('PUT', '/admin/bots/acme/tokens/t1/quotas')[0].body)).toEqual({ maxInFlight: 1 });
    });

    it('set refuses a burst without a rate and a rate that is not a positive number, before calling the service', async () => {
      expect(await gi(['quota', 'set', '--bot', 'acme', '--burst', '4'])).toMatchObject({ code: 2, err: expect.stringContaining('--burst needs --rate') });
      expect(await gi(['quota', 'set', '--bot', 'acme', '--rate', '0'])).toMatchObject({
        code: 2,
        err: expect.stringContaining('--rate must be a number above 0 and at most 1000000, got "0"'),
      });
      expect(service.requests).toHaveLength(0);
    });
  });

  describe('callback-secret', () => {
    it('rotate prints the secret alone on stdout, and what happened on stderr', async () => {
      service.on('POST', '/admin/bots/acme/callback-secret', {
        status: 201,
        json: { botId: 'acme', secret: 'whsec_c2VjcmV0', createdAt: '2026-01-01T00:00:00.000Z', previousSecretValidUntil: '2026-01-02T00:00:00.000Z' },
      });
      const result = await gi(['callback-secret', 'rotate', '--bot', 'acme']);
      expect(result).toEqual({
        code: 0,
        out: 'whsec_c2VjcmV0\n',
        err: 'callback signing secret of bot acme, created 2026-01-01 00:00:00Z; the previous one signs too until 2026-01-02 00:00:00Z\n',
      });
    });

    it('show tells when the secret was made', async () => {
      service.on('GET', '/admin/bots/acme/callback-secret', { status: 200, json: { botId: 'acme', createdAt: '2026-01-01T00:00:00.000Z', previousSecretValidUntil: null } });
      const result = await gi(['callback-secret', 'show', '--bot', 'acme']);
      expect(result.out).toBe('Bot acme signs callbacks with a secret created 2026-01-01 00:00:00Z\n');
    });
  });

  describe('invocations cancel', () => {
    it('cancels through the control API', async () => {
      service.on('DELETE', '/admin/bots/acme/invocations/inv1', { status: 200, json: { invocationId: 'inv1', status: 'Cancelled' } });
      const result = await gi(['invocations', 'cancel', '--bot', 'acme', 'inv1']);
      expect(result).toEqual({ code: 0, out: 'Cancelled invocation inv1 of bot acme\n', err: '' });
      expect(service.requestsTo('DELETE', '/admin/bots/acme/invocations/inv1')).toHaveLength(1);
    });

    it('says why an invocation that already finished cannot be cancelled', async () => {
      service.on('DELETE', '/admin/bots/acme/invocations/inv1', problem(409, 'Already finished', 'The invocation already finished (Completed); there is nothing left to cancel.'));
      const result = await gi(['invocations', 'cancel', '--bot', 'acme', 'inv1']);
      expect(result.code).toBe(1);
      expect(result.err).toContain('The invocation already finished (Completed); there is nothing left to cancel.');
    });
  });

  describe('failures', () => {
    it('says so when the service cannot be reached', async () => {
      const closed = await FakeService.start();
      const url = closed.url;
      await closed.close();
      const result = await gi(['token', 'list', '--bot', 'acme'], { GI_URL: url, GI_ADMIN_TOKEN: ADMIN });
      expect(result).toEqual({
        code: 1,
        out: '',
        err: `error: cannot reach the service at ${url}: ECONNREFUSED. Is it running (gi up)? Set --url or GI_URL to point elsewhere\n`,
      });
    });

    it('rejects a reply that does not have the documented shape', async () => {
      service.on('GET', '/admin/bots/acme/tokens', { status: 200, json: { tokens: [{ id: 'x' }] } });
      const result = await gi(['token', 'list', '--bot', 'acme']);
      expect(result).toMatchObject({ code: 1, err: expect.stringMatching(/^error: unexpected reply to GET \/admin\/bots\/acme\/tokens: tokens\.0\.tokenId: /) });
    });

    it('reports a bad GI_URL as a settings problem', async () => {
      const result = await gi(['token', 'list', '--bot', 'acme'], { GI_URL: 'localhost:8080' });
      expect(result).toEqual({ code: 2, out: '', err: 'error: invalid settings: GI_URL: "localhost:8080" is not an http(s) URL such as http://127.0.0.1:8080\n' });
    });
  });

  describe('help', () => {
    it('lists every command', async () => {
      const result = await gi(['help']);
      expect(result.code).toBe(0);
      for (const command of ['up', 'entity create', 'connector deploy', 'token create', 'webhook', 'invoke', 'invocations show']) {
        expect(result.out).toMatch(new RegExp(`^  ${command} `, 'm'));
      }
    });

    it('shows a command with its options', async () => {
      const result = await gi(['token', 'create', '--help']);
      expect(result.out).toContain('Usage: gi token create --bot BOT [--ttl SECONDS] [--label L]');
      expect(result.out).toMatch(/--bot BOT\s+Bot id \(required\)/);
      expect(result.out).toContain('--admin-token TOKEN');
    });

    it('shows usage on stderr and exits 2 when no command is given', async () => {
      const result = await gi([]);
      expect(result.code).toBe(2);
      expect(result.err).toContain('Usage: gi');
      expect(await gi(['token'])).toMatchObject({ code: 2, err: expect.stringContaining('Usage: gi token <create|list|revoke> ...') });
      expect(await gi(['help', 'nope'])).toMatchObject({ code: 2, err: `error: no help for "nope": unknown command (see 'gi help')\n` });
    });
  });
});
