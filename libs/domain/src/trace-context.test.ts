import { isTraceparent, isTracestate, MAX_TRACESTATE_LENGTH } from './trace-context';

describe('W3C trace context', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('takes a traceparent of version 00 with non-zero ids, as a whole', () => {
    expect(isTraceparent(valid)).toBe(true);
    expect(isTraceparent(`${valid} `)).toBe(false);
    expect(isTraceparent(`x${valid}`)).toBe(false);
    expect(isTraceparent(valid.replace(/^00/, '01'))).toBe(false);
    expect(isTraceparent(valid.toUpperCase())).toBe(false);
    expect(isTraceparent(`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`)).toBe(false);
    expect(isTraceparent(`00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`)).toBe(false);
    // One zero id digit is not an all-zero id.
    expect(isTraceparent(`00-${'0'.repeat(31)}1-${'0'.repeat(15)}1-00`)).toBe(true);
    expect(isTraceparent(valid.slice(0, -1))).toBe(false);
    expect(isTraceparent(42)).toBe(false);
    // Not even a value whose text would be one.
    expect(isTraceparent([valid])).toBe(false);
    expect(isTraceparent(undefined)).toBe(false);
  });

  it('takes a tracestate of printable ASCII up to its length limit', () => {
    expect(isTracestate('')).toBe(true);
    expect(isTracestate('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')).toBe(true);
    expect(isTracestate('a'.repeat(MAX_TRACESTATE_LENGTH))).toBe(true);
    expect(isTracestate('a'.repeat(MAX_TRACESTATE_LENGTH + 1))).toBe(false);
    expect(isTracestate('a=1\r\nInjected: yes')).toBe(false);
    expect(isTracestate('\u0001a=1')).toBe(false);
    expect(isTracestate('a=1\u007f')).toBe(false);
    expect(isTracestate('a=é')).toBe(false);
    expect(isTracestate(['a=1'])).toBe(false);
  });
});
