import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from './api-client';
import { busy } from './connectors';
import { startService } from './service-process';

describe('durability across kill -9', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gi-durable-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('completes every accepted invocation after a crash, each with exactly one outcome', async () => {
    const first = await startService({ dataDir, env: { EXECUTOR_CONCURRENCY: '2' } });
    const api = new Api(first.baseUrl);
    const token = await api.setUp('acme', 'Order', 'busy', busy);
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        api.postJson(api.webhookUrl('acme', 'Order', 'busy', `asyncResponse=true&ms=100&n=${i}`), token, { n: i }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(40).fill(202));
    const accepted = replies.map((r) => r.json.invocationId as string);
    // Every call was answered 202, so every invocation must be durable: kill the process without warning.
    await first.stop('SIGKILL');
    const restartedAt = Date.now();

    const second = await startService({ dataDir });
    try {
      const api2 = new Api(second.baseUrl);
      for (const id of accepted) {
        const polled = await api2.poll('acme', token, id, 'waitSeconds=30');
        expect(polled.status).toBe(200);
        expect(polled.json).toEqual({ done: true, ms: 100 });
      }
      const after = (await api2.admin('GET', '/bots/acme/invocations?limit=500')).json.invocations as Array<{ id: string; status: string; attempt: number; finishedAt: string }>;
      expect(after).toHaveLength(accepted.length);
      expect(new Set(after.map((i) => i.id))).toEqual(new Set(accepted));
      expect(after.every((i) => i.status === 'Completed')).toBe(true);
      // The crash really interrupted work: some invocations were finished by the restarted process.
      expect(after.filter((i) => Date.parse(i.finishedAt) >= restartedAt).length).toBeGreaterThan(0);
      // Interrupted runs were retried once; none ran more often than that.
      expect(Math.max(...after.map((i) => i.attempt))).toBeLessThanOrEqual(2);
    } finally {
      await second.stop();
    }
  });
});
