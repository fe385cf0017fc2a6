import { SlotMap } from './slot-map';

/**
 * Items waiting their turn, kept apart by key (a bot) and handed out in turns between the keys: first
 * in, first out within a key. A key that had nothing waiting goes first (its first item before any
 * backlog, keys that newly wait in the order they came); keys with a backlog then take turns, one item
 * each. A key with thousands waiting thus never delays another key's first item by more than the items
 * already started, whatever its backlog (the "sparse flows first" rule of fq_codel, RFC 8290).
 *
 * `take` skips a key that may not start anything now (the caller's per-key cap) and items that do not
 * fit now (a pool without a free consumer); a key skipped keeps its place at the front of the turns.
 */
export class FairQueue<T> {
  /** Waiting items by key; a key is here only while it has some. */
  private readonly lanes = new SlotMap<string, T[]>();
  /** The keys with waiting items, whose turn comes first first: the `fresh` newly waiting ones, then the others. */
  private readonly turns: string[] = [];
  /** How many keys at the front of `turns` newly wait (none of their items was taken since). */
  private fresh = 0;
  private count = 0;

  constructor(private readonly keyOf: (item: T) => string) {}

  get size(): number {
    return this.count;
  }

  /** Items waiting under `key`. */
  sizeOf(key: string): number {
    return this.lanes.get(key)?.length ?? 0;
  }

  /** The first item waiting under `key`. */
  peek(key: string): T | undefined {
    return this.lanes.get(key)?.[0];
  }

  push(item: T): void {
    const key = this.keyOf(item);
    const lane = this.lanes.get(key);
    if (lane) lane.push(item);
    else {
      this.lanes.set(key, [item]);
      this.turns.splice(this.fresh++, 0, key);
    }
    this.count++;
  }

  /**
   * Takes the next item: of the first key in turn that `canStart` allows, its first item that `fits`.
   * That key's next turn is then after every other waiting key's. Undefined when nothing may start.
   */
  take(canStart?: (key: string) => boolean, fits?: (item: T) => boolean): T | undefined {
    for (let turn = 0; turn < this.turns.length; turn++) {
      const key = this.turns[turn];
      if (canStart && !canStart(key)) continue;
      const lane = this.lanes.get(key) as T[];
      const at = fits ? lane.findIndex(fits) : 0;
      if (at < 0) continue;
      const [item] = at === 0 ? [lane.shift() as T] : lane.splice(at, 1);
      this.count--;
      this.dropTurn(turn);
      if (lane.length > 0) this.turns.push(key);
      else this.lanes.delete(key);
      return item;
    }
    return undefined;
  }

  /** Removes the waiting items `matches` picks, and returns them in their order within each key. */
  removeWhere(matches: (item: T) => boolean): T[] {
    const removed: T[] = [];
    for (let turn = this.turns.length - 1; turn >= 0; turn--) {
      const key = this.turns[turn];
      const lane = this.lanes.get(key) as T[];
      const kept = lane.filter((item) => !matches(item));
      if (kept.length === lane.length) continue;
      removed.unshift(...lane.filter(matches));
      this.count -= lane.length - kept.length;
      if (kept.length > 0) this.lanes.set(key, kept);
      else {
        this.lanes.delete(key);
        this.dropTurn(turn);
      }
    }
    return removed;
  }

  /** Removes one waiting item; false when it is not waiting. */
  remove(item: T): boolean {
    const key = this.keyOf(item);
    const lane = this.lanes.get(key);
    const at = lane?.indexOf(item) ?? -1;
    if (!lane || at < 0) return false;
    lane.splice(at, 1);
    this.count--;
    if (lane.length === 0) {
      this.lanes.delete(key);
      this.dropTurn(this.turns.indexOf(key));
    }
    return true;
  }

  private dropTurn(turn: number): void {
    this.turns.splice(turn, 1);
    if (turn < this.fresh) this.fresh--;
  }

  /** Every waiting item, key by key in turn order. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (const key of this.turns) yield* this.lanes.get(key) as T[];
  }
}
