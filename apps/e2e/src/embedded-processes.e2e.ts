import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from './api-client';
import { busy, example } from './connectors';
import { freshRequest, isAlive, logLines, waitForLogs } from './embedded-processes';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** `gi up --processes 2`: two processes on one port and one SQLite store, started and stopped by a primary. */
describe('gi up --processes 2', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  beforeAll(async () => {
    service = await startService({ args: ['--processes', '2'], env: { EMBEDDED_PROCESSES: '1' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'busy', busy);
  });
  afterAll(() => service.dispose());

  const asyncCall = (ms: number) =>
    freshRequest(api.webhookUrl('acme', 'Order', 'busy', `asyncResponse=true&ms=${ms}`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
  const poll = (id: string, waitSeconds: number) =>
    freshRequest(`${service.baseUrl}/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${id}&waitSeconds=${waitSeconds}`, { headers: { authorization: `Bearer ${token}` } });

  it('starts two processes behind one banner', async () => {
    expect(logLines(service.output, 'listening')).toHaveLength(1);
    const processes = await waitForLogs(service.output, 'process listening', 2);
    expect(new Set(processes.map((line) => line.pid)).size).toBe(2);
    expect(processes.every((line) => line.pid !== service.child.pid)).toBe(true);
    expect(logLines(service.output, 'listening')[0]).toMatchObject({ processes: 2, pid: service.child.pid });
  });

  it('ends a long poll answered by the other process as soon as the run ends', async () => {
    const accepted = await asyncCall(1500);
    expect(accepted.status).toBe(202);
    const id = accepted.json.invocationId as string;
    // Four connections handed out in turn: two reach the process that runs the job, two the other one.
    const polls = await Promise.all(Array.from({ length: 4 }, () => poll(id, 25)));
    for (const reply of polls) {
      expect(reply.status).toBe(200);
      // Woken by the relayed completion, not by the end of its 25 s wait.
      expect(reply.ms).toBeLessThan(8_000);
    }
  });

  it('has each process enforce its share of a quota', async () => {
    // Both processes count two gateways: the second learns it at its first heartbeat, the first at its next.
    await waitForLogs(service.output, 'gateways sharing the quotas', 2);
    const ack = await api.setUp('quota', 'Order', 'ack', example('ack'));
    expect((await api.admin('PUT', '/bots/quota/quotas', { ratePerSecond: 0.01, burst: 10 })).status).toBe(200);
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        freshRequest(api.webhookUrl('quota', 'Order', 'ack'), { method: 'POST', headers: { authorization: `Bearer ${ack}`, 'content-type': 'application/json' }, body: '{}' }),
      ),
    );
    const accepted = replies.filter((r) => r.status === 200).length;
    expect(replies.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    // A burst of 10 shared by two: 5 each, so 10 in all (each process alone would let 10 through: 20).
    expect(accepted).toBeGreaterThanOrEqual(8);
    expect(accepted).toBeLessThanOrEqual(11);
  });

  it('answers /metrics for every process, whichever one a scrape reaches', async () => {
    const scrape = async () => {
      const reply = await freshRequest(`${service.baseUrl}/metrics`);
      expect(reply.status).toBe(200);
      return String(reply.json.text);
    };
    /** The sum of a metric's series (its labels aside). */
    const total = (text: string, name: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    const before = await Promise.all(Array.from({ length: 4 }, scrape));
    const outcomesBefore = before.map((text) => total(text, 'gi_invocation_outcomes_total'));
    // Connections in turn: each process's own counter would differ from the other's.
    expect(new Set(outcomesBefore).size).toBe(1);
    const calls = await Promise.all(
      Array.from({ length: 6 }, () =>
        freshRequest(api.webhookUrl('acme', 'Order', 'busy', 'ms=1'), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' }),
      ),
    );
    expect(calls.map((reply) => reply.status)).toEqual(Array(6).fill(200));
    for (const text of await Promise.all(Array.from({ length: 4 }, scrape))) {
      expect(total(text, 'gi_invocation_outcomes_total')).toBe(outcomesBefore[0] + 6);
      // One release, and the count every process sees: not summed over the processes.
      expect(text).toMatch(/^gi_build_info\{version="[^"]+"\} 1$/m);
      expect(total(text, 'gi_gateway_peers')).toBe(2);
    }
  });

  it('stops every process gracefully on SIGTERM', async () => {
    const pids = logLines(service.output, 'process listening').map((line) => line.pid as number);
    const running = await asyncCall(1000);
    expect(running.status).toBe(202);
    expect(await service.stop()).toBe(0);
    expect(pids.every((pid) => !isAlive(pid))).toBe(true);
    const stopped = new Set(logLines(service.output, 'stopped').map((line) => line.pid));
    expect(stopped).toEqual(new Set([service.child.pid, ...pids]));
    expect(logLines(service.output, 'a process ended; starting another in its place')).toHaveLength(0);
  });
});

describe('gi up startup with several processes', () => {
  it('creates the admin token once and shares it', async () => {
    const service = await startService({ args: ['--processes', '2'], env: { ADMIN_TOKEN: undefined as unknown as string } });
    try {
      expect(service.output.filter((line) => line.startsWith('Generated the admin token'))).toHaveLength(1);
      expect(service.output.filter((line) => line.startsWith('Using the admin token'))).toHaveLength(0);
      const adminToken = readFileSync(join(service.dataDir, 'admin-token'), 'utf8').trim();
      await waitForLogs(service.output, 'process listening', 2);
      // Two connections: one per process, both accept the token.
      const replies = await Promise.all([0, 1].map(() => freshRequest(`${service.baseUrl}/admin/bots`, { headers: { authorization: `Bearer ${adminToken}` } })));
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      expect(existsSync(join(service.dataDir, 'token-secret'))).toBe(true);
    } finally {
      await service.dispose();
    }
  });

  it('answers the connections made right after a process is killed (none held open forever), and replaces it', async () => {
    const service = await startService({ args: ['--processes', '2'] });
    try {
      const [victim] = await waitForLogs(service.output, 'process listening', 2);
      // Both processes have served a connection: each is waiting for its next one.
      expect((await Promise.all([0, 1].map(() => freshRequest(`${service.baseUrl}/healthz`)))).map((r) => r.status)).toEqual([200, 200]);
      process.kill(victim.pid as number, 'SIGKILL');
      // At once, before the primary may have heard of the death: handed to the dead process, such a
      // connection was held open unanswered forever. Each gets 5 s here.
      const replies = await Promise.all([0, 1, 2, 3].map(() => freshRequest(`${service.baseUrl}/healthz`, { timeoutMs: 5000 })));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      await waitForLogs(service.output, 'embedded process replaced', 1);
      const after = await Promise.all([0, 1].map(() => freshRequest(`${service.baseUrl}/healthz`, { timeoutMs: 5000 })));
      expect(after.map((r) => r.status)).toEqual([200, 200]);
    } finally {
      await service.dispose();
    }
  }, 60_000);

  it('--processes 1 runs today\'s single process, with no cluster', async () => {
    const service = await startService({ args: ['--processes', '1'], env: { EMBEDDED_PROCESSES: '4' } });
    try {
      const pids = new Set(service.output.flatMap((line) => (line.startsWith('{') ? [(JSON.parse(line) as { pid: number }).pid] : [])));
      expect(pids).toEqual(new Set([service.child.pid]));
      expect(logLines(service.output, 'process listening')).toHaveLength(0);
      expect(childrenOf(service.child.pid!)).toEqual([]);
    } finally {
      await service.dispose();
    }
  });
});

function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
