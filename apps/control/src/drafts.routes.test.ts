import { MAX_REPLAY_REQUESTS } from '@gi/domain';
import { newInvocation, type SmallServices } from '@gi/testing';
import { controlApp } from './control-app.fixture';

/** A bot with entity Order, integration ack at version 1, and two stored requests of it (the newest last). */
async function withLiveVersion() {
  const c = controlApp();
  await c.admin('PUT', '/bots/bot-a/entities/Order', {});
  expect((await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'return 1;' })).json.version).toBe(1);
  const ids: string[] = [];
  for (const orderId of [1, 2]) {
    const invocation = newInvocation({ createdAt: c.world.clock.now() + orderId, entity: { RequestParams: '', RequestHeaders: '', RequestBody: { orderId }, ResponseBody: null } });
    await c.world.store.invocations.create(invocation);
    await c.world.store.invocations.claim(invocation, 'executor', 60_000, c.world.clock.now());
    await c.world.store.invocations.complete(invocation, 'executor', { status: 'Completed', responseBody: { ran: 'return 1;', body: { orderId } } }, [], c.world.clock.now());
    ids.push(invocation.id);
  }
  return { ...c, ids };
}

describe('drafts through the admin API', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('deploys a draft beside the live version, lists it apart, and publishes it as the next version', async () => {
    const c = await withLiveVersion();
    world = c.world;
    const drafted = await c.admin('PUT', '/bots/bot-a/integrations/ack/draft', { entityName: 'Order', code: 'return 2;', timeoutSeconds: 30 });
    expect(drafted.status).toBe(200);
    expect(drafted.json).toMatchObject({ integrationId: 'ack', draft: true, liveVersion: 1, timeoutSeconds: 30 });
    expect(drafted.json).not.toHaveProperty('code');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack')).json).toMatchObject({ version: 1, code: 'return 1;' });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/draft')).json).toMatchObject({ code: 'return 2;', liveVersion: 1, sources: [] });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/versions')).json).toMatchObject({ latest: 1, versions: [{ version: 1 }], draft: { draftedAt: drafted.json.draftedAt } });

    const published = await c.admin('POST', '/bots/bot-a/integrations/ack/publish');
    expect(published.status).toBe(200);
    expect(published.json).toMatchObject({ integrationId: 'ack', version: 2, timeoutSeconds: 30, publishedDraftAt: drafted.json.draftedAt });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack')).json).toMatchObject({ version: 2, code: 'return 2;' });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack?version=1')).json.code).toBe('return 1;');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/versions')).json).toMatchObject({ latest: 2, draft: null });
    const again = await c.admin('POST', '/bots/bot-a/integrations/ack/publish');
    expect([again.status, again.json.detail]).toEqual([404, "Integration 'ack' of bot 'bot-a' has no draft; deploy one first (gi connector deploy --draft)."]);
  });

  it('refuses a draft of no integration, one that does not compile, and one of an unknown entity', async () => {
    const c = await withLiveVersion();
    world = c.world;
    const first = await c.admin('PUT', '/bots/bot-a/integrations/new/draft', { entityName: 'Order', code: 'return 1;' });
    expect([first.status, first.json.detail]).toEqual([404, expect.stringContaining('deploy its first version without --draft')]);
    expect((await c.admin('PUT', '/bots/bot-a/integrations/ack/draft', { entityName: 'Order', code: 'a syntax error' })).json).toMatchObject({ status: 400, line: 1, column: 8 });
    expect((await c.admin('PUT', '/bots/bot-a/integrations/ack/draft', { entityName: 'Ticket', code: 'return 1;' })).status).toBe(400);
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack/draft')).status).toBe(404);
  });

  it('replays the latest stored requests against the draft with its secrets, outbound blocked unless asked, and changes nothing stored', async () => {
    const c = await withLiveVersion();
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/integrations/ack/secrets/API_KEY', { value: 'draft-secret-value-0123' });
    await c.admin('PUT', '/bots/bot-a/integrations/ack/draft', { entityName: 'Order', code: 'return 2;' });
    const stored = () => Promise.all(c.ids.map(async (id) => (await c.admin('GET', `/bots/bot-a/invocations/${id}`)).json));
    const before = await stored();

    const reply = await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { last: 2 });

    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ integrationId: 'ack', publishedVersion: 1, outbound: 'block', changed: 2 });
    expect(reply.json.replayed.map((r: { invocationId: string }) => r.invocationId)).toEqual([c.ids[1], c.ids[0]]);
    expect(reply.json.replayed[0]).toMatchObject({
      published: { version: 1, status: 'Completed', responseBody: { ran: 'return 1;', body: { orderId: 2 } } },
      draft: { status: 'Completed', responseBody: { ran: 'return 2;', body: { orderId: 2 }, secrets: ['API_KEY'], blocked: true }, durationMs: 1 },
    });
    expect(reply.json.replayed[0].diff).toContain('-  "ran": "return 1;",\n+  "ran": "return 2;",');
    expect(JSON.stringify(reply.json)).not.toContain('draft-secret-value-0123');
    const sent = await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { ids: [c.ids[0]], outbound: 'send' });
    expect(sent.json.replayed).toMatchObject([{ invocationId: c.ids[0], draft: { responseBody: { blocked: false } } }]);
    expect(await stored()).toEqual(before);
  });

  it(`refuses a replay of more than ${MAX_REPLAY_REQUESTS} requests, of unknown ids, without a draft, or of a bad shape`, async () => {
    const c = await withLiveVersion();
    world = c.world;
    expect((await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { last: 1 })).json).toMatchObject({ status: 404, detail: expect.stringContaining('has no draft') });
    await c.admin('PUT', '/bots/bot-a/integrations/ack/draft', { entityName: 'Order', code: 'return 2;' });
    const tooMany = await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { last: MAX_REPLAY_REQUESTS + 1 });
    expect([tooMany.status, tooMany.json.detail]).toEqual([400, `last: a replay re-runs at most ${MAX_REPLAY_REQUESTS} stored requests`]);
    expect((await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { last: 1, ids: [c.ids[0]] })).status).toBe(400);
    expect((await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { outbound: 'maybe' })).status).toBe(400);
    expect((await c.admin('POST', '/bots/bot-a/integrations/ack/replay', { ids: ['nope'] })).json).toMatchObject({ status: 404, detail: expect.stringContaining("'nope'") });
    expect((await c.admin('POST', '/bots/bot-a/integrations/nope/replay', {})).status).toBe(404);
  });

  it('answers 401 without the admin token and to a bot token on every draft route', async () => {
    const c = await withLiveVersion();
    world = c.world;
    const { token } = await c.world.tokens.mint('bot-a', { label: 'bot' });
    const routes: Array<[string, string]> = [
      ['PUT', '/admin/bots/bot-a/integrations/ack/draft'],
      ['GET', '/admin/bots/bot-a/integrations/ack/draft'],
      ['POST', '/admin/bots/bot-a/integrations/ack/publish'],
      ['POST', '/admin/bots/bot-a/integrations/ack/replay'],
    ];
    for (const [method, path] of routes) {
      const body = method === 'GET' ? undefined : '{}';
      const headers = { 'content-type': 'application/json' };
      expect([method, path, (await c.call({ method, path, headers, body })).status]).toEqual([method, path, 401]);
      expect([method, path, (await c.call({ method, path, headers: { ...headers, authorization: `Bearer ${token}` }, body })).status]).toEqual([method, path, 401]);
    }
  });
});
