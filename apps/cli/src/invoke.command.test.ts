import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliEnv } from '@gi/config';
import { captureIo, FakeService, problem, type Reply } from './fake-service.fixture';
import { runCli } from './run-cli';

const ADMIN = 'admin-secret-0123456789abcdef';
const noUp = async () => {
  throw new Error('not in tests');
};
const CALL = '/api/Platform/acme/Order/ack/GenericIntegration';
const POLL = '/api/Platform/acme/GetGenericIntegrationResponse';

describe('gi invoke', () => {
  let service: FakeService;
  let dir: string;
  let minted = 0;
  beforeAll(async () => {
    service = await FakeService.start();
    dir = mkdtempSync(join(tmpdir(), 'gi-cli-'));
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    service.reset();
    minted = 0;
    const root = `${service.url}/api/Platform/acme`;
    service
      .on('GET', '/admin/bots/acme/webhook', {
        status: 200,
        json: {
          baseUrl: service.url,
          botId: 'acme',
          integrations: [{ integrationId: 'ack', entityName: 'Order', urls: { sync: `${root}/Order/ack/GenericIntegration`, poll: `${root}/GetGenericIntegrationResponse` } }],
        },
      })
      .on('POST', '/admin/bots/acme/tokens', () => ({ status: 201, json: { token: `bot-token-${++minted}`, tokenId: `tk${minted}`, expiresAt: null } }));
  });

  async function gi(argv: string[], options: { env?: CliEnv; tty?: boolean } = {}) {
    const io = captureIo({ tty: options.tty });
    const code = await runCli(argv, io, options.env ?? { GI_URL: service.url, GI_ADMIN_TOKEN: ADMIN }, noUp);
    const result = { code, out: io.stdout(), err: io.stderr(), sleeps: io.sleeps };
    expect(result.out + result.err).not.toContain(ADMIN);
    return result;
  }

  const accepted = (id = 'inv1'): Reply => ({
    status: 202,
    headers: { location: `/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${id}` },
    json: { invocationId: id, status: 'Running' },
  });
  const running = (progress?: { percent: number; message?: string }): Reply => ({
    status: 202,
    headers: { 'retry-after': '1' },
    json: { invocationId: 'inv1', status: 'Running', message: 'The job is not yet complete.', ...(progress && { progress }) },
  });

  describe('sync', () => {
    it('mints a short-lived token, calls the public endpoint and prints the reply body', async () => {
      service.on('POST', CALL, { status: 200, json: { Status: 'Accepted', Message: 'order 42' } });
      const result = await gi([
        'invoke', '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--body', '{"orderId":42}',
        '--query', 'source=crm', '--query', 'source=erp', '--header', 'X-Trace: abc',
      ]);
      expect(result).toMatchObject({ code: 0, out: '{"Status":"Accepted","Message":"order 42"}\n', err: '' });

      const [mint] = service.requestsTo('POST', '/admin/bots/acme/tokens');
      expect(JSON.parse(mint.body)).toEqual({ ttlSeconds: 600, label: 'cli invoke' });
      const [call] = service.requestsTo('POST', CALL);
      expect(call.headers.authorization).toBe('Bearer bot-token-1');
      expect(call.headers['content-type']).toBe('application/json');
      expect(call.headers['x-trace']).toBe('abc');
      expect(call.query.getAll('source')).toEqual(['crm', 'erp']);
      expect(call.query.has('asyncResponse')).toBe(false);
      expect(call.body).toBe('{"orderId":42}');
    });

    it("takes the entity from the integration's webhook configuration when --entity is left out", async () => {
      service.on('POST', CALL, { status: 200, headers: { 'content-type': 'text/plain' }, text: 'ok' });
      expect(await gi(['invoke', '--bot', 'acme', '--integration', 'ack'])).toMatchObject({ code: 0, out: 'ok\n' });
    });

    it('with --token and --platform needs no admin access at all', async () => {
      service.on('POST', '/api/Custom/acme/Order/ack/GenericIntegration', { status: 200, json: {} });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--token', 'given', '--platform', 'Custom'], {
        env: { GI_URL: service.url, DATA_DIR: join(dir, 'none') },
      });
      expect(result).toMatchObject({ code: 0, out: '{}\n' });
      expect(service.requests.map((r) => r.path)).toEqual(['/api/Custom/acme/Order/ack/GenericIntegration']);
      expect(service.requests[0].headers.authorization).toBe('Bearer given');
    });

    it('with --token and no admin token builds the URL from --url', async () => {
      service.on('POST', CALL, { status: 200, json: { ok: true } });
      const env = { GI_URL: service.url, DATA_DIR: join(dir, 'none') };
      expect(await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--token', 'given'], { env })).toMatchObject({ code: 0 });
      const missingEntity = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--token', 'given'], { env });
      expect(missingEntity).toMatchObject({ code: 2, err: "error: missing --entity (needed with --platform or without an admin token) (see 'gi invoke --help')\n" });
    });

    it('prints the problem of a failed run and exits 1', async () => {
      service.on('POST', CALL, problem(422, 'Missing entity', 'The request entity is null', { invocationId: 'inv9' }));
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--body', '{}']);
      expect(result).toMatchObject({ code: 1, out: '', err: 'error: Missing entity: The request entity is null (invocation inv9)\n' });
    });

    it('points at the still-running invocation when the sync wait runs out', async () => {
      service.on('POST', CALL, problem(504, 'Gateway timeout', 'The connector is still running', { invocationId: 'inv5' }));
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack']);
      expect(result.err).toBe('error: Gateway timeout: The connector is still running (invocation inv5); the run goes on: gi invocations show --bot acme inv5\n');
    });

    it('says when the integration is not deployed', async () => {
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'other']);
      expect(result.err).toBe('error: integration other is not deployed on bot acme: gi connector deploy <file> --bot acme --integration other --entity <E>\n');
      expect(service.requestsTo('POST', '/admin/bots/acme/tokens')).toHaveLength(0);
    });

    it('--json wraps the reply with its status and content type', async () => {
      service.on('POST', CALL, { status: 200, json: { Status: 'Accepted' } });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--json']);
      expect(JSON.parse(result.out)).toEqual({ status: 200, contentType: 'application/json', body: { Status: 'Accepted' } });
    });
  });

  describe('--async', () => {
    it('prints the invocationId, long-polls with progress on stderr, then prints the final body', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, running(), running({ percent: 40, message: 'importing' }), { status: 200, json: { Status: 'Done' } });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async', '--body', '{}']);
      expect(result.code).toBe(0);
      expect(result.out).toBe('inv1\n{"Status":"Done"}\n');
      expect(result.err).toBe('[0s] inv1 Running The job is not yet complete.\n[0s] inv1 Running 40% importing\n');
      // Answered at once instead of held: wait as Retry-After says.
      expect(result.sleeps).toEqual([1000, 1000]);

      const [call] = service.requestsTo('POST', CALL);
      expect(call.query.get('asyncResponse')).toBe('true');
      const polls = service.requestsTo('GET', POLL);
      expect(polls).toHaveLength(3);
      for (const poll of polls) {
        expect(Object.fromEntries(poll.query)).toEqual({ invocationId: 'inv1', waitSeconds: '20' });
        expect(poll.headers.authorization).toBe('Bearer bot-token-1');
      }
    });

    it('prints the problem of a failed run and exits 1', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, running(), problem(500, 'Connector failed', 'TypeError: x is undefined', { invocationId: 'inv1' }));
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async']);
      expect(result).toMatchObject({ code: 1, out: 'inv1\n' });
      expect(result.err.split('\n').slice(-2)).toEqual(['error: Connector failed: TypeError: x is undefined (invocation inv1)', '']);
    });

    it('mints a new token when its own one expires during a long run', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, problem(401, 'Unauthorized', 'Token expired'), { status: 200, json: { Status: 'Done' } });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async']);
      expect(result).toMatchObject({ code: 0, out: 'inv1\n{"Status":"Done"}\n' });
      expect(service.requestsTo('GET', POLL).map((r) => r.headers.authorization)).toEqual(['Bearer bot-token-1', 'Bearer bot-token-2']);
    });

    it('does not renew a token it was given', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, problem(401, 'Unauthorized', 'Token expired'));
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async', '--token', 'given']);
      expect(result).toMatchObject({ code: 1, err: expect.stringContaining('error: Unauthorized: Token expired') });
    });

    it('rides out a service that is briefly unavailable', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, { ...problem(503, 'Service unavailable', 'store down'), headers: { 'content-type': 'application/problem+json', 'retry-after': '2' } }, { status: 200, text: 'done' });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async']);
      expect(result).toMatchObject({ code: 0, out: 'inv1\ndone\n', sleeps: [2000] });
      expect(result.err).toBe('[0s] Service unavailable, retry 1 of 5\n');
    });

    it('--json prints one document with the invocationId and the final reply', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, { status: 200, json: { Status: 'Done' } });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async', '--json']);
      expect(JSON.parse(result.out)).toEqual({ invocationId: 'inv1', status: 200, contentType: 'application/json', body: { Status: 'Done' } });
    });

    it('draws a spinner on a terminal and clears it before the result', async () => {
      service.on('POST', CALL, accepted());
      service.on('GET', POLL, running({ percent: 75, message: 'almost' }), { status: 200, json: {} });
      const result = await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--async'], { tty: true });
      expect(result.code).toBe(0);
      expect(result.err).toContain('inv1 Running 75% almost (0s)');
      expect(result.err.endsWith('\r\x1b[2K')).toBe(true);
      expect(result.err).not.toContain('\n');
    });
  });

  it('refuses --body and --body-file together and invalid JSON before calling anything', async () => {
    expect(await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--body', '{}', '--body-file', 'x.json'])).toMatchObject({
      code: 2,
      err: "error: pass either --body or --body-file, not both (see 'gi invoke --help')\n",
    });
    expect((await gi(['invoke', '--bot', 'acme', '--integration', 'ack', '--body', '{nope'])).err).toMatch(/^error: --body is not valid JSON/);
    expect(service.requests).toHaveLength(0);
  });
});
