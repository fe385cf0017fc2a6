/** Timers one run may have set at once; one more ends the run (a flood of timers is a bug). */
export const MAX_TIMERS = 10_000;
/** A repeating timer fires at most this often. */
export const MIN_INTERVAL_MS = 1;

interface Entry {
  id: number;
  due: number;
  /** Order of setting: timers due at the same moment fire in the order they were set. */
  seq: number;
  intervalMs: number | null;
}

/**
 * The timers of one run, kept on the host: the run waits for the earliest with no thread held, and
 * fires due ones one at a time (each a task of its own, whose microtasks run before the next). A
 * min-heap ordered by due time and order of setting; cleared timers leave the heap lazily. Dropped
 * with the run: nothing of it can fire into another run.
 */
export class TimerQueue {
  /** The live timers by id; the heap may still hold entries of cleared or replaced ones. */
  private readonly live = new Map<number, Entry>();
  private readonly heap: Entry[] = [];
  private seq = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.live.size;
  }

  /** False when the run already has MAX_TIMERS timers. */
  schedule(id: number, delayMs: number, repeat: boolean): boolean {
    if (this.live.size >= MAX_TIMERS) return false;
    const intervalMs = repeat ? Math.max(MIN_INTERVAL_MS, delayMs) : null;
    // Timers set and cleared in a loop leave stale entries: rebuild before they outnumber the live ones.
    if (this.heap.length > 2 * this.live.size + 64) this.rebuild();
    this.push({ id, due: this.now() + (intervalMs ?? delayMs), seq: this.seq++, intervalMs });
    return true;
  }

  cancel(id: number): void {
    this.live.delete(id);
  }

  /** When the earliest timer is due (on the `now` clock); null when none is set. */
  nextDue(): number | null {
    return this.peek()?.due ?? null;
  }

  /** The id of the earliest timer due by now (rescheduled when it repeats); null when none is due. */
  takeDue(): number | null {
    const next = this.peek();
    const now = this.now();
    if (!next || next.due > now) return null;
    this.pop();
    if (next.intervalMs === null) this.live.delete(next.id);
    else this.push({ ...next, due: Math.max(now, next.due + next.intervalMs), seq: this.seq++ });
    return next.id;
  }

  private rebuild(): void {
    const entries = [...this.live.values()];
    this.heap.length = 0;
    this.live.clear();
    for (const entry of entries) this.push(entry);
  }

  /** The earliest live entry, dropping stale ones from the top. */
  private peek(): Entry | undefined {
    while (this.heap.length > 0 && this.live.get(this.heap[0].id) !== this.heap[0]) this.pop();
    return this.heap[0];
  }

  private push(entry: Entry): void {
    this.live.set(entry.id, entry);
    const heap = this.heap;
    heap.push(entry);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop() as Entry;
    if (heap.length === 0) return;
    heap[0] = last;
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left], heap[smallest])) smallest = left;
      if (right < heap.length && before(heap[right], heap[smallest])) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest], heap[i]];
      i = smallest;
    }
  }
}

const before = (a: Entry, b: Entry) => a.due < b.due || (a.due === b.due && a.seq < b.seq);
