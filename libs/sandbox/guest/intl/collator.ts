import type { Slot, Ranks } from './common';
import type { IntlKit } from './kit';

/** Intl.Collator, and the collators whose `compare` an array sort hands to the host (`sortedBy`). */
export function collation(kit: IntlKit) {
  const { host, call, initialize, slotOf, wire } = kit;
  /** The compare functions of collators, by the configuration they compare with: `array.sort(collator.compare)` sorts on the host. */
  const sortedBy = new WeakMap<object, Slot>();
  class Collator {
    #compare?: (x: unknown, y: unknown) => number;

    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'Collator', localesValue, options);
    }

    get compare(): (x: unknown, y: unknown) => number {
      const slot = slotOf(this, 'Collator', 'compare');
      if (!this.#compare) {
        this.#compare = (x: unknown, y: unknown) => compare(slot, `${x as string}`, `${y as string}`);
        sortedBy.set(this.#compare, slot);
      }
      return this.#compare;
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'Collator', 'resolvedOptions'));
    }
  }
  /** What the run knows of each collator configuration it compared with: checked, and the labels of its strings (see IntlHost.rank). */
  const ranks = new Map<string, Ranks>();
  const ranksOf = (slot: Slot): Ranks => {
    if (slot.ranks) return slot.ranks;
    let table = ranks.get(slot.config);
    if (!table) {
      host.create('Collator', slot.config); // localeCompare's locales and options are checked here
      ranks.set(slot.config, (table = { epoch: -1, labels: new Map(), direct: false }));
    }
    return (slot.ranks = table);
  };
  const compare = (slot: Slot, x: string, y: string): number => {
    const table = ranksOf(slot);
    if (x === y) return 0;
    if (!table.direct) {
      let lx = table.labels.get(x);
      let ly = table.labels.get(y);
      if (lx !== undefined && ly !== undefined) return lx < ly ? -1 : lx > ly ? 1 : 0;
      const ranked = host.rank(slot.config, wire(x), wire(y));
      if (ranked !== null) {
        if (ranked[0] !== table.epoch) {
          table.labels.clear();
          table.epoch = ranked[0];
        }
        table.labels.set(x, (lx = ranked[1]));
        table.labels.set(y, (ly = ranked[2]));
        return lx < ly ? -1 : lx > ly ? 1 : 0;
      }
      table.direct = true;
      table.labels.clear();
    }
    return call('compare', slot, wire(x), wire(y)) as number;
  };

  return { Collator, compare, sortedBy };
}
