import { parsePrefer } from './prefer';

describe('parsePrefer (RFC 7240)', () => {
  it.each([
    [undefined, { respondAsync: false }],
    ['', { respondAsync: false }],
    ['respond-async', { respondAsync: true }],
    ['Respond-Async', { respondAsync: true }],
    ['respond-async, wait=10', { respondAsync: true, waitSeconds: 10 }],
    ['wait=5,respond-async', { respondAsync: true, waitSeconds: 5 }],
    ['wait = 7', { respondAsync: false, waitSeconds: 7 }],
    ['wait="3"', { respondAsync: false, waitSeconds: 3 }],
    ['respond-async; foo=bar, wait=2; x', { respondAsync: true, waitSeconds: 2 }],
    ['return=minimal, handling=lenient, respond-async', { respondAsync: true }],
    ['foo="a,b", respond-async', { respondAsync: true }],
    ['foo="a,respond-async,b"', { respondAsync: false }],
    ['foo="a\\",respond-async,b"', { respondAsync: false }],
    ['wait="12"', { respondAsync: false, waitSeconds: 12 }],
    ['wait=4, wait=9', { respondAsync: false, waitSeconds: 4 }],
    ['wait=99999999', { respondAsync: false, waitSeconds: 86400 }],
  ])('reads %p', (header, preferences) => {
    expect(parsePrefer(header)).toEqual(preferences);
  });

  it.each(['wait=-1', 'wait=1.5', 'wait=soon', 'wait=', 'wait=12345678901', 'wait=1"2"', 'wait="2"3'])('ignores a malformed %s', (header) => {
    expect(parsePrefer(`respond-async, ${header}`)).toEqual({ respondAsync: true });
  });

  it('reads a 16 KiB header of escaped quotes in linear time (a backtracking pattern took half a second)', () => {
    const started = process.hrtime.bigint();
    expect(parsePrefer(`respond-async, ${'"\\'.repeat(8 * 1024)}`)).toEqual({ respondAsync: true });
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(50);
  });
});
