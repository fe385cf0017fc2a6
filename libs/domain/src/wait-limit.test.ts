import { GiError } from './errors';
import { WaitLimit } from './wait-limit';

describe('WaitLimit', () => {
  it("holds each bot to its waits at once, apart from the other bots', and refuses 429 with Retry-After", () => {
    let refused = 0;
    const waits = new WaitLimit(2, () => refused++);
    const first = waits.take('a');
    waits.take('a');
    let error: unknown;
    try {
      waits.take('a');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GiError);
    expect(error).toMatchObject({ code: 'rate_limited', headers: { 'Retry-After': '1' }, extensions: { scope: 'bot', quota: 'maxWaits', limit: 2 } });
    expect(refused).toBe(1);
    // Another bot is not touched.
    waits.take('b');
    // A place given back (twice counts once) lets the next wait in.
    first();
    first();
    expect(waits.of('a')).toBe(1);
    waits.take('a');
    expect(() => waits.take('a')).toThrow(GiError);
  });
});
