import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { Api } from './api-client';
import { freshRequest, isAlive, logLines, waitForLogs } from './embedded-processes';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * `gi up --processes 2`: one process is killed (SIGKILL) while both run jobs. The primary starts another
 * in its place and has the live one take over the jobs the dead one was running, at once (not once their
 * 30 s leases end): every accepted job completes, each outcome recorded once, and only the interrupted
 * jobs run twice.
 */
describe('an embedded process killed mid-job', () => {
  let service: ServiceProcess;
  let delayServer: Server;
  const hits = new Map<string, number>();

  afterAll(async () => {
    await service?.dispose();
    delayServer?.close();
  });

  it('is replaced, and its jobs complete once with nothing lost', async () => {
    delayServer = createServer((req, res) => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const n = query.get('n') ?? '';
      hits.set(n, (hits.get(n) ?? 0) + 1);
      setTimeout(() => res.end('{"ok":true}'), Number(query.get('ms') ?? 0));
    });
    await new Promise<void>((resolve) => delayServer.listen(0, '127.0.0.1', resolve));
    const port = (delayServer.address() as { port: number }).port;
    service = await startService({
      args: ['--processes', '2'],
      // The default lease (30 s): the jobs must not wait for it.
      env: { CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', LOG_LEVEL: 'debug' },
    });
    const workers = await waitForLogs(service.output, 'process listening', 2);
    const api = new Api(service.baseUrl);
    const code = `
      const e = Context.GetRequestEntity();
      const ms = Number(/(?:^|&)ms=(\\d+)/.exec(e.RequestParams)[1]);
      const n = /(?:^|&)n=(\\d+)/.exec(e.RequestParams)[1];
      await Context.Http.Request({ method: 'GET', url: 'http://127.0.0.1:${port}/sleep?ms=' + ms + '&n=' + n, timeoutMs: 10000 });
      e.ResponseBody = { slept: ms };
      Context.SetResponseEntity(e);`;
    const token = await api.setUp('acme', 'Order', 'sleepy', code, { allowedHosts: ['127.0.0.1'] });

    // Six connections handed out in turn: three jobs in each process.
    const accepted = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        freshRequest(api.webhookUrl('acme', 'Order', 'sleepy', `asyncResponse=true&ms=3000&n=${n}`), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        }),
      ),
    );
    expect(accepted.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    const ids = accepted.map((r) => r.json.invocationId as string);
    await until(() => hits.size === 6, 15_000, 'every job to be running');

    const victim = workers[0].pid as number;
    process.kill(victim, 'SIGKILL');
    const killedAt = Date.now();
    await waitForLogs(service.output, 'embedded process replaced', 1);
    expect(isAlive(victim)).toBe(false);
    const [takeOver] = await waitForLogs(service.output, 'took over the jobs of an ended process', 1);
    expect(takeOver).toMatchObject({ from: workers[0].ownerId });

    const statusOf = async (id: string) => (await api.admin('GET', `/bots/acme/invocations/${id}`)).json as { status: string; attempt: number; request?: unknown };
    // A re-run takes its 3 s; waiting for the leases would take 30 s more.
    await until(async () => (await Promise.all(ids.map(statusOf))).every((s) => s.status === 'Completed'), 45_000, 'every job to complete');
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    const finals = await Promise.all(ids.map(statusOf));
    const attempts = finals.map((f) => f.attempt);
    // The dead process's jobs ran again (attempt 2), the others once; each ran as often as it started.
    expect(attempts.filter((a) => a === 2).length).toBeGreaterThanOrEqual(1);
    expect(attempts.every((a) => a === 1 || a === 2)).toBe(true);
    expect(ids.map((_id, n) => hits.get(String(n)))).toEqual(attempts);
    // Each outcome was recorded once. The lines leave in batches (up to 50 ms after the store has the outcome).
    const finished = () => logLines(service.output, 'invocation finished').map((line) => line.invocationId);
    await until(() => ids.every((id) => finished().includes(id)), 3000, "every job's 'invocation finished' line");
    for (const id of ids) expect(finished().filter((f) => f === id)).toHaveLength(1);

    // The replacement takes calls like the others.
    const after = await Promise.all(
      [0, 1].map(() =>
        freshRequest(api.webhookUrl('acme', 'Order', 'sleepy', 'ms=10&n=99'), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' }),
      ),
    );
    expect(after.map((r) => r.status)).toEqual([200, 200]);
  }, 90_000);
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
