import { Api } from './api-client';
import { busy } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

interface Listed {
  id: string;
  status: string;
  createdAt: string;
  finishedAt: string | null;
}

describe('fairness: a result is recorded when its run ends (embedded service, two sandbox threads)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;

  beforeAll(async () => {
    service = await startService({ env: { SANDBOX_WORKERS: '2', EXECUTOR_CONCURRENCY: '4' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'busy', busy);
  });
  afterAll(() => service.dispose());

  it('completes the first of four async 1.5 s calls about 1.5 s after they were accepted, not 3 s', async () => {
    // Both threads have their engine up and the connector compiled.
    for (const reply of await Promise.all([1, 2].map(() => api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'ms=50'), token, {})))) expect(reply.status).toBe(200);
    const accepted = await Promise.all([1, 2, 3, 4].map(() => api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'ms=1500&asyncResponse=true'), token, {})));
    const ids = accepted.map((reply) => {
      expect(reply.status).toBe(202);
      return reply.json.invocationId as string;
    });
    for (const id of ids) expect((await api.poll('acme', token, id, 'waitSeconds=30')).status).toBe(200);

    const listed = (await api.admin('GET', '/bots/acme/invocations?integrationId=busy&limit=100')).json.invocations as Listed[];
    const mine = listed.filter((invocation) => ids.includes(invocation.id));
    expect(mine.map((invocation) => invocation.status)).toEqual(['Completed', 'Completed', 'Completed', 'Completed']);
    const acceptedAt = Math.min(...mine.map((invocation) => Date.parse(invocation.createdAt)));
    const finished = mine.map((invocation) => Date.parse(invocation.finishedAt as string) - acceptedAt).sort((a, b) => a - b);
    // Two threads: two runs end at about 1.5 s, two at about 3 s. A result held for the run after it
    // on the same thread would be recorded at 3 s at the earliest.
    expect(finished[0]).toBeGreaterThan(1400);
    expect(finished[0]).toBeLessThan(2400);
    expect(finished[3]).toBeGreaterThan(2900);
    expect(finished[3]).toBeLessThan(8000);
  }, 60_000);
});
