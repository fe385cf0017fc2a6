import { cliAgainstFakeService, problem } from './fake-service.fixture';

const at = '2026-01-01T00:00:00.000Z';
const integration = { botId: 'acme', integrationId: 'ack', entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [], deployedAt: at };

describe('versions and deletions on the command line', () => {
  const cli = cliAgainstFakeService();
  const { gi } = cli;

  it('lists the versions, marking the live one', async () => {
    cli.service.on('GET', '/admin/bots/acme/integrations/ack/versions', { status: 200, json: { integrationId: 'ack', latest: 2, versions: [{ version: 2, deployedAt: at }, { version: 1, deployedAt: at }] } });
    const result = await gi(['connector', 'versions', '--bot', 'acme', '--integration', 'ack']);
    expect(result.code).toBe(0);
    expect(result.out.split('\n')[1]).toMatch(/^2\s+\S.*live$/);
    expect(result.out.split('\n')[2]).toMatch(/^1\s+/);
  });

  it('shows one version with connector show --at', async () => {
    cli.service.on('GET', '/admin/bots/acme/integrations/ack', (req) => ({
      status: 200,
      json: { ...integration, version: Number(req.query.get('version')), code: 'return 1;', sources: [], versions: [] },
    }));
    const result = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ack', '--at', '1']);
    expect(result.out).toContain('return 1;');
    expect(cli.service.requestsTo('GET', '/admin/bots/acme/integrations/ack')[0].query.get('version')).toBe('1');
  });

  it('prints the diff of two versions: settings, then the code as diff -u does', async () => {
    cli.service.on('GET', '/admin/bots/acme/integrations/ack/diff', (req) => ({
      status: 200,
      json: {
        integrationId: 'ack',
        from: Number(req.query.get('from')),
        to: Number(req.query.get('to')),
        code: '--- v1/code\n+++ v2/code\n@@ -1,1 +1,1 @@\n-return 1;\n+return 2;\n',
        sources: [],
        settings: [{ name: 'timeoutSeconds', from: 60, to: 30 }],
      },
    }));
    const result = await gi(['connector', 'diff', '--bot', 'acme', '--integration', 'ack', '--from', '1', '--to', '2']);
    expect(result).toEqual({
      code: 0,
      out: 'Settings from version 1 to 2:\n  timeoutSeconds: 60 -> 30\n\n--- v1/code\n+++ v2/code\n@@ -1,1 +1,1 @@\n-return 1;\n+return 2;\n',
      err: '',
    });
    expect((await gi(['connector', 'diff', '--bot', 'acme', '--integration', 'ack', '--from', '1'])).code).toBe(2);
    expect((await gi(['connector', 'diff', '--bot', 'acme', '--integration', 'ack', '--from', 'one', '--to', '2'])).code).toBe(2);
  });

  it('rolls back and names the new version', async () => {
    cli.service.on('POST', '/admin/bots/acme/integrations/ack/rollback', { status: 200, json: { ...integration, version: 4, rolledBackTo: 2 } });
    const result = await gi(['connector', 'rollback', '--bot', 'acme', '--integration', 'ack', '--to', '2']);
    expect(result).toEqual({ code: 0, out: "Rolled back ack on bot acme to version 2's code and settings: now version 4\n", err: '' });
    expect(JSON.parse(cli.service.requestsTo('POST', '/admin/bots/acme/integrations/ack/rollback')[0].body)).toEqual({ to: 2 });
  });

  it('deletes an integration, forced only with --force, and reports a refusal', async () => {
    cli.service.on('DELETE', '/admin/bots/acme/integrations/ack', (req) =>
      req.query.get('force') === 'true'
        ? { status: 200, json: { botId: 'acme', integrationId: 'ack', deleted: true, cancelledInvocations: 2 } }
        : problem(409, 'In use', "Integration 'ack' of bot 'acme' has invocations in flight (Queued or Running); wait for them to finish, or delete with force=true to cancel them.", { inFlight: 2 }),
    );
    const refused = await gi(['connector', 'delete', '--bot', 'acme', '--integration', 'ack']);
    expect(refused).toMatchObject({ code: 1, err: expect.stringContaining('error: In use: ') });
    const forced = await gi(['connector', 'delete', '--bot', 'acme', '--integration', 'ack', '--force']);
    expect(forced).toEqual({ code: 0, out: 'Deleted integration ack of bot acme; 2 invocation(s) in flight cancelled\n', err: '' });
  });

  it('deletes an entity and a bot', async () => {
    cli.service.on('DELETE', '/admin/bots/acme/entities/Order', { status: 200, json: { botId: 'acme', entityName: 'Order', deleted: true } });
    cli.service.on('DELETE', '/admin/bots/acme', { status: 200, json: { botId: 'acme', deleted: true, cancelledInvocations: 0 } });
    expect((await gi(['entity', 'delete', 'acme', 'Order'])).out).toBe('Deleted entity Order of bot acme\n');
    expect((await gi(['bot', 'delete', '--bot', 'acme'])).out).toBe('Deleted bot acme\n');
    expect(cli.service.requestsTo('DELETE', '/admin/bots/acme')[0].query.get('force')).toBeNull();
  });
});
