import { decodeCancel, decodeCompletion, decodeJob, encodeCancel, encodeJob } from './bus-message.codec';

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
});
