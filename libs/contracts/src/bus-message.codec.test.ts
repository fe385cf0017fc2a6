import fc from 'fast-check';
import { decodeCancel, decodeCompletion, decodeJob, encodeCancel, encodeCompletion, encodeJob, MAX_COMPLETION_EVENT_BYTES } from './bus-message.codec';
import { completionEvent, finishedStateOf } from './bus-messages';
import type { FinishedFacts } from './bus-messages';

const job = { kind: 'job', version: 1, botId: 'bot-a', invocationId: 'inv-1', pool: 'default' } as const;
const decodeJson = (value: unknown) => decodeJob(Buffer.from(JSON.stringify(value)));

describe('bus message codec', () => {
  it('round-trips a job and drops fields that are not part of it', () => {
    const decoded = decodeJob(encodeJob({ ...job, extra: 'x' } as typeof job));
    expect(decoded).toEqual({ ok: true, value: job });
  });

  it.each([
    ['not JSON', Buffer.from('{'), 'the body is not JSON'],
    ['an array', Buffer.from('[]'), 'the body is not a JSON object'],
    ['another kind', Buffer.from(JSON.stringify({ ...job, kind: 'completed' })), 'kind must be "job", got "completed"'],
    ['a newer version', Buffer.from(JSON.stringify({ ...job, version: 2 })), 'version 2 is not supported (expected 1)'],
    ['a bad pool', Buffer.from(JSON.stringify({ ...job, pool: '../x' })), 'pool is missing or invalid'],
  ])('refuses %s', (_name, content, reason) => {
    expect(decodeJob(content)).toEqual({ ok: false, reason });
  });

  it('refuses a job without an invocation id', () => {
    expect(decodeJson({ ...job, invocationId: '' })).toEqual({ ok: false, reason: 'invocationId is missing or invalid' });
  });

  it('checks the status of completion events', () => {
    const event = { kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'inv-1', status: 'Completed' };
    expect(decodeCompletion(Buffer.from(JSON.stringify(event)))).toEqual({ ok: true, value: event });
    expect(decodeCompletion(Buffer.from(JSON.stringify({ ...event, status: 'Done' })))).toEqual({ ok: false, reason: 'status is missing or invalid' });
  });

  it('carries the Cancelled status in completion events', () => {
    const event = { kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'inv-1', status: 'Cancelled' };
    expect(decodeCompletion(Buffer.from(JSON.stringify(event)))).toEqual({ ok: true, value: event });
  });

  it('round-trips a cancel event and refuses one of another kind or without an id', () => {
    const cancel = { kind: 'cancel', version: 1, botId: 'bot-a', invocationId: 'inv-1' } as const;
    expect(decodeCancel(encodeCancel(cancel))).toEqual({ ok: true, value: cancel });
    expect(decodeCancel(Buffer.from(JSON.stringify({ ...cancel, kind: 'job' })))).toEqual({ ok: false, reason: 'kind must be "cancel", got "job"' });
    expect(decodeCancel(Buffer.from(JSON.stringify({ ...cancel, invocationId: 7 })))).toEqual({ ok: false, reason: 'invocationId is missing or invalid' });
    expect(() => encodeCancel({ ...cancel, botId: '' })).toThrow('Invalid cancel event: botId is missing or invalid.');
  });

  describe('trace context', () => {
    const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=abc' };

    it('carries the publisher\'s trace context in a job', () => {
      const decoded = decodeJob(encodeJob({ ...job, trace }));
      expect(decoded).toEqual({ ok: true, value: { ...job, trace } });
      expect(decodeJson({ ...job, trace: { traceparent: trace.traceparent } })).toEqual({ ok: true, value: { ...job, trace: { traceparent: trace.traceparent } } });
    });

    it('leaves it out when there is none', () => {
      const decoded = decodeJob(encodeJob(job));
      expect(decoded.ok && 'trace' in decoded.value && decoded.value.trace !== undefined).toBe(false);
      expect(JSON.parse(encodeJob(job).toString())).not.toHaveProperty('trace');
    });

    it.each([
      ['a traceparent of another version', { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }],
      ['an all-zero trace id', { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' }],
      ['upper-case hex', { traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01' }],
      ['a tracestate too long', { traceparent: trace.traceparent, tracestate: 'a='.padEnd(513, 'x') }],
      ['a string', 'nope'],
    ])('drops %s and keeps the job', (_name, bad) => {
      const decoded = decodeJson({ ...job, trace: bad });
      expect(decoded.ok).toBe(true);
      expect(decoded.ok && decoded.value.trace).toBeUndefined();
    });
  });

  it('refuses to encode an invalid job', () => {
    expect(() => encodeJob({ ...job, botId: '' })).toThrow('Invalid job message: botId is missing or invalid.');
  });

  describe('what a completion event carries of the finished invocation', () => {
    const ref = { id: 'inv-1', botId: 'bot-a' };
    const facts: FinishedFacts = {
      integrationId: 'ack',
      attempt: 1,
      startedAt: 1_000,
      finishedAt: 1_012,
      responseContentType: 'application/json',
      outcome: { status: 'Completed', responseBody: { ok: true } },
    };

    it('round-trips the facts, and a waiter reads the state from them', () => {
      const decoded = decodeCompletion(encodeCompletion(completionEvent(ref, 'Completed', facts)));
      if (!decoded.ok) throw new Error(decoded.reason);
      expect(finishedStateOf(decoded.value)).toEqual({ id: 'inv-1', botId: 'bot-a', status: 'Completed', progress: null, waiting: null, steps: 0, ...facts });
    });

    it('says nothing without facts, or with facts of another status than the event', () => {
      expect(finishedStateOf(completionEvent(ref, 'Cancelled'))).toBeNull();
      expect(finishedStateOf(completionEvent(ref, 'Failed', facts))).toBeNull();
    });

    it('leaves the facts out of an event they would make larger than the limit, keeping the event', () => {
      const large = { ...facts, outcome: { status: 'Completed' as const, responseBody: 'x'.repeat(MAX_COMPLETION_EVENT_BYTES) } };
      const encoded = encodeCompletion(completionEvent(ref, 'Completed', large));
      expect(encoded.length).toBeLessThan(MAX_COMPLETION_EVENT_BYTES);
      expect(decodeCompletion(encoded)).toEqual({ ok: true, value: { kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'inv-1', status: 'Completed' } });
    });

    it.each([
      ['an unknown error code', { ...facts, outcome: { status: 'Failed', error: { code: 'whatever', title: 't', detail: 'd' } } }],
      ['a negative attempt', { ...facts, attempt: -1 }],
      ['a missing finish time', { ...facts, finishedAt: undefined }],
      ['a string', 'Completed'],
    ])('drops facts with %s, not the event (its waiters read the store)', (_name, finished) => {
      const event = { kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'inv-1', status: 'Completed', finished };
      const decoded = decodeCompletion(Buffer.from(JSON.stringify(event)));
      expect(decoded.ok).toBe(true);
      if (decoded.ok) expect(finishedStateOf(decoded.value)).toBeNull();
    });

    it('carries any JSON ResponseBody and error exactly (property)', () => {
      const outcome = fc.oneof(
        fc.record({ status: fc.constant('Completed' as const), responseBody: fc.jsonValue() }),
        fc.record({
          status: fc.constantFrom('Failed' as const, 'Cancelled' as const),
          error: fc.record({ code: fc.constantFrom('connector_error' as const, 'timeout' as const, 'cancelled' as const), title: fc.string(), detail: fc.string() }),
        }),
      );
      fc.assert(
        fc.property(outcome, fc.nat(), fc.option(fc.nat(), { nil: null }), fc.nat(), (recorded, attempt, startedAt, finishedAt) => {
          const finished: FinishedFacts = { ...facts, attempt, startedAt, finishedAt, outcome: recorded };
          const decoded = decodeCompletion(encodeCompletion(completionEvent(ref, recorded.status, finished)));
          expect(decoded.ok && finishedStateOf(decoded.value)).toEqual(JSON.parse(JSON.stringify({ id: 'inv-1', botId: 'bot-a', status: recorded.status, progress: null, waiting: null, steps: 0, ...finished })));
        }),
      );
    });
  });
});
