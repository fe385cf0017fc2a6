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

  it('says in its refusal how many waits the bot may hold, one or several, and needs no listener', () => {
    const refusal = (perBot: number) => {
      const waits = new WaitLimit(perBot);
      for (let k = 0; k < perBot; k++) waits.take('a');
      try {
        waits.take('a');
      } catch (e) {
        return e as GiError;
      }
      throw new Error('not refused');
    };
    expect(refusal(1)).toMatchObject({ title: 'Too many requests', detail: expect.stringMatching(/^This bot already has 1 call waiting here for a result/) });
    expect(refusal(3).detail).toMatch(/^This bot already has 3 calls waiting here for a result \(sync calls and long polls\), its limit; try again shortly/);
  });
});
