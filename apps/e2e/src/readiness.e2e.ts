import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, send } from './api-client';
import type { Reply } from './api-client';
import { example } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** Polls `/readyz` until its status is `status`; the last reply otherwise. */
async function readinessUntil(service: ServiceProcess, status: number, timeoutMs = 10_000): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await send(`${service.baseUrl}/readyz`);
    if (reply.status === status || Date.now() > deadline) return reply;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The JSON log lines a service wrote with message `msg`. */
const linesOf = (service: ServiceProcess, msg: string) =>
  service.output.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string };
      return entry.msg === msg ? [entry as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

/** Waits until the service wrote a line with message `msg` (lines are read from its stdout as they come). */
async function lineWritten(service: ServiceProcess, msg: string): Promise<void> {
  for (const deadline = Date.now() + 5000; linesOf(service, msg).length === 0; await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() > deadline) throw new Error(`no "${msg}" line`);
  }
}

/**
 * Readiness that tells the truth when the disk does not take writes: the embedded service (a SQLite store
 * and uploaded files under DATA_DIR) says which of its dependencies fails, and recovers by itself.
 */
describe('readiness of the embedded service when its disk refuses writes or runs low', () => {
  let service: ServiceProcess;
  afterEach(() => service?.dispose());

  it('says the store refuses writes while every write fails, logs the refusals once per window, and is ready again once writes work', async () => {
    service = await startService();
    const api = new Api(service.baseUrl);
    const token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    expect((await readinessUntil(service, 200)).status).toBe(200);

    // Every file of the process may now grow to 1 byte only: each write of the SQLite store (its WAL,
    // its database file) fails with EFBIG, as on a failing or read-only disk. Reads still work.
    const pid = String(service.child.pid);
    execFileSync('prlimit', ['--pid', pid, '--fsize=1:unlimited']);
    try {
      const refused = [];
      for (let i = 0; i < 30; i++) refused.push(await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, { orderId: i }));
      expect(refused.map((reply) => reply.status)).toEqual(Array(30).fill(503));
      const notReady = await readinessUntil(service, 503);
      expect([notReady.status, notReady.json]).toEqual([503, { status: 'not ready', checks: { store: 'ok', storeWrites: 'refusing writes', disk: 'ok' } }]);
      // A later line, written after every refusal's: by then the refusals logged what they log.
      await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), 'not-a-token', {});
      await lineWritten(service, 'authentication refused');
      expect(linesOf(service, 'store write failed')).toHaveLength(1);
      expect(linesOf(service, 'request failed').filter((line) => String(line.route).endsWith('/GenericIntegration'))).toHaveLength(1);
    } finally {
      execFileSync('prlimit', ['--pid', pid, '--fsize=unlimited:unlimited']);
    }
    expect(await readinessUntil(service, 200)).toMatchObject({ status: 200, json: { status: 'ready' } });
    const sync = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 7 });
    expect([sync.status, sync.json]).toEqual([200, { Status: 'Accepted', Message: 'order 7' }]);
  });

  it('says the disk is low on space while its free space is below READY_MIN_FREE_DISK, and is ready again once there is room', async () => {
    // The floor sits 512 MiB below what is free now; a 1 GiB file takes the disk under it.
    const dataDir = mkdtempSync(join(tmpdir(), 'gi-e2e-disk-'));
    const stats = statfsSync(dataDir);
    const free = stats.bavail * stats.bsize;
    expect({ freeGiB: Math.floor(free / 1024 ** 3), enough: free > 2 * 1024 ** 3 }).toMatchObject({ enough: true });
    const floor = free - 512 * 1024 ** 2;
    service = await startService({ dataDir, env: { READY_MIN_FREE_DISK: String(floor) } });
    const filler = join(dataDir, 'filler');
    try {
      expect((await readinessUntil(service, 200)).status).toBe(200);
      execFileSync('fallocate', ['-l', String(1024 ** 3), filler]);
      const low = await readinessUntil(service, 503);
      expect([low.status, low.json]).toEqual([503, { status: 'not ready', checks: { store: 'ok', storeWrites: 'ok', disk: 'low on space' } }]);
      rmSync(filler);
      expect(await readinessUntil(service, 200)).toMatchObject({ status: 200, json: { status: 'ready', checks: { disk: 'ok' } } });
    } finally {
      rmSync(filler, { force: true });
      await service.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
