/**
 * `Intl` and the locale-sensitive methods of the built-ins (`toLocaleString` of dates, numbers,
 * BigInts and arrays, `localeCompare`, `toLocaleUpperCase`...), with the results of Node's ICU. The
 * objects, and the reading of their arguments and options as ECMA-402 reads them (getters included),
 * live here; formatting is the host's: each object holds its configuration (locales and options as
 * JSON text), and the host keeps a formatter per configuration.
 *
 * The sandbox's own locale is `en-US` and its time zone UTC, whatever the host's.
 */
import type { Global } from './internal/global';
import { defineGlobal } from './internal/global';
import type { Slot, IntlHost } from './intl/common';
import { MAX_SORTED_TEXT, lengthOf } from './intl/common';
import { collation } from './intl/collator';
import { intlKit } from './intl/kit';
import { localeClasses } from './intl/locale';
import { numbersAndDates } from './intl/numbers-and-dates';
import { segmentation } from './intl/segmenter';
import { textFormats } from './intl/text-formats';

/** Intl's objects are in intl/, one module per family; this installs them and the built-ins' locale methods. */
export default function install(host: IntlHost, global: Global): void {
  const kit = intlKit(host);
  const { stringify, apply, bigintValue, call, configure, constructibleWithoutNew, defineProperty, finish, numberValue, readLocales, textOf, timeValue, toLowerCase, toUpperCase, typedArrayLength, wire } = kit;
  const { DateTimeFormat, NumberFormat } = numbersAndDates(kit);
  const { Collator, compare, sortedBy } = collation(kit);
  const { PluralRules, RelativeTimeFormat, ListFormat, DisplayNames } = textFormats(kit);
  const { Segmenter } = segmentation(kit);
  const { Locale } = localeClasses(kit);

  const Intl = {};
  const members: Array<[string, { prototype: object }, number]> = [
    ['DateTimeFormat', constructibleWithoutNew(DateTimeFormat, 'DateTimeFormat'), 0],
    ['NumberFormat', constructibleWithoutNew(NumberFormat, 'NumberFormat'), 0],
    ['Collator', constructibleWithoutNew(Collator, 'Collator'), 0],
    ['PluralRules', PluralRules, 0],
    ['RelativeTimeFormat', RelativeTimeFormat, 0],
    ['ListFormat', ListFormat, 0],
    ['DisplayNames', DisplayNames, 2],
    ['Segmenter', Segmenter, 0],
    ['Locale', Locale, 1],
  ];
  for (const [kind, ctor, length] of members) {
    finish(ctor, kind, length, kind !== 'Locale');
    defineGlobal(Intl, kind, ctor);
  }
  defineGlobal(Intl, 'getCanonicalLocales', function getCanonicalLocales(localesValue?: unknown) {
    return host.canonicalLocales(readLocales(localesValue, (tags) => host.canonicalLocales(tags)));
  });
  defineGlobal(Intl, 'supportedValuesOf', function supportedValuesOf(key: unknown) {
    return host.supportedValuesOf(`${key as string}`);
  });
  defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });
  defineGlobal(global, 'Intl', Intl);

  // The built-in methods, as ECMA-402 defines them.
  const dateMethod = (name: string, kind: string) =>
    ({
      [name](this: unknown, localesValue: unknown = undefined, options: unknown = undefined) {
        const time = apply(timeValue, this, []) as number;
        if (time !== time) return 'Invalid Date';
        return host.call('format', kind, configure(kind, localesValue, options, 'DateTimeFormat'), time);
      },
    })[name];
  defineGlobal(Date.prototype, 'toLocaleString', dateMethod('toLocaleString', 'DateTimeFormat:any'));
  defineGlobal(Date.prototype, 'toLocaleDateString', dateMethod('toLocaleDateString', 'DateTimeFormat:date'));
  defineGlobal(Date.prototype, 'toLocaleTimeString', dateMethod('toLocaleTimeString', 'DateTimeFormat:time'));

  defineGlobal(Number.prototype, 'toLocaleString', {
    toLocaleString(this: unknown, localesValue: unknown = undefined, options: unknown = undefined) {
      const x = apply(numberValue, this, []) as number;
      return host.call('format', 'NumberFormat', configure('NumberFormat', localesValue, options), x);
    },
  }.toLocaleString);
  defineGlobal(BigInt.prototype, 'toLocaleString', {
    toLocaleString(this: unknown, localesValue: unknown = undefined, options: unknown = undefined) {
      const x = apply(bigintValue, this, []) as bigint;
      return host.call('format', 'NumberFormat', configure('NumberFormat', localesValue, options), `${x}`, undefined, 1);
    },
  }.toLocaleString);

  const thisString = (value: unknown, method: string) => {
    if (value === undefined || value === null) throw new TypeError(`String.prototype.${method} called on null or undefined`);
    return `${value as string}`;
  };
  let lastCompared: { locales: unknown; slot: Slot } | null = null;
  defineGlobal(String.prototype, 'localeCompare', {
    localeCompare(this: unknown, that: unknown, localesValue: unknown = undefined, options: unknown = undefined) {
      const text = thisString(this, 'localeCompare');
      const other = `${that as string}`;
      // A sort calls it again and again with the same locale: the configuration is read once (no options, no getters to run).
      if (options !== undefined || (localesValue !== undefined && typeof localesValue !== 'string')) {
        return compare({ kind: 'Collator', config: configure('Collator', localesValue, options) }, text, other);
      }
      if (!lastCompared || lastCompared.locales !== localesValue) lastCompared = { locales: localesValue, slot: { kind: 'Collator', config: configure('Collator', localesValue, undefined) } };
      return compare(lastCompared.slot, text, other);
    },
  }.localeCompare);
  const caseMethod = (name: string, upper: boolean) =>
    ({
      [name](this: unknown, localesValue: unknown = undefined) {
        const text = thisString(this, name);
        if (localesValue === undefined) return apply(upper ? toUpperCase : toLowerCase, text, []);
        return textOf(host.changeCase(wire(text), readLocales(localesValue, (tags) => host.canonicalLocales(tags)), upper));
      },
    })[name];
  defineGlobal(String.prototype, 'toLocaleUpperCase', caseMethod('toLocaleUpperCase', true));
  defineGlobal(String.prototype, 'toLocaleLowerCase', caseMethod('toLocaleLowerCase', false));

  /**
   * `array.sort(collator.compare)` on an array of strings: the host sorts them in one call (a stable
   * sort with the same collator orders them exactly as the engine's sort would). Anything else, or an
   * array with holes or other values, is sorted by the engine.
   */
  const sortByHost = (list: unknown[], slot: Slot): boolean => {
    const length = list.length;
    let json = '[';
    for (let k = 0; k < length; k++) {
      const item = list[k];
      if (typeof item !== 'string' || !(k in list)) return false;
      json += `${k === 0 ? '' : ','}${stringify(item)}`;
      if (json.length > MAX_SORTED_TEXT) return false;
    }
    const order = new Uint32Array(call('sort', slot, `${json}]`) as ArrayBuffer);
    const items: unknown[] = [];
    for (let k = 0; k < length; k++) items[k] = list[k];
    for (let k = 0; k < length; k++) list[k] = items[order[k]];
    return true;
  };
  const { sort } = Array.prototype;
  defineGlobal(Array.prototype, 'sort', {
    sort(this: unknown, comparefn: unknown) {
      const slot = typeof comparefn === 'function' ? sortedBy.get(comparefn) : undefined;
      if (slot !== undefined && Array.isArray(this) && this.length > 1 && sortByHost(this, slot)) return this;
      return apply(sort, this, [comparefn]);
    },
  }.sort);

  /** Arrays being joined: a cycle joins as an empty string, as in V8. */
  const joining = new Set<object>();
  const joinLocale = (list: Record<number, unknown>, length: number, localesValue: unknown, options: unknown) => {
    if (joining.has(list)) return '';
    joining.add(list);
    try {
      let text = '';
      for (let k = 0; k < length; k++) {
        if (k > 0) text += ',';
        const item = list[k];
        if (item !== undefined && item !== null) {
          const method = (Object(item) as { toLocaleString?: unknown }).toLocaleString;
          if (typeof method !== 'function') throw new TypeError('toLocaleString is not a function');
          text += `${apply(method, item, [localesValue, options]) as string}`;
        }
      }
      return text;
    } finally {
      joining.delete(list);
    }
  };
  defineGlobal(Array.prototype, 'toLocaleString', {
    toLocaleString(this: unknown, localesValue: unknown = undefined, options: unknown = undefined) {
      if (this === undefined || this === null) throw new TypeError('Array.prototype.toLocaleString called on null or undefined');
      const list = Object(this) as Record<number, unknown> & { length?: unknown };
      return joinLocale(list, lengthOf(list.length), localesValue, options);
    },
  }.toLocaleString);
  defineGlobal(Object.getPrototypeOf(Int8Array.prototype) as object, 'toLocaleString', {
    toLocaleString(this: unknown, localesValue: unknown = undefined, options: unknown = undefined) {
      const length = apply(typedArrayLength, this, []) as number;
      return joinLocale(this as Record<number, unknown>, length, localesValue, options);
    },
  }.toLocaleString);
}
