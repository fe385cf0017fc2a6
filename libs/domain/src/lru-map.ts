/**
 * A map that keeps its `capacity` most recently used entries: reading a key (`get`) or setting it makes
 * it the most recent, and setting one past the capacity drops the least recent. A Map iterates in
 * insertion order, so the least recent is always its first key. Values are never `undefined` (that
 * is what `get` answers for a key it does not hold).
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  /** The most recent key, read again without moving it: a busy key read on every call leaves the table alone. */
  private newest: K | undefined;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined && key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.newest = key;
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): boolean {
    if (key === this.newest) this.newest = undefined;
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.newest = undefined;
  }
}
