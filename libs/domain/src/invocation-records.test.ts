import { claimedInvocation, invocationState, invocationSummary, invocationTiming, linesInOrder, pendingCallback } from './invocation-records';
import type { NewInvocation } from './invocation';

const created: NewInvocation = {
  id: 'inv-1',
  botId: 'acme',
  tokenId: 'tok-1',
  entityName: 'order',
  integrationId: 'crm',
  integrationVersion: 3,
  pool: 'default',
  mode: 'async',
  endpoint: 'GenericIntegration',
  responseContentType: 'application/json',
  entityJson: '{"RequestBody":{}}',
  rawBody: '{}',
  inbound: { scheme: 'github', deliveryId: 'd-1' },
  createdAt: 1000,
  expireAt: 9000,
  callbackUrl: 'https://hooks.example.com/done',
};

describe('the records every store builds alike', () => {
  it('a claimed invocation carries every field its creation stored, runs under the lease, and waits for nothing', () => {
    const claimed = claimedInvocation(created, { attempt: 2, steps: 5, activeMs: 700, progressAttempt: 1 }, { owner: 'exec-1', leaseUntil: 4000, now: 2000 });
    const { callbackUrl: _url, ...stored } = created;
    expect(claimed).toEqual({
      ...stored,
      status: 'Running',
      attempt: 2,
      leaseOwner: 'exec-1',
      leaseUntil: 4000,
      startedAt: 2000,
      finishedAt: null,
      outcome: null,
      logs: [],
      progress: null,
      callback: { url: created.callbackUrl, state: 'pending', attempts: 0, nextAttemptAt: null, lastError: null, deliveredAt: null },
      waiting: null,
      steps: 5,
      activeMs: 700,
      progressAttempt: 1,
    });
    expect(claimedInvocation({ ...created, inbound: undefined, callbackUrl: null }, { attempt: 1, steps: 0, activeMs: 0, progressAttempt: 0 }, { owner: 'o', leaseUntil: 1, now: 0 })).toMatchObject({ inbound: null, callback: null });
  });

  it('no callback URL, no callback', () => {
    expect(pendingCallback(null)).toBeNull();
  });

  it('lines come batch by batch, each marked with its attempt, then the last attempt\'s own', () => {
    const line = (message: string) => ({ at: 1, level: 'info' as const, message });
    expect(linesInOrder([{ attempt: 1, lines: [line('a'), line('b')] }, { attempt: 2, lines: [line('c')] }], { attempt: 2, lines: [line('d')] }).map((l) => `${l.attempt}:${l.message}`)).toEqual(['1:a', '1:b', '2:c', '2:d']);
    expect(linesInOrder([], { attempt: 1, lines: [] })).toEqual([]);
  });

  it('a listing, a state and a timing hold their fields and nothing else of the invocation', () => {
    const claimed = claimedInvocation(created, { attempt: 2, steps: 5, activeMs: 700, progressAttempt: 1 }, { owner: 'exec-1', leaseUntil: 4000, now: 2000 });
    const failed = { ...claimed, status: 'Failed' as const, finishedAt: 3000, outcome: { status: 'Failed' as const, error: { code: 'connector_error' as const, title: 'No', detail: 'no' } } };
    expect(invocationSummary(failed)).toEqual({
      id: 'inv-1',
      botId: 'acme',
      entityName: 'order',
      integrationId: 'crm',
      integrationVersion: 3,
      mode: 'async',
      status: 'Failed',
      attempt: 2,
      createdAt: 1000,
      startedAt: 2000,
      finishedAt: 3000,
      error: { code: 'connector_error', title: 'No', detail: 'no' },
    });
    expect(invocationSummary(claimed).error).toBeNull();
    expect(invocationState(failed)).toEqual({
      id: 'inv-1',
      botId: 'acme',
      integrationId: 'crm',
      mode: 'async',
      status: 'Failed',
      attempt: 2,
      startedAt: 2000,
      finishedAt: 3000,
      progress: null,
      outcome: failed.outcome,
      responseContentType: 'application/json',
      waiting: null,
      steps: 5,
    });
    expect(invocationTiming(failed)).toEqual({ integrationId: 'crm', status: 'Failed', createdAt: 1000, startedAt: 2000, finishedAt: 3000 });
  });
});
