import type { TextResult } from './common';
import type { IntlKit } from './kit';

/** Intl.PluralRules, Intl.RelativeTimeFormat, Intl.ListFormat and Intl.DisplayNames. */
export function textFormats(kit: IntlKit) {
  const { apply, stringify, call, initialize, iteratorOf, required, slotOf, textOf, wire } = kit;
  class PluralRules {
    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'PluralRules', localesValue, options);
    }

    select(n: unknown): unknown {
      return call('select', slotOf(this, 'PluralRules', 'select'), +(n as number));
    }

    selectRange(start: unknown, end: unknown): unknown {
      const slot = slotOf(this, 'PluralRules', 'selectRange');
      return call('selectRange', slot, +(required(start, 'start') as number), +(required(end, 'end') as number));
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'PluralRules', 'resolvedOptions'));
    }
  }

  class RelativeTimeFormat {
    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'RelativeTimeFormat', localesValue, options);
    }

    format(value: unknown, unit: unknown): unknown {
      return call('format', slotOf(this, 'RelativeTimeFormat', 'format'), +(value as number), `${unit as string}`);
    }

    formatToParts(value: unknown, unit: unknown): unknown {
      return call('formatToParts', slotOf(this, 'RelativeTimeFormat', 'formatToParts'), +(value as number), `${unit as string}`);
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'RelativeTimeFormat', 'resolvedOptions'));
    }
  }

  class ListFormat {
    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'ListFormat', localesValue, options);
    }

    format(list: unknown): string {
      return textOf(call('format', slotOf(this, 'ListFormat', 'format'), stringList(list)) as TextResult);
    }

    formatToParts(list: unknown): unknown {
      return call('formatToParts', slotOf(this, 'ListFormat', 'formatToParts'), stringList(list));
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'ListFormat', 'resolvedOptions'));
    }
  }
  /** StringListFromIterable: every item must be a string; the list as JSON text. */
  const stringList = (list: unknown): string => {
    let json = '[';
    if (list !== undefined) {
      for (const item of iterate(list)) {
        if (typeof item !== 'string') throw new TypeError(`Iterable yielded ${typeof item === 'object' || typeof item === 'function' || typeof item === 'symbol' ? `a value of type ${typeof item}` : String(item)} which is not a string`);
        json += `${json === '[' ? '' : ','}${stringify(item)}`;
      }
    }
    return `${json}]`;
  };
  /** A `for...of` over a value, as the standard iterates it (the iterator closed when the loop throws). */
  const iterate = (value: unknown) => {
    const method = value === null || value === undefined ? undefined : iteratorOf(value);
    if (typeof method !== 'function') throw new TypeError(`${String(value)} is not iterable`);
    return { [Symbol.iterator]: () => apply(method, value, []) as Iterator<unknown> };
  };

  class DisplayNames {
    constructor(localesValue: unknown, options: unknown) {
      initialize(this, 'DisplayNames', localesValue, options);
    }

    of(code: unknown): unknown {
      return call('of', slotOf(this, 'DisplayNames', 'of'), wire(`${code as string}`));
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'DisplayNames', 'resolvedOptions'));
    }
  }

  return { PluralRules, RelativeTimeFormat, ListFormat, DisplayNames };
}
