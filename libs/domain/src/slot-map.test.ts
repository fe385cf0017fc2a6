import fc from 'fast-check';
import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SlotMap } from './slot-map';

describe('SlotMap', () => {
  it('answers as a Map does, and iterates in the order keys were first set', () => {
    const map = new SlotMap<string, number>();
    map.set('a', 1).set('b', 2).set('c', 3);
    expect(map.delete('b')).toBe(true);
    expect(map.delete('b')).toBe(false);
    map.set('d', 4).set('a', 10);
    expect([map.size, map.get('a'), map.get('b'), map.has('c'), map.has('b')]).toEqual([3, 10, undefined, true, false]);
    expect([...map]).toEqual([
      ['a', 10],
      ['c', 3],
      ['d', 4],
    ]);
    expect([...map.keys()]).toEqual(['a', 'c', 'd']);
    expect([...map.values()]).toEqual([10, 3, 4]);
    map.clear();
    expect([map.size, [...map]]).toEqual([0, []]);
    map.set('e', 5);
    expect([...map.entries()]).toEqual([['e', 5]]);
  });

  it('holds what a Map holds, whatever the operations (property)', () => {
    const operation = fc.tuple(fc.constantFrom('get', 'set', 'delete', 'clear'), fc.integer({ min: 0, max: 9 }), fc.integer());
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 80 }), (operations) => {
        const map = new SlotMap<number, number>();
        const model = new Map<number, number>();
        for (const [kind, key, value] of operations) {
          if (kind === 'set') {
            map.set(key, value);
            model.set(key, value);
          } else if (kind === 'delete') {
            expect(map.delete(key)).toBe(model.delete(key));
          } else if (kind === 'clear') {
            map.clear();
            model.clear();
          } else {
            expect(map.get(key)).toBe(model.get(key));
          }
          expect(map.size).toBe(model.size);
        }
        expect([...map]).toEqual([...model]);
      }),
    );
  });

  it('leaves the values of deleted keys to the young generation, while a long-lived Map under the same churn promotes them', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
    const oldGenerationBytes = () =>
      getHeapSpaceStatistics()
        .filter((space) => space.space_name === 'old_space' || space.space_name === 'large_object_space')
        .reduce((sum, space) => sum + space.space_used_size, 0);
    const VALUES = 10_000;
    const IN_FLIGHT = 20;
    const VALUE_BYTES = 64 * 8; // the elements of each value's array, at least
    /** Old-generation growth while `registry` (made old first) takes short-lived values, with young collections only. */
    const promotedBy = (registry: { set(key: number, value: unknown): unknown; delete(key: number): unknown }) => {
      for (let key = 0; key < 64; key++) registry.set(key, {});
      for (let key = 0; key < 64; key++) registry.delete(key);
      gc();
      gc();
      const before = oldGenerationBytes();
      for (let key = 0; key < VALUES; key++) {
        registry.set(key, { key, payload: new Array(64).fill(key) });
        if (key >= IN_FLIGHT) registry.delete(key - IN_FLIGHT);
        if (key % 500 === 499) gc({ type: 'minor' });
      }
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      return oldGenerationBytes() - before;
    };
    const bySlotMap = promotedBy(new SlotMap<number, unknown>());
    const byMap = promotedBy(new Map<number, unknown>());
    expect(bySlotMap).toBeLessThan(VALUES * VALUE_BYTES * 0.25);
    expect(bySlotMap).toBeLessThan(byMap / 2);
  });
});
