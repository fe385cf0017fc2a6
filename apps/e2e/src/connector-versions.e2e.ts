import { execFile } from 'node:child_process';
import { Api } from './api-client';
import { loops } from './connectors';
import { ADMIN_TOKEN, CLI, ROOT, startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * Versions of a connector and deletions against the built service: a rollback deploys the old code as
 * a new version and live calls run it; deleting what has calls in flight is refused unless forced,
 * which cancels them.
 */
const answering = (text: string) => `const entity = Context.GetRequestEntity();
entity.ResponseBody = { answer: ${JSON.stringify(text)} };
Context.SetResponseEntity(entity);
`;

describe('connector versions and deletions (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const statusOf = async (id: string) => (await api.admin('GET', `/bots/acme/invocations/${id}`)).json.status as string;
  const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const answer = async (integrationId: string) => {
    const reply = await api.postJson(api.webhookUrl('acme', 'Order', integrationId), token, { orderId: 1 });
    expect(reply.status).toBe(200);
    return reply.json.answer as string;
  };
  const startLoop = async (integrationId: string) => {
    const started = await api.postJson(api.webhookUrl('acme', 'Order', integrationId, 'asyncResponse=true'), token, {});
    expect(started.status).toBe(202);
    const id = started.json.invocationId as string;
    await until(async () => (await statusOf(id)) === 'Running', 'the loop runs');
    return id;
  };

  beforeAll(async () => {
    service = await startService();
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'orders', answering('one'), { timeoutSeconds: 30 });
  });
  afterAll(() => service.dispose());

  it('rolls back to an earlier version as a new one, and live calls run the old code at once', async () => {
    expect((await api.admin('PUT', '/bots/acme/integrations/orders', { entityName: 'Order', code: answering('two'), timeoutSeconds: 20 })).json.version).toBe(2);
    expect(await answer('orders')).toBe('two');

    const diff = await api.admin('GET', '/bots/acme/integrations/orders/diff?from=1&to=2');
    expect(diff.json.code).toContain('-entity.ResponseBody = { answer: "one" };\n+entity.ResponseBody = { answer: "two" };');
    expect(diff.json.settings).toEqual([{ name: 'timeoutSeconds', from: 30, to: 20 }]);

    const rolledBack = await api.admin('POST', '/bots/acme/integrations/orders/rollback', { to: 1 });
    expect(rolledBack.json).toMatchObject({ version: 3, rolledBackTo: 1, timeoutSeconds: 30 });
    expect(await answer('orders')).toBe('one');
    const versions = await api.admin('GET', '/bots/acme/integrations/orders/versions');
    expect(versions.json.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect((await api.admin('GET', '/bots/acme/integrations/orders/diff?from=1&to=3')).json).toMatchObject({ code: '', settings: [] });
  });

  it('does the same through the built CLI: versions, diff, rollback', async () => {
    const gi = (...args: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) => {
        const env = { PATH: process.env.PATH, GI_URL: service.baseUrl, GI_ADMIN_TOKEN: ADMIN_TOKEN };
        execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env, timeout: 30_000 }, (error, out, err) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
        });
      });
    const target = ['--bot', 'acme', '--integration', 'orders'];
    const versions = await gi('connector', 'versions', ...target);
    expect(versions.out.split('\n').slice(1, 4).map((line) => line.split(/\s+/)[0])).toEqual(['3', '2', '1']);
    const diff = await gi('connector', 'diff', ...target, '--from', '2', '--to', '3');
    expect(diff.code).toBe(0);
    expect(diff.out).toContain('timeoutSeconds: 20 -> 30');
    expect(diff.out).toContain('-entity.ResponseBody = { answer: "two" };\n+entity.ResponseBody = { answer: "one" };');
    expect(await gi('connector', 'rollback', ...target, '--to', '2')).toEqual({
      code: 0,
      out: "Rolled back orders on bot acme to version 2's code and settings: now version 4\n",
      err: '',
    });
    expect(await answer('orders')).toBe('two');
    const missing = await gi('connector', 'rollback', ...target, '--to', '99');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('has no version 99 (latest: 4)');
  });

  it('refuses to delete an integration with a call running, then deletes it by force, cancelling the call', async () => {
    expect((await api.admin('PUT', '/bots/acme/integrations/loops', { entityName: 'Order', code: loops, timeoutSeconds: 600 })).status).toBe(200);
    const id = await startLoop('loops');

    const refused = await api.admin('DELETE', '/bots/acme/integrations/loops');
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ type: 'urn:gi:problem:in-use', inFlight: 1 });
    expect(await statusOf(id)).toBe('Running');

    const forced = await api.admin('DELETE', '/bots/acme/integrations/loops?force=true');
    expect(forced.json).toEqual({ botId: 'acme', integrationId: 'loops', deleted: true, cancelledInvocations: 1 });
    // The call is kept, cancelled, until it expires; its poll says so; the integration answers no more.
    expect(await statusOf(id)).toBe('Cancelled');
    expect((await api.poll('acme', token, id, 'waitSeconds=0')).status).toBe(410);
    expect((await api.admin('GET', '/bots/acme/integrations/loops')).status).toBe(404);
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'loops'), token, {})).status).toBe(404);
    // A new deploy under the id goes on from the last version number.
    expect((await api.admin('PUT', '/bots/acme/integrations/loops', { entityName: 'Order', code: answering('back') })).json.version).toBe(2);
    expect(await answer('loops')).toBe('back');
  });

  it('deletes a whole bot by force: its calls are cancelled and go with it, and its tokens stop working', async () => {
    expect((await api.admin('PUT', '/bots/acme/integrations/loops', { entityName: 'Order', code: loops, timeoutSeconds: 600 })).status).toBe(200);
    const id = await startLoop('loops');
    expect((await api.admin('DELETE', '/bots/acme')).status).toBe(409);
    expect((await api.admin('DELETE', '/bots/acme/entities/Order')).status).toBe(409);

    const forced = await api.admin('DELETE', '/bots/acme?force=true');
    expect(forced.json).toEqual({ botId: 'acme', deleted: true, cancelledInvocations: 1 });
    // A bot's invocations are deleted with it: a bot created again under its id starts with none.
    expect(await statusOf(id)).toBe(404);
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'orders'), token, {})).status).toBe(401);
    expect((await api.admin('GET', '/bots')).json.bots).not.toContain('acme');
    expect((await api.admin('GET', '/bots/acme/integrations')).json.integrations).toEqual([]);
  });
});
