import { JournalWrites } from './journal-writes';

/** A write that resolves (or rejects) when the test says. */
function gate<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

describe('JournalWrites', () => {
  it('starts writes in order, at most maxInFlight at once, the next as one settles (rejected or not)', async () => {
    const writes = new JournalWrites(2, 100);
    const gates = [gate<number>(), gate<number>(), gate<number>(), gate<number>()];
    const started: number[] = [];
    const done = gates.map((g, i) => writes.add(10, () => (started.push(i), g.promise)));
    expect(started).toEqual([0, 1]);
    expect(writes.pending).toBe(4);
    gates[1].reject(new Error('refused'));
    await expect(done[1]).rejects.toThrow('refused');
    expect(started).toEqual([0, 1, 2]);
    gates[0].resolve(0);
    await expect(done[0]).resolves.toBe(0);
    expect(started).toEqual([0, 1, 2, 3]);
    gates[2].resolve(2);
    gates[3].resolve(3);
    await expect(Promise.all(done.slice(2))).resolves.toEqual([2, 3]);
    expect(writes.pending).toBe(0);
  });

  it('refuses a write that would take the bytes waiting past the limit, and takes more once they left', async () => {
    const writes = new JournalWrites(1, 100);
    const first = gate<void>();
    void writes.add(1000, () => first.promise); // under way: not counted
    const waiting = writes.add(60, async () => undefined);
    expect(writes.add(41, async () => undefined)).toBeNull();
    expect(writes.add(40, async () => undefined)).not.toBeNull();
    first.resolve();
    await waiting;
    expect(writes.add(100, async () => undefined)).not.toBeNull();
  });

  it('turns a write that throws at once into a rejection, and goes on', async () => {
    const writes = new JournalWrites(1, 100);
    await expect(
      writes.add(0, () => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
    await expect(writes.add(0, async () => 'next')).resolves.toBe('next');
  });
});
