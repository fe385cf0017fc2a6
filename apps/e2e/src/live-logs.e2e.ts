import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from './api-client';
import { serviceWithConnector } from './deployed-connector';
import { startService } from './service-process';

interface LogView {
  at: string;
  level: string;
  message: string;
  attempt: number;
}

/** Logs a numbered step every `ms` milliseconds, `steps` times (both from the query), waiting on a timer between them. */
const STEPS = `
const params = new URLSearchParams(Context.GetRequestEntity().RequestParams);
const steps = Number(params.get('steps'));
const ms = Number(params.get('ms'));
for (let i = 1; i <= steps; i++) {
  Context.Log('step ' + i + ' of ' + steps);
  await new Promise((resolve) => setTimeout(resolve, ms));
}
console.error('all steps done');
Context.SetResponseEntity({ ResponseBody: { steps } });
`;

/** Reads the invocation through the control API until `until` holds; fails after `timeoutMs`. */
async function waitForInvocation(api: Api, botId: string, id: string, until: (inv: { status: string; attempt: number; logs: LogView[] }) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await api.admin('GET', `/bots/${botId}/invocations/${id}`);
    expect(reply.status).toBe(200);
    if (until(reply.json)) return reply.json as { status: string; attempt: number; logs: LogView[] };
    if (Date.now() > deadline) throw new Error(`invocation ${id} never got there: ${JSON.stringify(reply.json)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const messages = (logs: LogView[]) => logs.map((line) => `#${line.attempt} ${line.message}`);

describe('connector logs while the run goes on', () => {
  const deployed = serviceWithConnector('acme', 'Order', 'steps', STEPS);

  it('shows the lines logged so far through the control API before the run ends, and each line once after it', async () => {
    const started = await deployed.api.postJson(deployed.url('asyncResponse=true&steps=4&ms=1500'), deployed.token, {});
    expect(started.status).toBe(202);
    const id = started.json.invocationId as string;
    const running = await waitForInvocation(deployed.api, 'acme', id, (inv) => inv.logs.length >= 2);
    expect(running.status).toBe('Running');
    expect(messages(running.logs).slice(0, 2)).toEqual(['#1 step 1 of 4', '#1 step 2 of 4']);
    // Still going: the poll says so.
    expect((await deployed.api.poll('acme', deployed.token, id, 'waitSeconds=0')).status).toBe(202);

    const polled = await deployed.api.poll('acme', deployed.token, id, 'waitSeconds=30');
    expect([polled.status, polled.json]).toEqual([200, { steps: 4 }]);
    const done = await waitForInvocation(deployed.api, 'acme', id, (inv) => inv.status === 'Completed');
    expect(messages(done.logs)).toEqual(['#1 step 1 of 4', '#1 step 2 of 4', '#1 step 3 of 4', '#1 step 4 of 4', '#1 all steps done']);
    expect(done.logs.at(-1)).toMatchObject({ level: 'error' });
  });

  it('records a quick sync run\'s lines with its outcome, as before', async () => {
    const reply = await deployed.api.postJson(deployed.url('steps=2&ms=1'), deployed.token, {});
    expect([reply.status, reply.json]).toEqual([200, { steps: 2 }]);
    const done = await waitForInvocation(deployed.api, 'acme', reply.headers.get('x-invocation-id') as string, (inv) => inv.status === 'Completed');
    expect(messages(done.logs)).toEqual(['#1 step 1 of 2', '#1 step 2 of 2', '#1 all steps done']);
  });
});

describe('connector logs across a crash', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gi-live-logs-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps the lines an attempt wrote before its process was killed, before those of the retry that completes', async () => {
    const first = await startService({ dataDir });
    const api = new Api(first.baseUrl);
    const token = await api.setUp('acme', 'Order', 'steps', STEPS);
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'steps', 'asyncResponse=true&steps=3&ms=1200'), token, {});
    expect(started.status).toBe(202);
    const id = started.json.invocationId as string;
    const before = await waitForInvocation(api, 'acme', id, (inv) => inv.logs.length >= 2);
    expect(messages(before.logs).slice(0, 2)).toEqual(['#1 step 1 of 3', '#1 step 2 of 3']);
    await first.stop('SIGKILL');

    const second = await startService({ dataDir });
    try {
      const api2 = new Api(second.baseUrl);
      const polled = await api2.poll('acme', token, id, 'waitSeconds=30');
      expect([polled.status, polled.json]).toEqual([200, { steps: 3 }]);
      const done = await waitForInvocation(api2, 'acme', id, (inv) => inv.status === 'Completed');
      expect(done.attempt).toBe(2);
      const firstAttempt = messages(done.logs.filter((line) => line.attempt === 1));
      expect(firstAttempt.slice(0, 2)).toEqual(['#1 step 1 of 3', '#1 step 2 of 3']);
      expect(firstAttempt).not.toContain('#1 all steps done');
      expect(messages(done.logs.filter((line) => line.attempt === 2))).toEqual(['#2 step 1 of 3', '#2 step 2 of 3', '#2 step 3 of 3', '#2 all steps done']);
      // The first attempt's lines come first.
      expect(done.logs.findIndex((line) => line.attempt === 2)).toBe(firstAttempt.length);
    } finally {
      await second.stop();
    }
  });
});
