import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureIo, FakeService } from './fake-service.fixture';
import { runCli } from './run-cli';

const ADMIN = 'admin-secret-0123456789abcdef';
const VALUE = 'sk_live_cli-0123456789';
const noUp = async () => {
  throw new Error('not in tests');
};

describe('gi secrets', () => {
  let service: FakeService;
  let dir: string;
  beforeAll(async () => {
    service = await FakeService.start();
    dir = mkdtempSync(join(tmpdir(), 'gi-cli-secrets-'));
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => service.reset());

  async function gi(argv: string[], stdin?: string) {
    const io = captureIo({ stdin });
    const code = await runCli(argv, io, { GI_URL: service.url, GI_ADMIN_TOKEN: ADMIN }, noUp);
    const result = { code, out: io.stdout(), err: io.stderr() };
    expect(result.out + result.err).not.toContain(VALUE);
    return result;
  }

  const stored = { name: 'API_KEY', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };

  it('sets an integration\'s secret from stdin, dropping one trailing newline; the value travels in the body only', async () => {
    service.on('PUT', '/admin/bots/acme/integrations/crm/secrets/API_KEY', { status: 201, json: stored });
    const result = await gi(['secrets', 'set', '--bot', 'acme', '--integration', 'crm', 'API_KEY'], `${VALUE}\n`);
    expect(result).toMatchObject({ code: 0, out: '', err: expect.stringContaining('secret API_KEY of integration crm of bot acme set') });
    const [request] = service.requestsTo('PUT', '/admin/bots/acme/integrations/crm/secrets/API_KEY');
    expect(JSON.parse(request.body)).toEqual({ value: VALUE });
  });

  it("sets a bot's secret from --value-file, and says a second set rotated it", async () => {
    const file = join(dir, 'value.txt');
    writeFileSync(file, `${VALUE}\r\n`);
    service.on('PUT', '/admin/bots/acme/secrets/API_KEY', { status: 200, json: { ...stored, updatedAt: '2026-02-01T00:00:00.000Z' } });
    const result = await gi(['secrets', 'set', '--bot', 'acme', '--value-file', file, 'API_KEY']);
    expect(result.err).toContain('secret API_KEY of bot acme rotated');
    expect(JSON.parse(service.requestsTo('PUT', '/admin/bots/acme/secrets/API_KEY')[0].body)).toEqual({ value: VALUE });
  });

  it('refuses a bad name or an empty value before calling the service', async () => {
    expect(await gi(['secrets', 'set', '--bot', 'acme', 'api-key'], VALUE)).toMatchObject({ code: 2, err: expect.stringContaining("upper-case letters, digits and '_'") });
    expect(await gi(['secrets', 'set', '--bot', 'acme', 'API_KEY'], '\n')).toMatchObject({ code: 2, err: expect.stringContaining('the secret value is empty') });
    expect(service.requestsTo('PUT', '/admin/bots/acme/secrets/API_KEY')).toHaveLength(0);
  });

  it('lists names and dates, and deletes', async () => {
    service.on('GET', '/admin/bots/acme/secrets', { status: 200, json: { secrets: [stored] } });
    const listed = await gi(['secrets', 'list', '--bot', 'acme']);
    expect(listed.out).toMatch(/^NAME\s+CREATED\s+UPDATED\nAPI_KEY\s+/);
    service.on('DELETE', '/admin/bots/acme/secrets/API_KEY', { status: 204 });
    expect(await gi(['secrets', 'delete', '--bot', 'acme', 'API_KEY'])).toMatchObject({ code: 0, err: 'secret API_KEY of bot acme deleted\n' });
  });
});
