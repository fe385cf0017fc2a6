import { SlotMap } from './slot-map';

/**
 * Work in flight (promises), each counted until it settles, so a close can wait for it all. The work
 * sits in a SlotMap: a Set of promises that lives long would keep each one it held, with everything
 * it reaches, alive to V8's young collections once its table was rehashed (see SlotMap).
 */
export class InFlight {
  private readonly work = new SlotMap<number, Promise<unknown>>();
  private next = 0;

  get size(): number {
    return this.work.size;
  }

  /** Counts `work` until it settles, and returns it. */
  track<T>(work: Promise<T>): Promise<T> {
    const id = this.next++;
    this.work.set(id, work);
    const forget = () => void this.work.delete(id);
    work.then(forget, forget);
    return work;
  }

  /** Settles once every work tracked now has settled, whatever its outcome. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.work.values()]);
  }
}
