import fc from 'fast-check';
import { CollationRanks, MAX_RANKED_CHARS, MAX_RANKED_STRINGS } from './collation-ranks';

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

describe('CollationRanks', () => {
  it('labels strings so that comparing labels is comparing with the collator, whatever the order they come in', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('a', 'A', 'á', 'b', 'ä', 'ae', 'z', 'ß', 'ss', '1', '10', '9')), { minLength: 2, maxLength: 80 }),
        fc.constantFrom<Intl.CollatorOptions>({}, { sensitivity: 'base' }, { numeric: true }, { caseFirst: 'upper' }),
        (strings, options) => {
          const collator = new Intl.Collator('de', options);
          const ranks = new CollationRanks();
          const labels = new Map<string, number>();
          let epoch = -1;
          for (let i = 0; i + 1 < strings.length; i++) {
            const [at, x, y] = ranks.rank('config', () => collator, strings[i], strings[i + 1]) as [number, number, number];
            if (at !== epoch) labels.clear();
            epoch = at;
            labels.set(strings[i], x).set(strings[i + 1], y);
            expect(sign(x - y)).toBe(sign(collator.compare(strings[i], strings[i + 1])));
          }
          // Every label held in the current epoch orders as the collator does.
          const held = [...labels];
          for (const [a, la] of held) for (const [b, lb] of held) expect(sign(la - lb)).toBe(sign(collator.compare(a, b)));
        },
      ),
    );
  });

  it('gives every label anew (a new epoch) when a gap runs out, and stays right', () => {
    const collator = new Intl.Collator('en');
    const ranks = new CollationRanks();
    // Each new string falls just below the previous one, between it and 'a': the same gap halves every time.
    const epochs = new Set<number>();
    ranks.rank('c', () => collator, 'a', 'b');
    let previous = 'b';
    for (let i = 1; i <= 200; i++) {
      const next = `a${'z'.repeat(200 - i)}`;
      const [epoch, low, high] = ranks.rank('c', () => collator, next, previous) as [number, number, number];
      expect(low).toBeLessThan(high);
      epochs.add(epoch);
      previous = next;
    }
    expect(epochs.size).toBeGreaterThan(1);
    const [, a, b] = ranks.rank('c', () => collator, 'a', 'b') as [number, number, number];
    expect(a).toBeLessThan(b);
  });

  it(`ranks at most ${MAX_RANKED_STRINGS} strings and ${MAX_RANKED_CHARS} characters per run, then says so`, () => {
    const collator = new Intl.Collator('en');
    const many = new CollationRanks();
    for (let i = 0; i < MAX_RANKED_STRINGS / 2; i++) expect(many.rank('c', () => collator, `s${i}`, `t${i}`)).not.toBeNull();
    expect(many.rank('c', () => collator, 'one more', 'and another')).toBeNull();
    expect(many.rank('c', () => collator, 's1', 't1')).not.toBeNull(); // strings it has keep their labels
    const long = new CollationRanks();
    expect(long.rank('c', () => collator, 'x'.repeat(MAX_RANKED_CHARS / 2), 'y'.repeat(MAX_RANKED_CHARS / 2))).not.toBeNull();
    expect(long.rank('c', () => collator, 'x', 'z')).toBeNull();
  });
});
