import type { Slot } from './common';
import type { IntlKit } from './kit';

/** Intl.DateTimeFormat and Intl.NumberFormat. */
export function numbersAndDates(kit: IntlKit) {
  const { call, dateNow, initialize, mathValue, required, slotOf } = kit;
  class DateTimeFormat {
    #format?: (date?: unknown) => string;

    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'DateTimeFormat', localesValue, options);
    }

    get format(): (date?: unknown) => string {
      const slot = slotOf(this, 'DateTimeFormat', 'format');
      return (this.#format ??= (date?: unknown) => call('format', slot, timeOf(date)) as string);
    }

    formatToParts(date?: unknown): unknown {
      return call('formatToParts', slotOf(this, 'DateTimeFormat', 'formatToParts'), timeOf(date));
    }

    formatRange(startDate: unknown, endDate: unknown): unknown {
      const slot = slotOf(this, 'DateTimeFormat', 'formatRange');
      return call('formatRange', slot, +(required(startDate, 'startDate') as number), +(required(endDate, 'endDate') as number));
    }

    formatRangeToParts(startDate: unknown, endDate: unknown): unknown {
      const slot = slotOf(this, 'DateTimeFormat', 'formatRangeToParts');
      return call('formatRangeToParts', slot, +(required(startDate, 'startDate') as number), +(required(endDate, 'endDate') as number));
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'DateTimeFormat', 'resolvedOptions'));
    }
  }
  const timeOf = (date: unknown) => (date === undefined ? dateNow() : +(date as number));

  class NumberFormat {
    #format?: (value: unknown) => string;

    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'NumberFormat', localesValue, options);
    }

    get format(): (value: unknown) => string {
      const slot = slotOf(this, 'NumberFormat', 'format');
      return (this.#format ??= (value: unknown) => {
        const [x, bigint] = mathValue(value);
        return call('format', slot, x, undefined, bigint) as string;
      });
    }

    formatToParts(value: unknown): unknown {
      const slot = slotOf(this, 'NumberFormat', 'formatToParts');
      const [x, bigint] = mathValue(value);
      return call('formatToParts', slot, x, undefined, bigint);
    }

    formatRange(start: unknown, end: unknown): unknown {
      return numberRange('formatRange', slotOf(this, 'NumberFormat', 'formatRange'), start, end);
    }

    formatRangeToParts(start: unknown, end: unknown): unknown {
      return numberRange('formatRangeToParts', slotOf(this, 'NumberFormat', 'formatRangeToParts'), start, end);
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'NumberFormat', 'resolvedOptions'));
    }
  }
  const numberRange = (method: string, slot: Slot, start: unknown, end: unknown) => {
    required(start, 'start');
    required(end, 'end');
    const [x, first] = mathValue(start);
    const [y, second] = mathValue(end);
    return call(method, slot, x, y, first | (second << 1));
  };

  return { DateTimeFormat, NumberFormat };
}
