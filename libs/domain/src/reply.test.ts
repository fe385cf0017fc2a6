import { GiError } from './errors';
import type { StepSummary } from './ports/journal-store';
import { finalReply, pendingReply, POLL_STEPS, waitView } from './reply';

describe('the reply for a finished invocation', () => {
  it('renders a completed one\'s ResponseBody, as the call asked or as given', () => {
    const invocation = { id: 'inv-1', outcome: { status: 'Completed' as const, responseBody: { ok: true } }, responseContentType: 'application/json' };
    expect(finalReply(invocation)).toEqual({ contentType: 'application/json; charset=utf-8', payload: '{"ok":true}' });
    expect(finalReply(invocation, 'text/plain')).toEqual({ contentType: 'text/plain; charset=utf-8', payload: '{"ok":true}' });
  });

  it('throws a failed or cancelled one\'s error with its invocation id', () => {
    const error = { code: 'cancelled' as const, title: 'Invocation cancelled', detail: 'stopped' };
    let thrown: unknown;
    try {
      finalReply({ id: 'inv-2', outcome: { status: 'Cancelled', error }, responseContentType: 'application/json' });
    } catch (caught) {
      thrown = caught;
    }
    expect(thrown).toBeInstanceOf(GiError);
    expect(thrown).toMatchObject({ ...error, extensions: { invocationId: 'inv-2' } });
  });

  it('has none for an invocation that has not finished', () => {
    expect(() => finalReply({ id: 'inv-3', outcome: null, responseContentType: 'application/json' })).toThrow('invocation inv-3 has no outcome yet');
  });
});

describe('the reply while an invocation is not finished', () => {
  type Pending = Parameters<typeof pendingReply>[0];
  const queued: Pending = { id: 'inv-1', status: 'Queued', attempt: 0, startedAt: null, progress: null, waiting: null, steps: 0 };
  const step = (occurrence: number): StepSummary => ({
    name: 'send', occurrence, kind: 'step', status: 'done', error: null, attempts: 1,
    startedAt: Date.UTC(2026, 0, 1), finishedAt: Date.UTC(2026, 0, 1) + 250, until: null, resultBytes: 12,
  });

  it('says a queued one is queued, with no start', () => {
    expect(pendingReply(queued)).toEqual({ invocationId: 'inv-1', status: 'Queued', message: 'The job is not yet complete.', attempt: 0, startedAt: null });
  });

  it('says since when the running attempt runs, and its progress', () => {
    const running: Pending = { ...queued, status: 'Running', attempt: 2, startedAt: Date.UTC(2026, 0, 1, 12), progress: { percent: 40, message: 'half' } };
    expect(pendingReply(running)).toEqual({
      invocationId: 'inv-1',
      status: 'Running',
      message: 'The job is not yet complete.',
      attempt: 2,
      startedAt: '2026-01-01T12:00:00.000Z',
      progress: { percent: 40, message: 'half' },
    });
    // A requeued invocation keeps the start of its last attempt, which is not the one it waits for.
    expect(pendingReply({ ...running, status: 'Queued' }).startedAt).toBeNull();
    expect(pendingReply({ ...running, startedAt: null }).startedAt).toBeNull();
  });

  it('shows a suspended durable run as running, with what it waits for and its latest steps, newest first', () => {
    const until = Date.UTC(2026, 0, 2);
    const waiting: Pending = { ...queued, status: 'Waiting', attempt: 1, startedAt: 5, waiting: { kind: 'event', name: 'approved', until }, steps: 30 };
    const latest = Array.from({ length: 30 }, (_, i) => step(30 - i));
    const reply = pendingReply(waiting, latest);
    expect(reply).toMatchObject({ status: 'Running', startedAt: null, waiting: { for: 'event', name: 'approved', until: '2026-01-02T00:00:00.000Z' }, steps: 30 });
    expect(reply.latestSteps?.map((s) => s.occurrence)).toEqual(latest.slice(0, POLL_STEPS).map((s) => s.occurrence));
    expect(reply.latestSteps?.[0]).toEqual({
      name: 'send', occurrence: 30, kind: 'step', status: 'done', attempts: 1, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 250, resultBytes: 12,
    });
  });

  it('counts a durable run\'s steps even when none are given to show', () => {
    expect(pendingReply({ ...queued, steps: 3 })).toMatchObject({ steps: 3, latestSteps: [] });
  });

  it('says nothing of a wait once the invocation runs again, nor of steps it has none of', () => {
    const reply = pendingReply({ ...queued, status: 'Running', startedAt: 0, waiting: { kind: 'sleep', name: 'pause', until: 0 } });
    expect('waiting' in reply).toBe(false);
    expect('steps' in reply).toBe(false);
    expect('latestSteps' in reply).toBe(false);
    expect('progress' in reply).toBe(false);
  });

  it('shows a wait until its time', () => {
    expect(waitView({ kind: 'retry', name: 'send', until: 0 })).toEqual({ for: 'retry', name: 'send', until: '1970-01-01T00:00:00.000Z' });
  });
});
