import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { fields, formatBytes, formatDuration, formatTime, shellWord, table, toMillis } from './format';

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

  it('picks a unit for sizes', () => {
    expect([0, 1023, 1024, 1536, 10 * 1024, 5 * 1024 ** 2, 3 * 1024 ** 3].map(formatBytes)).toEqual(['0 B', '1023 B', '1.0 KiB', '1.5 KiB', '10 KiB', '5.0 MiB', '3.0 GiB']);
  });

  it('quotes a word for the shell only when it must, and the shell reads it back as it was', () => {
    expect(shellWord('12_send')).toBe('12_send');
    expect(shellWord("it's here")).toBe(`'it'\\''s here'`);
    const words = fc.string({ unit: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), fc.constantFrom("'", '"', '$', '`', '\\', ' ', '!', '*', ';', '&')), minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(words, (word) => {
        const echoed = spawnSync('bash', ['--norc', '--noprofile', '-c', `printf %s ${shellWord(word)}`], { encoding: 'utf8' });
        expect(echoed.stdout).toBe(word);
      }),
      { numRuns: 60 },
    );
  });
});
