import { fields, formatDuration, formatTime, table, toMillis } from './format';

describe('output formatting', () => {
  it('shows ISO strings and epoch milliseconds alike, to the second', () => {
    expect(formatTime('2026-03-04T05:06:07.890Z')).toBe('2026-03-04 05:06:07Z');
    expect(formatTime(Date.UTC(2026, 2, 4, 5, 6, 7, 890))).toBe('2026-03-04 05:06:07Z');
    expect(formatTime(null)).toBe('-');
    expect(formatTime('not a time')).toBe('not a time');
    expect(toMillis('2026-03-04T05:06:07.890Z')).toBe(Date.UTC(2026, 2, 4, 5, 6, 7, 890));
    expect(toMillis(undefined)).toBeNull();
  });

  it('picks a unit for durations', () => {
    expect(formatDuration(null)).toBe('-');
    expect(formatDuration(12.4)).toBe('12 ms');
    expect(formatDuration(1530)).toBe('1.5 s');
    expect(formatDuration(125_000)).toBe('2m 05s');
  });

  it('aligns table columns and leaves the last one ragged', () => {
    expect(table(['ID', 'STATE', 'LABEL'], [['a', 'active', 'x'], ['longer-id', 'revoked', '']])).toBe(
      ['ID         STATE    LABEL', 'a          active   x', 'longer-id  revoked'].join('\n'),
    );
  });

  it('aligns key/value lines', () => {
    expect(fields([['bot', 'acme'], ['base URL', 'http://x']])).toBe('bot       acme\nbase URL  http://x');
  });
});
