import { DatePartsGuard } from './date-parts-guard';

describe('DatePartsGuard', () => {
  const never = () => false;
  const always = () => true;

  it('tells the date formats whose parts would abort Node from the others, in a child process, once per format', () => {
    const guard = new DatePartsGuard();
    // Node 20 dies with a fatal "unreachable code" on the parts of this one (Scottish Gaelic CLDR data).
    const gd = { year: 'numeric', month: 'short', timeZone: 'UTC' } as const;
    expect(guard.isSafe(new Intl.DateTimeFormat('gd', gd), gd, always)).toBe(false);
    const en = { year: 'numeric', month: 'short', timeZone: 'Asia/Tokyo' } as const;
    expect(guard.isSafe(new Intl.DateTimeFormat('en-GB', en), en, always)).toBe(true);
    // The verdict holds for any formatter of the same locale and options, whatever its time zone.
    expect(guard.isSafe(new Intl.DateTimeFormat('gd', { ...gd, timeZone: 'Europe/London' }), { ...gd, timeZone: 'Europe/London' }, never)).toBe(false);
    expect(guard.isSafe(new Intl.DateTimeFormat('en-GB', { ...en, timeZone: 'UTC' }), { ...en, timeZone: 'UTC' }, never)).toBe(true);
  }, 30_000);

  it('checks nothing when the run may not start a check', () => {
    const guard = new DatePartsGuard();
    const options = { weekday: 'long', timeZone: 'UTC' } as const;
    expect(guard.isSafe(new Intl.DateTimeFormat('fr-FR', options), options, never)).toBe('not checked');
  });
});
