/**
 * How many of something each key has out at once (the runs of a bot), for a cap per key. A key is kept
 * only while its count is above zero.
 */
export class KeyCounts {
  private readonly counts = new Map<string, number>();
  private sum = 0;

  /** Of every key together. */
  get total(): number {
    return this.sum;
  }

  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string): void {
    this.counts.set(key, this.of(key) + 1);
    this.sum++;
  }

  /** One fewer for `key`; nothing when it had none. */
  remove(key: string): void {
    const count = this.of(key);
    if (count === 0) return;
    if (count === 1) this.counts.delete(key);
    else this.counts.set(key, count - 1);
    this.sum--;
  }

  /** Every key with a count, and its count. */
  entries(): IterableIterator<[string, number]> {
    return this.counts.entries();
  }
}

/**
 * The most of `capacity` one key may hold at once: `percent` of it, rounded up (so a small capacity is
 * not halved for a lone key), at least 1. With a share below 100 the rest, once it is a whole unit, is
 * always there for the other keys.
 */
export function shareOfCapacity(capacity: number, percent: number): number {
  return Math.max(1, Math.ceil((capacity * percent) / 100));
}
