import fc from 'fast-check';
import { ProgressGate } from './progress-gate';
import { CallRate, nestsDeeperThan } from './run-budget';

/** How deeply a parsed JSON value nests arrays and objects. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((max: number, child) => Math.max(max, depthOf(child)), 0);
}

describe('nestsDeeperThan', () => {
  it('agrees with the depth of the parsed value, brackets and escapes inside strings included', () => {
    const tricky = fc.oneof(fc.string(), fc.constantFrom('[', ']', '{', '}', '\\', '"', '\\"', '\\\\', '"]', '\\\\"'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tricky, fc.integer(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(tricky, tie('value'), { maxKeys: 3 }),
    })).value;
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 6 }), (value, max) => {
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds a 100,000-deep array quickly, and reads a long flat text without trouble', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(nestsDeeperThan(deep, 1000)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ a: 'x'.repeat(5_000_000), b: '['.repeat(5000) }), 1000)).toBe(false);
  });
});

describe('CallRate', () => {
  it('lets a burst of calls start at once, then one per share of a second', () => {
    let now = 0;
    const rate = new CallRate(10, () => now);
    expect(Array.from({ length: 10 }, () => rate.take())).toEqual(Array(10).fill(0));
    expect(rate.take()).toBe(100);
    expect(rate.take()).toBe(200);
    now = 1000;
    // Two turns were taken ahead of their time: the second refill serves them first.
    expect(Array.from({ length: 9 }, () => rate.take())).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 100]);
  });
});

describe('ProgressGate', () => {
  it('makes an update offered as a function only if it is the one that leaves', () => {
    let now = 0;
    const seen: number[] = [];
    const made: number[] = [];
    const gate = new ProgressGate((p) => seen.push(p.percent), 1000, () => now);
    const lazily = (percent: number) => () => {
      made.push(percent);
      return { percent };
    };
    expect(gate.isDue()).toBe(true);
    gate.offer(lazily(1));
    expect(gate.isDue()).toBe(false);
    for (let i = 2; i <= 50; i++) gate.offer(lazily(i));
    now = 1000;
    gate.flush();
    expect(seen).toEqual([1, 50]);
    expect(made).toEqual([1, 50]);
  });

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('lets one update per interval through, the latest one, and always the last', () => {
    let now = 0;
    const seen: number[] = [];
    const gate = new ProgressGate((p) => seen.push(p.percent), 1000, () => now);
    for (let i = 1; i <= 300_000; i++) gate.offer({ percent: i / 3000 });
    expect(seen).toEqual([1 / 3000]);
    now = 1000;
    jest.advanceTimersByTime(1000);
    expect(seen).toEqual([1 / 3000, 100]);
    gate.offer({ percent: 1 });
    gate.offer({ percent: 2 });
    gate.flush();
    expect(seen).toEqual([1 / 3000, 100, 2]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never lets a failing listener reach the connector', () => {
    const gate = new ProgressGate(() => {
      throw new Error('store down');
    }, 1000);
    expect(() => gate.offer({ percent: 1 })).not.toThrow();
  });
});
