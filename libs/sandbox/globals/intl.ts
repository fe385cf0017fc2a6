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

/** The host functions of this module (libs/sandbox/src/globals/intl.host.ts). */
interface IntlHost {
  /**
   * Checks a configuration (`[locales, options]` as JSON) of a kind of object, with Node's errors.
   * `partial`: only what could be read before a getter threw, so that an earlier invalid value is reported first.
   */
  create(kind: string, config: string, partial?: boolean): void;
  /** Calls a method of the formatter of a configuration; `bigints` tells which arguments are BigInts as text (1: the first, 2: the second). */
  call(method: string, kind: string, config: string, a?: unknown, b?: unknown, bigints?: number): unknown;
  /**
   * Labels ordering two strings as the collator of a configuration does, `[epoch, x's, y's]`: a
   * label is the same for the whole run until the epoch changes. Null once the run ranked as many
   * strings as it may (its compares then go to the collator one by one).
   */
  rank(config: string, x: Wire, y: Wire): [number, number, number] | null;
  /** `Intl.getCanonicalLocales` of a list of tags given as JSON. */
  canonicalLocales(tags: string): string[];
  supportedValuesOf(key: string): string[];
  /** `toLocaleUpperCase` / `toLocaleLowerCase` of a text for a list of tags given as JSON. */
  changeCase(text: Wire, tags: string, upper: boolean): TextResult;
  /** The parts of an `Intl.Locale` made from a tag and its options (JSON). */
  locale(tag: string, options: string): LocaleRecord;
}

/** A text the host returns: a string, or a string with lone surrogates as the only item of an array (the engine's UTF-8 hand-over of strings would garble it). */
type TextResult = string | [string];

/** A text as the host takes it: a string, or UTF-16 code units when it has lone surrogates (see wire). */
type Wire = string | ArrayBuffer;

interface LocaleRecord {
  tag: string;
  baseName: string;
  language: string;
  script?: string;
  region?: string;
  calendar?: string;
  caseFirst?: string;
  collation?: string;
  hourCycle?: string;
  numeric: boolean;
  numberingSystem?: string;
}

/** How a constructor reads its options: `coerce` (ToObject, undefined allowed) or `object` (an object or undefined). */
type OptionsMode = 'coerce' | 'object';

/** A kind of option value: a string, a boolean, a number, or useGrouping's boolean-or-string. */
type OptionType = 's' | 'b' | 'n' | 'g';

const DIGITS = 'minimumIntegerDigits:n minimumFractionDigits:n maximumFractionDigits:n minimumSignificantDigits:n maximumSignificantDigits:n roundingIncrement:n roundingMode roundingPriority trailingZeroDisplay';

/** Each constructor's options in the order ECMA-402 reads them, with their types. */
const SCHEMAS: Record<string, [OptionsMode, string]> = {
  DateTimeFormat: [
    'coerce',
    'localeMatcher calendar numberingSystem hour12:b hourCycle timeZone weekday era year month day dayPeriod hour minute second fractionalSecondDigits:n timeZoneName formatMatcher dateStyle timeStyle',
  ],
  NumberFormat: ['coerce', `localeMatcher numberingSystem style currency currencyDisplay currencySign unit unitDisplay notation ${DIGITS} compactDisplay useGrouping:g signDisplay`],
  Collator: ['coerce', 'usage localeMatcher collation numeric:b caseFirst sensitivity ignorePunctuation:b'],
  PluralRules: ['coerce', `localeMatcher type notation ${DIGITS}`],
  RelativeTimeFormat: ['object', 'localeMatcher numberingSystem style numeric'],
  ListFormat: ['object', 'localeMatcher type style'],
  DisplayNames: ['object', 'localeMatcher style type fallback languageDisplay'],
  Segmenter: ['object', 'localeMatcher granularity'],
  supportedLocalesOf: ['coerce', 'localeMatcher'],
  Locale: ['coerce', 'language script region calendar collation hourCycle caseFirst numeric:b numberingSystem'],
};

type Slot = { kind: string; config: string; ranks?: Ranks };
/** A collator configuration's labels for the strings it compared (see IntlHost.rank); `direct` once it compares through the host one by one. */
type Ranks = { epoch: number; labels: Map<string, number>; direct: boolean };

/** Characters of JSON text an array sorted by the host may take (the host's cap on one call's text). */
const MAX_SORTED_TEXT = 4 * 1024 * 1024;

export default function install(host: IntlHost, global: Global): void {
  const { stringify } = JSON;
  const { apply, construct } = Reflect;
  const { defineProperty } = Object;
  const dateNow = Date.now;
  const timeValue = Date.prototype.getTime;
  const numberValue = Number.prototype.valueOf;
  const bigintValue = BigInt.prototype.valueOf;
  const toUpperCase = String.prototype.toUpperCase;
  const toLowerCase = String.prototype.toLowerCase;
  const typedArrayLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), 'length')?.get as (this: unknown) => number;
  const iteratorOf = (value: unknown) => (value as Record<symbol, () => Iterator<unknown>>)[Symbol.iterator];

  /** The state of every Intl object made here: its kind and configuration. */
  const slots = new WeakMap<object, Slot>();
  const slotOf = (value: unknown, kind: string, method: string): Slot => {
    const slot = typeof value === 'object' && value !== null ? slots.get(value) : undefined;
    if (!slot || slot.kind !== kind) throw new TypeError(`Method Intl.${kind}.prototype.${method} called on an incompatible receiver`);
    return slot;
  };
  const locales = new WeakMap<object, LocaleRecord>();
  const schemas: Record<string, [OptionsMode, Array<[string, OptionType]>]> = {};
  for (const [kind, [mode, names]] of Object.entries(SCHEMAS)) {
    schemas[kind] = [mode, names.split(' ').map((field) => field.split(':') as [string, OptionType]).map(([name, type]) => [name, type ?? 's'])];
  }

  /**
   * CanonicalizeLocaleList's reading: the tags as JSON text (the host checks and canonicalizes them).
   * When reading throws, `failed` first gets the tags read before, so that an invalid one is reported as Node reports it.
   */
  const readLocales = (value: unknown, failed: (tags: string) => void): string => {
    if (value === undefined) return '[]';
    if (typeof value === 'string' || locales.has(value as object)) return `[${stringify(tagOf(value))}]`;
    if (value === null) throw new TypeError('Cannot convert undefined or null to object');
    let json = '';
    try {
      const list = Object(value) as Record<number, unknown> & { length?: unknown };
      const length = lengthOf(list.length);
      for (let k = 0; k < length; k++) {
        if (!(k in list)) continue;
        const item = list[k];
        if (typeof item !== 'string' && (typeof item !== 'object' || item === null)) throw new TypeError('Language ID should be string or object.');
        json += `${json === '' ? '' : ','}${stringify(tagOf(item))}`;
      }
    } catch (error) {
      failed(`[${json}]`);
      throw error;
    }
    return `[${json}]`;
  };
  const tagOf = (value: unknown) => locales.get(value as object)?.tag ?? `${value as string}`;

  /**
   * The options of an object of `kind`, read in the standard's order (getters run, values converted),
   * as JSON text. When reading throws, `failed` first gets what was read before.
   */
  const readOptions = (kind: string, options: unknown, schema: string, failed: (json: string) => void): string => {
    if (options === undefined) return '{}';
    let json = '';
    try {
      const [mode, fields] = schemas[schema];
      if (options === null) throw new TypeError('Cannot convert undefined or null to object');
      if (mode === 'object' && typeof options !== 'object' && typeof options !== 'function') throw new TypeError(`Options of Intl.${kind} must be an object`);
      const source = Object(options) as Record<string, unknown>;
      for (const [name, type] of fields) {
        const value = source[name];
        if (value === undefined) continue;
        let text: string;
        if (type === 'b') text = value ? 'true' : 'false';
        else if (type === 'n') text = stringify(`${+(value as number)}`);
        else if (type === 'g') text = value === true ? 'true' : !value ? 'false' : stringify(`${value as string}`);
        else text = stringify(`${value as string}`);
        json += `${json === '' ? '' : ','}"${name}":${text}`;
      }
    } catch (error) {
      failed(`{${json}}`);
      throw error;
    }
    return `{${json}}`;
  };

  /**
   * The configuration of an object of `kind`: its locales and options as JSON text. When reading
   * throws, what was read before is checked first, so that an invalid value read earlier is reported
   * as Node reports it.
   */
  const configure = (kind: string, localesValue: unknown, options: unknown, schema = kind): string => {
    const tags = readLocales(localesValue, (read) => host.create(kind, `[${read},{}]`, true));
    return `[${tags},${readOptions(kind, options, schema, (read) => host.create(kind, `[${tags},${read}]`, true))}]`;
  };

  /** An object of `kind` for the configuration: checked by the host, whose errors are Node's. */
  const initialize = (target: object, kind: string, localesValue: unknown, options: unknown) => {
    const config = configure(kind, localesValue, options);
    host.create(kind, config);
    slots.set(target, { kind, config });
  };

  /**
   * A text for the host: as it is, or, when it has lone surrogates (which the engine's UTF-8
   * hand-over of strings would replace), as its UTF-16 code units.
   */
  const wire = (text: string): Wire => {
    if (text.isWellFormed()) return text;
    const units = new Uint16Array(text.length);
    for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
    return units.buffer;
  };

  const textOf = (result: TextResult): string => (typeof result === 'string' ? result : result[0]);

  /** A method of the host's formatter; only the arguments given cross (each one costs a conversion). */
  const call = (method: string, slot: Slot, a?: unknown, b?: unknown, bigints?: number) => {
    if (bigints) return host.call(method, slot.kind, slot.config, a, b, bigints);
    if (b !== undefined) return host.call(method, slot.kind, slot.config, a, b);
    if (a !== undefined) return host.call(method, slot.kind, slot.config, a);
    return host.call(method, slot.kind, slot.config);
  };

  /** ToIntlMathematicalValue's first steps: a number, a numeric string kept exact, or a BigInt as text (bit 1 of the flag). */
  const mathValue = (value: unknown): [unknown, number] => {
    const primitive = toPrimitive(value);
    if (typeof primitive === 'bigint') return [`${primitive}`, 1];
    if (typeof primitive === 'string') return [primitive, 0];
    return [+(primitive as number), 0];
  };

  const required = (value: unknown, what: string) => {
    if (value === undefined) throw new TypeError(`${what} is undefined`);
    return value;
  };

  const supportedLocalesOf = (kind: string) =>
    function supportedLocalesOf(localesValue: unknown, options: unknown = undefined) {
      return host.call('supportedLocalesOf', kind, configure(kind, localesValue, options, 'supportedLocalesOf'));
    };

  /** Defines the static `supportedLocalesOf` and the prototype's `Symbol.toStringTag` of an Intl constructor. */
  const finish = (ctor: { prototype: object }, kind: string, length: number, withSupported = true) => {
    if (withSupported) defineGlobal(ctor, 'supportedLocalesOf', supportedLocalesOf(kind));
    defineProperty(ctor.prototype, Symbol.toStringTag, { value: `Intl.${kind}`, configurable: true });
    defineProperty(ctor, 'length', { value: length, configurable: true });
  };

  /** DateTimeFormat, NumberFormat and Collator also construct when called without `new`. */
  const constructibleWithoutNew = <T extends abstract new (...args: never[]) => object>(cls: T, kind: string): T => {
    const ctor = function (this: unknown, ...args: unknown[]) {
      return construct(cls as unknown as new (...a: unknown[]) => object, args, new.target ?? ctor);
    };
    defineProperty(ctor, 'name', { value: kind, configurable: true });
    defineProperty(ctor, 'prototype', { value: cls.prototype, writable: false, enumerable: false, configurable: false });
    defineGlobal(cls.prototype, 'constructor', ctor);
    return ctor as unknown as T;
  };

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

  class Segmenter {
    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'Segmenter', localesValue, options);
    }

    segment(value: unknown): Segments {
      const slot = slotOf(this, 'Segmenter', 'segment');
      const input = `${value as string}`;
      return makeSegments(input, new Uint32Array(call('segment', slot, wire(input)) as ArrayBuffer));
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'Segmenter', 'resolvedOptions'));
    }
  }

  /**
   * The segments of a text: the host gives each segment's start, with bit 31 set when the segment
   * is word-like (word granularity only: then the last entry is 0xFFFFFFFF).
   */
  let makeSegments: (input: string, starts: Uint32Array) => Segments;
  class Segments {
    #input = '';
    #starts: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
    #words = false;

    static {
      delete (Segments.prototype as { constructor?: unknown }).constructor;
      makeSegments = (input, starts) => {
        const segments = new Segments();
        segments.#input = input;
        segments.#words = starts.length > 0 && starts[starts.length - 1] === 0xffffffff;
        segments.#starts = segments.#words ? starts.subarray(0, starts.length - 1) : starts;
        return segments;
      };
    }

    containing(index?: unknown): unknown {
      const n = Math.trunc(Number(index)) || 0;
      const starts = this.#starts;
      if (n < 0 || n >= this.#input.length) return undefined;
      let low = 0;
      let high = starts.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if ((starts[mid] & 0x7fffffff) <= n) low = mid;
        else high = mid - 1;
      }
      return this.#data(low);
    }

    *[Symbol.iterator](): Generator<unknown> {
      for (let i = 0; i < this.#starts.length; i++) yield this.#data(i);
    }

    #data(i: number) {
      const start = this.#starts[i] & 0x7fffffff;
      const end = i + 1 < this.#starts.length ? this.#starts[i + 1] & 0x7fffffff : this.#input.length;
      const data: Record<string, unknown> = { segment: this.#input.slice(start, end), index: start, input: this.#input };
      if (this.#words) data.isWordLike = (this.#starts[i] & 0x80000000) !== 0;
      return data;
    }
  }

  class Locale {
    constructor(tag: unknown, options: unknown = undefined) {
      if (typeof tag !== 'string' && (typeof tag !== 'object' || tag === null)) throw new TypeError('First argument to Intl.Locale constructor can\'t be empty or missing');
      const text = tagOf(tag);
      locales.set(this, host.locale(text, readOptions('Locale', options, 'Locale', () => undefined)));
    }

    toString(): string {
      return localeOf(this, 'toString').tag;
    }

    maximize(): Locale {
      return new Locale(host.call('maximize', 'Locale', localeOf(this, 'maximize').tag) as string);
    }

    minimize(): Locale {
      return new Locale(host.call('minimize', 'Locale', localeOf(this, 'minimize').tag) as string);
    }

    static {
      for (const part of ['baseName', 'calendar', 'caseFirst', 'collation', 'hourCycle', 'numeric', 'numberingSystem', 'language', 'script', 'region'] as const) {
        defineProperty(Locale.prototype, part, { configurable: true, get: function (this: unknown) { return localeOf(this, part)[part]; } });
      }
      for (const info of ['Calendars', 'Collations', 'HourCycles', 'NumberingSystems', 'TimeZones', 'TextInfo', 'WeekInfo']) {
        defineGlobal(Locale.prototype, `get${info}`, {
          [`get${info}`](this: unknown) {
            return host.call(`get${info}`, 'Locale', localeOf(this, `get${info}`).tag);
          },
        }[`get${info}`]);
      }
    }
  }
  const localeOf = (value: unknown, method: string): LocaleRecord => {
    const record = typeof value === 'object' && value !== null ? locales.get(value) : undefined;
    if (!record) throw new TypeError(`Method Intl.Locale.prototype.${method} called on an incompatible receiver`);
    return record;
  };

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
  const sortedBy = new WeakMap<object, Slot>();
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

/** ToLength. */
function lengthOf(value: unknown): number {
  return Math.min(Math.max(Math.trunc(+(value as number)) || 0, 0), Number.MAX_SAFE_INTEGER);
}

/** ToPrimitive with the hint `number`. */
function toPrimitive(value: unknown): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return value;
  const object = value as Record<PropertyKey, unknown>;
  const exotic = object[Symbol.toPrimitive];
  if (exotic !== undefined && exotic !== null) {
    if (typeof exotic !== 'function') throw new TypeError('Symbol.toPrimitive is not a function');
    const result = Reflect.apply(exotic, value, ['number']) as unknown;
    if ((typeof result === 'object' && result !== null) || typeof result === 'function') throw new TypeError('Cannot convert object to primitive value');
    return result;
  }
  for (const name of ['valueOf', 'toString']) {
    const method = object[name];
    if (typeof method !== 'function') continue;
    const result = Reflect.apply(method, value, []) as unknown;
    if ((typeof result !== 'object' && typeof result !== 'function') || result === null) return result;
  }
  throw new TypeError('Cannot convert object to primitive value');
}
