import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { busy } from './connectors';
import { distributedDeployment } from './distributed-env';
import { startService, type ServiceProcess } from './service-process';

/** The JSON log lines a process wrote. */
const logLines = (service: ServiceProcess) =>
  service.output.flatMap((line) => {
    try {
      return [JSON.parse(line) as { msg?: string; invocationId?: string; level?: number }];
    } catch {
      return [];
    }
  });

/**
 * An invocation whose handling crashes the executor (a fault injected into this test build) is
 * quarantined: by its first crash when it was the one invocation in hand, else by its second (re-runs
 * are tracked). On restart it is Failed and never runs again, while invocations cut short by the
 * crash, or by an unrelated kill (durability.e2e.ts), run again.
 */
describe('a crash-looping invocation', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gi-quarantine-'));
  const env = { FAULT_INJECTION: 'executor-crash-in-run', ALLOW_FAULT_INJECTION: 'true' };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is quarantined after the first crash it caused; the restarted service never runs it again and serves the next calls', async () => {
    const first = await startService({ dataDir, env });
    const api = new Api(first.baseUrl);
    const token = await api.setUp('acme', 'Order', 'busy', busy);
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', resolve));

    // The sync caller's connection dies with the process.
    await expect(api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'ms=2000&fault=crash'), token, {})).rejects.toThrow();
    expect(await exited).toBe(1);
    const quarantined = logLines(first).find((line) => line.msg === 'quarantined: its run crashed the executor');
    expect(quarantined?.invocationId).toEqual(expect.any(String));

    // Restarted with the same fault: running that invocation again would crash it again.
    const second = await startService({ dataDir, env });
    try {
      const api2 = new Api(second.baseUrl);
      const listed = (await api2.admin('GET', '/bots/acme/invocations?limit=10')).json.invocations as Array<{ id: string; status: string; attempt: number; error?: { title: string } }>;
      expect(listed).toEqual([expect.objectContaining({ id: quarantined?.invocationId, status: 'Failed', attempt: 1, error: expect.objectContaining({ title: 'Quarantined' }) })]);
      const polled = await api2.poll('acme', token, quarantined?.invocationId as string, 'waitSeconds=0');
      expect([polled.status, polled.json?.title, polled.json?.detail]).toEqual([500, 'Quarantined', 'Its run crashed the executor, so it is not run again.']);

      const next = await api2.postJson(api2.webhookUrl('acme', 'Order', 'busy', 'ms=10'), token, {});
      expect([next.status, next.json]).toEqual([200, { done: true, ms: 10 }]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(second.child.exitCode).toBeNull();
      expect(logLines(second).filter((line) => (line.level ?? 0) >= 50)).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it('with other work in hand, is quarantined by its second crash (as a re-run); the work it interrupted still completes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-quarantine-busy-'));
    const started = await startService({ dataDir: dir, env });
    try {
      const api = new Api(started.baseUrl);
      const token = await api.setUp('acme', 'Order', 'busy', busy);
      const other = await api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'asyncResponse=true&ms=1500'), token, {});
      expect(other.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Two invocations in hand: the first crash cannot be laid to either, and both run again.
      const crashed = new Promise<number | null>((resolve) => started.child.once('exit', resolve));
      await expect(api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'ms=1500&fault=crash'), token, {})).rejects.toThrow();
      expect(await crashed).toBe(1);
      expect(logLines(started).some((line) => line.msg === 'quarantined: its run crashed the executor')).toBe(false);

      // Re-runs are tracked: the second crash is laid to the one that caused it.
      const second = await startService({ dataDir: dir, env });
      const crashedAgain = await new Promise<number | null>((resolve) => second.child.once('exit', resolve));
      expect(crashedAgain).toBe(1);
      const quarantined = logLines(second).find((line) => line.msg === 'quarantined: its run crashed the executor');
      expect(quarantined?.invocationId).toEqual(expect.any(String));
      expect(quarantined?.invocationId).not.toBe(other.json.invocationId);

      const third = await startService({ dataDir: dir, env });
      try {
        const api3 = new Api(third.baseUrl);
        const polled = await api3.poll('acme', token, other.json.invocationId, 'waitSeconds=20');
        expect([polled.status, polled.json]).toEqual([200, { done: true, ms: 1500 }]);
        const listed = (await api3.admin('GET', '/bots/acme/invocations?limit=10')).json.invocations as Array<{ id: string; status: string; error?: { title: string } }>;
        expect(listed.find((i) => i.id === quarantined?.invocationId)).toMatchObject({ status: 'Failed', error: { title: 'Quarantined' } });
        expect(third.child.exitCode).toBeNull();
      } finally {
        await third.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in the distributed deployment, the sync caller waiting at the gateway gets the quarantine once the executor is back', async () => {
    const { dataDir: shared, prefix, start } = distributedDeployment('quarantine');
    const [control, gateway] = await Promise.all([start('control'), start('gateway')]);
    let executor = await start('executor', [], env);
    try {
      const token = await new Api(control.baseUrl).setUp('acme', 'Order', 'busy', busy);
      const api = new Api(gateway.baseUrl);
      const exited = new Promise<number | null>((resolve) => executor.child.once('exit', resolve));
      const waiting = api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'ms=2000&fault=crash'), token, {});
      expect(await exited).toBe(1);
      executor = await start('executor', [], env);
      const reply = await waiting;
      expect([reply.status, reply.json?.title]).toEqual([500, 'Quarantined']);
      const next = await api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'ms=10'), token, {});
      expect([next.status, next.json]).toEqual([200, { done: true, ms: 10 }]);
      expect(executor.child.exitCode).toBeNull();
    } finally {
      await Promise.all([control, gateway, executor].map((s) => s.stop()));
      await deleteBusTopology(prefix, ['default'], 6);
      rmSync(shared, { recursive: true, force: true });
    }
  });
});
