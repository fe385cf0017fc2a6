import fc from 'fast-check';
import { FairQueue } from './fair-queue';
import { KeyCounts, shareOfCapacity } from './key-counts';

interface Item {
  key: string;
  n: number;
}

const queueOf = (...items: Item[]) => {
  const queue = new FairQueue<Item>((item) => item.key);
  for (const item of items) queue.push(item);
  return queue;
};
const drain = (queue: FairQueue<Item>, canStart?: (key: string) => boolean) => {
  const out: string[] = [];
  for (let item = queue.take(canStart); item; item = queue.take(canStart)) out.push(`${item.key}${item.n}`);
  return out;
};

describe('FairQueue', () => {
  it('hands out one item of each waiting key in turn, first in first out within a key', () => {
    const queue = queueOf(...[1, 2, 3, 4].map((n) => ({ key: 'a', n })), { key: 'b', n: 1 }, { key: 'c', n: 1 }, { key: 'b', n: 2 });
    expect(queue.size).toBe(7);
    expect(drain(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(queue.size).toBe(0);
  });

  it('takes the first item of a key that newly waits before any backlog, newcomers in the order they came', () => {
    const queue = queueOf(...Array.from({ length: 1000 }, (_, n) => ({ key: 'heavy', n })));
    expect(queue.take()?.n).toBe(0);
    queue.push({ key: 'light', n: 0 });
    queue.push({ key: 'other', n: 0 });
    queue.push({ key: 'light', n: 1 });
    expect(drain(queue).slice(0, 5)).toEqual(['light0', 'other0', 'heavy1', 'light1', 'heavy2']);
  });

  it('skips a key that may not start anything and keeps its turn at the front for when it may', () => {
    const queue = queueOf({ key: 'a', n: 1 }, { key: 'a', n: 2 }, { key: 'b', n: 1 }, { key: 'b', n: 2 }, { key: 'c', n: 1 });
    expect(drain(queue, (key) => key !== 'a')).toEqual(['b1', 'c1', 'b2']);
    expect(drain(queue)).toEqual(['a1', 'a2']);
  });

  it('takes the first item of a key that fits, leaving the others in order', () => {
    const queue = queueOf({ key: 'a', n: 1 }, { key: 'a', n: 2 }, { key: 'a', n: 3 });
    expect(queue.take(undefined, (item) => item.n > 1)?.n).toBe(2);
    expect(queue.take(undefined, (item) => item.n > 3)).toBeUndefined();
    expect(drain(queue)).toEqual(['a1', 'a3']);
  });

  it('removes single items and whatever a test picks, and iterates what waits', () => {
    const b1 = { key: 'b', n: 1 };
    const queue = queueOf({ key: 'a', n: 1 }, b1, { key: 'a', n: 2 }, { key: 'c', n: 1 });
    expect(queue.remove(b1)).toBe(true);
    expect(queue.remove(b1)).toBe(false);
    expect([...queue].map((item) => `${item.key}${item.n}`)).toEqual(['a1', 'a2', 'c1']);
    expect(queue.sizeOf('a')).toBe(2);
    // Named in full: toEqual would pass over a stray non-item in the list.
    expect(queue.removeWhere((item) => item.n === 1).map((item) => `${item.key}${item.n}`)).toEqual(['a1', 'c1']);
    expect([queue.size, queue.sizeOf('c')]).toEqual([1, 0]);
    expect(drain(queue)).toEqual(['a2']);
    expect(queue.size).toBe(0);
  });

  it('removes an item anywhere in its key, and nothing for an item not waiting under a key that has others', () => {
    const a2 = { key: 'a', n: 2 };
    const queue = queueOf({ key: 'a', n: 1 }, a2, { key: 'a', n: 3 }, { key: 'b', n: 1 });
    expect(queue.remove({ key: 'a', n: 2 })).toBe(false);
    expect(queue.remove(a2)).toBe(true);
    expect(queue.peek('a')?.n).toBe(1);
    expect(queue.peek('c')).toBeUndefined();
    expect(drain(queue)).toEqual(['a1', 'b1', 'a3']);
  });

  it('forgets a key whose last item was removed, and keeps the next ones in turn', () => {
    const a1 = { key: 'a', n: 1 };
    const queue = queueOf(a1, { key: 'b', n: 1 });
    expect(queue.remove(a1)).toBe(true);
    expect([queue.size, queue.sizeOf('a')]).toEqual([1, 0]);
    expect(drain(queue)).toEqual(['b1']);
  });

  it('keeps newcomers first and in order when a key with a backlog leaves', () => {
    const queue = queueOf({ key: 'a', n: 1 }, { key: 'a', n: 2 });
    expect(queue.take()?.n).toBe(1);
    queue.push({ key: 'b', n: 1 });
    expect(queue.removeWhere((item) => item.key === 'a')).toHaveLength(1);
    queue.push({ key: 'c', n: 1 });
    const a3 = { key: 'a', n: 3 };
    queue.push(a3);
    expect(queue.remove(a3)).toBe(true);
    queue.push({ key: 'd', n: 1 });
    expect(drain(queue)).toEqual(['b1', 'c1', 'd1']);
  });

  it('hands out every item once, in order within its key; newcomers first, in order; keys with a backlog in turns (property)', () => {
    const op = fc.oneof(
      fc.record({ push: fc.constantFrom('a', 'b', 'c', 'd') }),
      fc.record({ take: fc.constant(true), blocked: fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: undefined }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const queue = new FairQueue<Item>((item) => item.key);
        const pushed = new Map<string, number>();
        const taken: Item[] = [];
        // Keys that newly wait, in the order they came; none of their items was taken since.
        const fresh: string[] = [];
        // For each key with a backlog: the keys with a backlog served since it was last served, while it could start.
        const servedSince = new Map<string, string[]>();
        for (const step of ops) {
          if ('push' in step) {
            const n = pushed.get(step.push) ?? 0;
            pushed.set(step.push, n + 1);
            if (queue.sizeOf(step.push) === 0) fresh.push(step.push);
            queue.push({ key: step.push, n });
            continue;
          }
          const item = queue.take((key) => key !== step.blocked);
          if (!item) {
            expect([...queue].every((waiting) => waiting.key === step.blocked)).toBe(true);
            continue;
          }
          taken.push(item);
          const firstFresh = fresh.find((key) => key !== step.blocked);
          if (firstFresh !== undefined) {
            expect(item.key).toBe(firstFresh);
            fresh.splice(fresh.indexOf(firstFresh), 1);
          } else {
            // A backlog's turn: since this key's last turn, no other backlog was served twice while it could start.
            const others = servedSince.get(item.key) ?? [];
            expect(new Set(others).size).toBe(others.length);
            for (const [key, served] of servedSince) if (key !== item.key && key !== step.blocked) served.push(item.key);
          }
          servedSince.set(item.key, []);
          if (queue.sizeOf(item.key) === 0) servedSince.delete(item.key);
        }
        taken.push(...queue.removeWhere(() => true));
        expect(queue.size).toBe(0);
        for (const [key, count] of pushed) {
          expect(taken.filter((item) => item.key === key).map((item) => item.n)).toEqual(Array.from({ length: count }, (_, n) => n));
        }
      }),
    );
  });
});

describe('KeyCounts', () => {
  it('counts per key and in total, forgetting keys at zero', () => {
    const counts = new KeyCounts();
    counts.add('a');
    counts.add('a');
    counts.add('b');
    expect([counts.of('a'), counts.of('b'), counts.total]).toEqual([2, 1, 3]);
    counts.remove('a');
    counts.remove('b');
    counts.remove('b');
    expect([...counts.entries()]).toEqual([['a', 1]]);
    expect(counts.total).toBe(1);
  });

  it('gives one key a share of a capacity, rounded up, at least one', () => {
    expect(shareOfCapacity(64, 75)).toBe(48);
    expect(shareOfCapacity(4, 75)).toBe(3);
    // Two slots at 75 %: both (a quarter of two is no whole slot to keep).
    expect(shareOfCapacity(2, 75)).toBe(2);
    expect(shareOfCapacity(3, 50)).toBe(2);
    expect(shareOfCapacity(1, 1)).toBe(1);
    expect(shareOfCapacity(10, 100)).toBe(10);
  });
});
