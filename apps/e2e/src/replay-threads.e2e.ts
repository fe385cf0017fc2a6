import { Api } from './api-client';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * Replays run on sandbox threads of their own: with one sandbox thread for live
 * calls, and a live run holding it with 6 s of CPU, a replay against a draft is answered while that
 * run still goes on; on shared threads it waited for the run to end.
 */
const code = `const e = Context.GetRequestEntity();
const end = Date.now() + (e.RequestBody.spinMs ?? 0);
while (Date.now() < end) {}
e.ResponseBody = { done: true };
Context.SetResponseEntity(e);
`;

describe('replays beside a busy live sandbox (embedded service, SANDBOX_WORKERS=1)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;

  beforeAll(async () => {
    service = await startService({ env: { SANDBOX_WORKERS: '1' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'spin', code);
  });
  afterAll(() => service.dispose());

  it('answers a replay while a live run holds the live sandbox thread', async () => {
    const stored = await api.postJson(api.webhookUrl('acme', 'Order', 'spin'), token, { spinMs: 0 });
    expect(stored.status).toBe(200);
    const storedId = stored.headers.get('x-invocation-id');
    expect((await api.admin('PUT', '/bots/acme/integrations/spin/draft', { entityName: 'Order', code })).status).toBe(200);

    const busy = await api.postJson(api.webhookUrl('acme', 'Order', 'spin', 'asyncResponse=true'), token, { spinMs: 6000 });
    expect(busy.status).toBe(202);
    const busyId = busy.json.invocationId as string;
    const status = async () => (await api.admin('GET', `/bots/acme/invocations/${busyId}`)).json.status;
    while ((await status()) !== 'Running') await new Promise((resolve) => setTimeout(resolve, 50));

    const replay = await api.admin('POST', '/bots/acme/integrations/spin/replay', { ids: [storedId] });
    expect(replay.status).toBe(200);
    expect(replay.json.replayed).toHaveLength(1);
    // The live run has not ended yet: the replay did not wait for its thread.
    expect(await status()).toBe('Running');
    expect((await api.poll('acme', token, busyId, 'waitSeconds=30')).status).toBe(200);
  });
});
