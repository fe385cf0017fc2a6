/** What the Intl modules share: the host's functions, the wire types, the option schemas, and ToLength and ToPrimitive. */

/** The host functions of this module (libs/sandbox/src/host/intl.host.ts). */
export interface IntlHost {
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
export type TextResult = string | [string];

/** A text as the host takes it: a string, or UTF-16 code units when it has lone surrogates (see wire). */
export type Wire = string | ArrayBuffer;

export interface LocaleRecord {
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
export type OptionsMode = 'coerce' | 'object';

/** A kind of option value: a string, a boolean, a number, or useGrouping's boolean-or-string. */
export type OptionType = 's' | 'b' | 'n' | 'g';

export const DIGITS = 'minimumIntegerDigits:n minimumFractionDigits:n maximumFractionDigits:n minimumSignificantDigits:n maximumSignificantDigits:n roundingIncrement:n roundingMode roundingPriority trailingZeroDisplay';

/** Each constructor's options in the order ECMA-402 reads them, with their types. */
export const SCHEMAS: Record<string, [OptionsMode, string]> = {
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

export type Slot = { kind: string; config: string; ranks?: Ranks };
/** A collator configuration's labels for the strings it compared (see IntlHost.rank); `direct` once it compares through the host one by one. */
export type Ranks = { epoch: number; labels: Map<string, number>; direct: boolean };

/** Characters of JSON text an array sorted by the host may take (the host's cap on one call's text). */
export const MAX_SORTED_TEXT = 4 * 1024 * 1024;
/** ToLength. */
export function lengthOf(value: unknown): number {
  return Math.min(Math.max(Math.trunc(+(value as number)) || 0, 0), Number.MAX_SAFE_INTEGER);
}

/** ToPrimitive with the hint `number`. */
export function toPrimitive(value: unknown): unknown {
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
