import { newInvocation, type SmallServices } from '@gi/testing';
import { controlApp } from './control-app.fixture';

/** A bot with entity Order and integration ack at versions 1 (return 1) and 2 (return 2, 30 s, another host). */
async function withTwoVersions() {
  const c = controlApp();
  await c.admin('PUT', '/bots/bot-a/entities/Order', {});
  const v1 = await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'const a = 1;\nreturn 1;\n', allowedHosts: ['a.example.com'] });
  const v2 = await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'const a = 1;\nreturn 2;\n', timeoutSeconds: 30, allowedHosts: ['b.example.com'] });
  expect([v1.status, v2.status, v2.json.version]).toEqual([200, 200, 2]);
  return c;
}

describe('integration versions through the admin API', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('lists the versions newest first', async () => {
    const c = await withTwoVersions();
    world = c.world;
    const reply = await c.admin('GET', '/bots/bot-a/integrations/ack/versions');
    expect(reply.json).toMatchObject({ integrationId: 'ack', latest: 2, versions: [{ version: 2 }, { version: 1 }] });
    expect((await c.admin('GET', '/bots/bot-a/integrations/nope/versions')).status).toBe(404);
  });

  it('diffs two versions: the code as a unified diff and each setting that changed', async () => {
    const c = await withTwoVersions();
    world = c.world;
    const reply = await c.admin('GET', '/bots/bot-a/integrations/ack/diff?from=1&to=2');
    expect(reply.status).toBe(200);
    expect(reply.json.code).toBe('--- v1/code\n+++ v2/code\n@@ -1,2 +1,2 @@\n const a = 1;\n-return 1;\n+return 2;\n');
    expect(reply.json.settings).toEqual([
      { name: 'timeoutSeconds', from: 60, to: 30 },
      { name: 'allowedHosts', from: ['a.example.com'], to: ['b.example.com'] },
    ]);
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/diff?from=1&to=9')).json.detail).toContain('has no version 9 (latest: 2)');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/diff?from=1')).status).toBe(400);
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/diff?from=x&to=2')).status).toBe(400);
  });

  it('rolls back by deploying an earlier version again as a new one; history stays', async () => {
    const c = await withTwoVersions();
    world = c.world;
    const reply = await c.admin('POST', '/bots/bot-a/integrations/ack/rollback', { to: 1 });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ integrationId: 'ack', version: 3, rolledBackTo: 1, timeoutSeconds: 60, allowedHosts: ['a.example.com'] });
    expect(reply.json).not.toHaveProperty('code');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack')).json.code).toBe('const a = 1;\nreturn 1;\n');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack?version=2')).json.code).toBe('const a = 1;\nreturn 2;\n');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/diff?from=1&to=3')).json).toMatchObject({ code: '', settings: [], sources: [] });
    expect((await c.admin('POST', '/bots/bot-a/integrations/ack/rollback', { to: 7 })).status).toBe(404);
    expect((await c.admin('POST', '/bots/bot-a/integrations/ack/rollback', {})).status).toBe(400);
    expect((await c.admin('POST', '/bots/bot-a/integrations/nope/rollback', { to: 1 })).status).toBe(404);
  });

  it('refuses a rollback to a version whose entity is no longer defined', async () => {
    const c = await withTwoVersions();
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Ticket', {});
    await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Ticket', code: 'return 3;' });
    expect((await c.admin('DELETE', '/bots/bot-a/entities/Order')).status).toBe(200);
    const reply = await c.admin('POST', '/bots/bot-a/integrations/ack/rollback', { to: 1 });
    expect(reply.status).toBe(400);
    expect(reply.json.detail).toContain("Entity 'Order' is not defined");
  });
});

describe('deletions through the admin API', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('deletes an integration with every version and its secrets; a new deploy goes on from the last version number', async () => {
    const c = await withTwoVersions();
    world = c.world;
    expect((await c.admin('PUT', '/bots/bot-a/integrations/ack/secrets/API_KEY', { value: 'secret-value' })).status).toBeLessThan(300);
    const reply = await c.admin('DELETE', '/bots/bot-a/integrations/ack');
    expect(reply.json).toEqual({ botId: 'bot-a', integrationId: 'ack', deleted: true, cancelledInvocations: 0 });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack')).status).toBe(404);
    expect(await c.world.store.secrets.list({ botId: 'bot-a', integrationId: 'ack' })).toEqual([]);
    expect((await c.admin('DELETE', '/bots/bot-a/integrations/ack')).status).toBe(404);
    expect((await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'return 9;' })).json.version).toBe(3);
  });

  it('refuses to delete an integration or a bot with invocations in flight (409) unless forced, which cancels them', async () => {
    const c = await withTwoVersions();
    world = c.world;
    const queued = newInvocation({ createdAt: c.world.clock.now() });
    await c.world.store.invocations.create(queued);
    for (const path of ['/bots/bot-a/integrations/ack', '/bots/bot-a']) {
      const refused = await c.admin('DELETE', path);
      expect(refused.status).toBe(409);
      expect(refused.json).toMatchObject({ type: 'urn:gi:problem:in-use', inFlight: 1 });
      expect(refused.json.detail).toContain('force=true');
    }
    expect((await c.admin('DELETE', '/bots/bot-a/integrations/ack?force=maybe')).status).toBe(400);
    const forced = await c.admin('DELETE', '/bots/bot-a/integrations/ack?force=true');
    expect(forced.json).toMatchObject({ deleted: true, cancelledInvocations: 1 });
    // Kept until it expires, as Cancelled.
    expect((await c.world.store.invocations.get({ botId: 'bot-a', id: queued.id }))?.status).toBe('Cancelled');
  });

  it('refuses to delete an entity an integration uses, naming it', async () => {
    const c = await withTwoVersions();
    world = c.world;
    const refused = await c.admin('DELETE', '/bots/bot-a/entities/Order');
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ integrations: ['ack'] });
    expect((await c.admin('DELETE', '/bots/bot-a/entities/Nope')).status).toBe(404);
  });

  it('deletes a whole bot: its tokens stop authenticating, its catalog, quotas and secrets are gone', async () => {
    const c = await withTwoVersions();
    world = c.world;
    const { token } = (await c.admin('POST', '/bots/bot-a/tokens', { label: 'x' })).json;
    await c.admin('PUT', '/bots/bot-a/secrets/SHARED', { value: 'secret-value' });
    await c.admin('PUT', '/bots/other/entities/Order', {});
    expect(await c.world.tokens.verify(`Bearer ${token}`, 'bot-a')).toBeTruthy();
    const reply = await c.admin('DELETE', '/bots/bot-a');
    expect(reply.json).toEqual({ botId: 'bot-a', deleted: true, cancelledInvocations: 0 });
    await expect(c.world.tokens.verify(`Bearer ${token}`, 'bot-a')).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await c.admin('GET', '/bots')).json.bots).toEqual(['other']);
    expect((await c.admin('GET', '/bots/bot-a/integrations')).json.integrations).toEqual([]);
    expect(await c.world.store.secrets.page(null, 10)).toEqual([]);
    expect((await c.admin('DELETE', '/bots/bot-a')).status).toBe(404);
  });
});
