/**
 * A map for a long-lived registry whose entries come and go all the time: the runs, waits and leases
 * of the calls in flight. It answers as a Map does, but its hash table maps each key to a slot of an
 * array, and the value lives in that slot.
 *
 * Why: a Map that lives long sits in V8's old generation, and so does every hash table it makes when
 * it rehashes, which churn makes frequent. The table it leaves behind is garbage until the next full
 * collection, yet each young collection meanwhile treats it as live and keeps everything it held: the
 * values of every call in flight then, with all they reach, are promoted to the old generation and fill
 * it until a full collection (measured: about 5 KB promoted per embedded call). Here a slot is emptied
 * when its key is deleted, so a dead table holds keys and slot numbers only. Keys are strings or
 * numbers for that reason: an object key would be kept as a value is.
 */
export class SlotMap<K extends string | number, V> {
  private readonly slotOf = new Map<K, number>();
  private readonly slots: (V | undefined)[] = [];
  private readonly free: number[] = [];

  get size(): number {
    return this.slotOf.size;
  }

  has(key: K): boolean {
    return this.slotOf.has(key);
  }

  get(key: K): V | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.slots[slot];
  }

  set(key: K, value: V): this {
    const slot = this.slotOf.get(key);
    if (slot !== undefined) {
      this.slots[slot] = value;
      return this;
    }
    const taken = this.free.pop() ?? this.slots.length;
    this.slots[taken] = value;
    this.slotOf.set(key, taken);
    return this;
  }

  delete(key: K): boolean {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return false;
    this.slotOf.delete(key);
    this.slots[slot] = undefined;
    this.free.push(slot);
    return true;
  }

  clear(): void {
    this.slotOf.clear();
    this.slots.length = 0;
    this.free.length = 0;
  }

  /** In the order the keys were first set, as a Map's. */
  *entries(): IterableIterator<[K, V]> {
    for (const [key, slot] of this.slotOf) yield [key, this.slots[slot] as V];
  }

  *keys(): IterableIterator<K> {
    yield* this.slotOf.keys();
  }

  *values(): IterableIterator<V> {
    for (const slot of this.slotOf.values()) yield this.slots[slot] as V;
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}
