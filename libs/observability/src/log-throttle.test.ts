import { LogThrottle } from './log-throttle';

describe('LogThrottle', () => {
  it('admits the first line of a kind per window and reports how many were held back with the next one', () => {
    let now = 0;
    const throttle = new LogThrottle(1000, 10, () => now);
    expect(throttle.admit('a')).toEqual({ write: true, suppressed: 0 });
    for (let i = 0; i < 5; i++) expect(throttle.admit('a').write).toBe(false);
    expect(throttle.admit('b').write).toBe(true);
    now = 1000;
    expect(throttle.admit('a')).toEqual({ write: true, suppressed: 5 });
  });

  it('holds at most maxKinds windows: new kinds past it wait until old windows expire', () => {
    let now = 0;
    const throttle = new LogThrottle(1000, 2, () => now);
    expect(throttle.admit('a').write).toBe(true);
    expect(throttle.admit('b').write).toBe(true);
    expect(throttle.admit('c').write).toBe(false);
    now = 1000;
    expect(throttle.admit('c').write).toBe(true);
  });
});
