import type { InvocationError } from './errors';
import { idempotencyKeyInUse, idempotencyKeyReused } from './idempotency';
import { durationMs, outcomeError } from './invocation';
import { outcomeJson, outcomeOf, UnrecordableOutcome } from './outcome';

describe('outcomeOf, each way a run fails', () => {
  const failed = (reason: 'timeout' | 'limit' | 'cancelled', message = 'the memory limit of 64 MiB') => ({ kind: 'failed' as const, reason, message, logs: [], durationMs: 1 });

  it('says a timeout in whole seconds, a limit with its message, a cancellation as cancelled', () => {
    expect(outcomeOf(failed('timeout'), 2_600)).toEqual({
      status: 'Failed',
      error: { code: 'timeout', title: 'Connector timed out', detail: 'The connector did not finish within 3 s.' },
    });
    expect(outcomeOf(failed('limit'), 5_000)).toEqual({ status: 'Failed', error: { code: 'connector_failed', title: 'Connector stopped', detail: 'the memory limit of 64 MiB' } });
    expect(outcomeOf(failed('cancelled'), 5_000)).toEqual({
      status: 'Cancelled',
      error: { code: 'cancelled', title: 'Invocation cancelled', detail: 'The run was stopped because the invocation was cancelled.' },
    });
  });

  it('says a connector that threw failed, and no more', () => {
    expect(outcomeOf({ kind: 'failed', reason: 'threw', message: 'internals', logs: [], durationMs: 1 }, 5_000)).toEqual({
      status: 'Failed',
      error: { code: 'connector_failed', title: 'Connector failed', detail: 'The connector threw an error; its logs hold the details.' },
    });
  });
});

describe('outcomes as stored', () => {
  it('are JSON text, or UnrecordableOutcome naming why', () => {
    expect(outcomeJson({ status: 'Completed', responseBody: { a: 1 } })).toBe('{"status":"Completed","responseBody":{"a":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const error = (() => {
      try {
        outcomeJson({ status: 'Completed', responseBody: cyclic });
      } catch (thrown) {
        return thrown as UnrecordableOutcome;
      }
      throw new Error('recorded');
    })();
    expect(error).toBeInstanceOf(UnrecordableOutcome);
    expect([error.name, error.message]).toEqual(['UnrecordableOutcome', expect.stringMatching(/^The outcome cannot be serialised: Converting circular structure/)]);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(new UnrecordableOutcome('not JSON').message).toBe('The outcome cannot be serialised: not JSON');
  });

  it('carry their error when failed or cancelled, none when completed or absent', () => {
    const error: InvocationError = { code: 'timeout', title: 'T', detail: 'D' };
    expect(outcomeError({ status: 'Failed', error })).toBe(error);
    expect(outcomeError({ status: 'Cancelled', error })).toBe(error);
    expect(outcomeError({ status: 'Completed', responseBody: null })).toBeNull();
    expect(outcomeError(null)).toBeNull();
  });

  it('last from start to finish, unknown until both are known', () => {
    expect(durationMs({ startedAt: 1_000, finishedAt: 1_250 })).toBe(250);
    expect(durationMs({ startedAt: null, finishedAt: 1_250 })).toBeNull();
    expect(durationMs({ startedAt: 1_000, finishedAt: null })).toBeNull();
  });
});

describe('Idempotency-Key refusals', () => {
  it('409 while the first request runs, with where to poll it; 422 for the key sent with another request', () => {
    expect(idempotencyKeyInUse('inv-1', '/api/invocations/inv-1')).toMatchObject({
      code: 'idempotency_key_in_use',
      title: 'Request in progress',
      detail: expect.stringContaining('still being processed'),
      extensions: { invocationId: 'inv-1' },
      headers: { Location: '/api/invocations/inv-1', 'Retry-After': '1' },
    });
    expect(idempotencyKeyReused()).toMatchObject({ code: 'idempotency_key_reused', title: 'Idempotency-Key reused', detail: expect.stringContaining('different request') });
  });
});
