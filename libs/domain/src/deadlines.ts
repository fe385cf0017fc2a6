import { SlotMap } from './slot-map';

/**
 * One timer for the deadlines of many items (times from `performance.now()`): it is armed for the
 * earliest, and when it fires, `due` is called with each item whose deadline has passed, taken out
 * first. Most items are deleted long before they are due (a run ends long before its time limit,
 * its lease needs renewing only after seconds): adding one and deleting it cost a slot, and the timer
 * is set again only for an item due earlier than the one it waits for, where a timer per item would be
 * set and cleared each time. The timer keeps no process alive: its items' owners do.
 *
 * `add` answers a ticket to delete the item by. Tickets are never given twice, so one kept after its
 * item came due deletes nothing else; and the items sit in a SlotMap, which lets a deleted item (a
 * call's closure and all it holds) die young.
 */
export class Deadlines<T> {
  private readonly items = new SlotMap<number, { item: T; deadline: number }>();
  private nextTicket = 1;
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;

  constructor(private readonly due: (item: T) => void) {}

  get size(): number {
    return this.items.size;
  }

  /** Adds `item`, due at `deadline`; the ticket deletes it. */
  add(item: T, deadline: number): number {
    const ticket = this.nextTicket++;
    this.items.set(ticket, { item, deadline });
    if (deadline < this.armedFor) this.arm(deadline);
    return ticket;
  }

  /** Deletes the item of `ticket`, unless it was deleted or came due already. */
  delete(ticket: number): void {
    this.items.delete(ticket);
  }

  /** Deletes every item and stops the timer. */
  clear(): void {
    this.items.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
  }

  private arm(deadline: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = deadline;
    // At least 1 ms: a timer may fire a fraction early for `performance.now()`; it is then set again.
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(deadline - performance.now())));
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = null;
    this.armedFor = Infinity;
    const now = performance.now();
    const due: Array<[ticket: number, item: T]> = [];
    let next = Infinity;
    for (const [ticket, { item, deadline }] of this.items) {
      if (deadline <= now) due.push([ticket, item]);
      else if (deadline < next) next = deadline;
    }
    for (const [ticket] of due) this.items.delete(ticket);
    if (next < Infinity) this.arm(next);
    for (const [, item] of due) this.due(item);
  };
}
