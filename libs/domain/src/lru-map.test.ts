import fc from 'fast-check';
import { LruMap } from './lru-map';

describe('LruMap', () => {
  it('drops the least recently used key past its capacity; a read or a set makes a key the most recent', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect([lru.get('b'), lru.get('a'), lru.get('c')]).toEqual([undefined, 1, 3]);
    lru.set('a', 10);
    lru.set('d', 4);
    expect([lru.get('c'), lru.get('a'), lru.get('d'), lru.size]).toEqual([undefined, 10, 4, 2]);
    expect(lru.delete('a')).toBe(true);
    lru.clear();
    expect(lru.size).toBe(0);
  });

  it('holds what a plain list of the most recent keys holds, whatever the operations (property)', () => {
    const operation = fc.tuple(fc.constantFrom('get', 'set', 'delete'), fc.integer({ min: 0, max: 9 }), fc.integer());
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(operation, { maxLength: 60 }), (capacity, operations) => {
        const lru = new LruMap<number, number>(capacity);
        let model: Array<[number, number]> = [];
        const touch = (key: number, value: number) => (model = [...model.filter(([k]) => k !== key), [key, value] as [number, number]].slice(-capacity));
        for (const [kind, key, value] of operations) {
          if (kind === 'set') {
            lru.set(key, value);
            touch(key, value);
          } else if (kind === 'delete') {
            expect(lru.delete(key)).toBe(model.some(([k]) => k === key));
            model = model.filter(([k]) => k !== key);
          } else {
            const held = model.find(([k]) => k === key);
            expect(lru.get(key)).toBe(held?.[1]);
            if (held) touch(key, held[1]);
          }
          expect(lru.size).toBe(model.length);
        }
      }),
    );
  });
});
