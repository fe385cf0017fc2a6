import { LruMap } from '@gi/domain';
import { DatePartsGuard } from './date-parts-guard';
import { SandboxError } from './host-module';

/** Characters of text one Intl host call takes at most: it bounds the host's work for one call. */
export const MAX_INTL_TEXT = 4 * 1024 * 1024;
/** Formatters a thread keeps; past that the least recently used is dropped (and made again when needed). */
export const MAX_CACHED_FORMATTERS = 256;
/** Configurations longer than this are not cached: the cache's memory stays bounded. */
const MAX_CACHED_CONFIG = 2048;

/** The sandbox's locale, whatever the host's. */
const SANDBOX_LOCALE = 'en-US';
/**
 * When the host's own default locale is the sandbox's (the usual case), locale lists go to Node as
 * they are and the results are exactly Node's. On a host set to another locale, the sandbox's is
 * given explicitly, so a connector's results never depend on where the service runs.
 */
const HOST_IS_SANDBOX_LOCALE = new Intl.NumberFormat().resolvedOptions().locale === SANDBOX_LOCALE;
/** The sandbox's time zone: dates are formatted in UTC unless a connector names a `timeZone`. */
const SANDBOX_TIME_ZONE = 'UTC';

type Options = Record<string, string | boolean>;

/** What each kind's formatter offers a connector, with the types of the arguments (n: number, s: string, x: number, numeric string or BigInt). */
const METHODS: Record<string, Record<string, string>> = {
  DateTimeFormat: { format: 'n', formatToParts: 'n', formatRange: 'nn', formatRangeToParts: 'nn', resolvedOptions: '' },
  NumberFormat: { format: 'x', formatToParts: 'x', formatRange: 'xx', formatRangeToParts: 'xx', resolvedOptions: '' },
  Collator: { compare: 'ss', sort: 'l', resolvedOptions: '' },
  PluralRules: { select: 'n', selectRange: 'nn', resolvedOptions: '' },
  RelativeTimeFormat: { format: 'ns', formatToParts: 'ns', resolvedOptions: '' },
  ListFormat: { format: 'l', formatToParts: 'l', resolvedOptions: '' },
  DisplayNames: { of: 's', resolvedOptions: '' },
  Segmenter: { segment: 's', resolvedOptions: '' },
};
/** `Date.prototype.toLocaleString`, `toLocaleDateString` and `toLocaleTimeString`: the fields they need, and those they add when none is given. */
const DATE_METHODS: Record<string, { required: 'any' | 'date' | 'time'; defaults: 'all' | 'date' | 'time' }> = {
  'DateTimeFormat:any': { required: 'any', defaults: 'all' },
  'DateTimeFormat:date': { required: 'date', defaults: 'date' },
  'DateTimeFormat:time': { required: 'time', defaults: 'time' },
};
/** METHODS by kind and name, the date methods' kinds included (a Map: no name a connector sends reaches Object.prototype). */
const METHOD_TYPES = new Map(
  [...Object.keys(METHODS), ...Object.keys(DATE_METHODS)].map((kind) => [kind, new Map(Object.entries(METHODS[kind] ?? METHODS.DateTimeFormat))]),
);
const LOCALE_METHODS = new Set(['maximize', 'minimize', 'getCalendars', 'getCollations', 'getHourCycles', 'getNumberingSystems', 'getTimeZones', 'getTextInfo', 'getWeekInfo']);

type Formatter = Intl.DateTimeFormat | Intl.NumberFormat | Intl.Collator | Intl.PluralRules | Intl.RelativeTimeFormat | Intl.ListFormat | Intl.DisplayNames | Intl.Segmenter;

/**
 * Node's Intl objects for the configurations connectors give (`[locales, options]` as JSON text,
 * read by the sandbox as the standard reads them), kept in a bounded cache shared by the thread's
 * runs: a formatter holds locales and options only. A configuration is untrusted text: it is parsed
 * and checked whenever its formatter is made.
 */
export class IntlFormatters {
  private readonly cache = new LruMap<string, Formatter>(MAX_CACHED_FORMATTERS);
  private readonly dateParts = new DatePartsGuard();
  /** The options each date formatter was made with, for the DatePartsGuard. */
  private readonly dateOptions = new WeakMap<Formatter, Options>();

  /** Formatters kept now. */
  get size(): number {
    return this.cache.size;
  }

  /** Checks a configuration (Node's errors), and keeps its formatter for the calls that follow. */
  create(kind: string, config: string, partial: boolean): void {
    if (kind === 'Locale') return; // its tag and options are checked as it is made (locale)
    if (partial) this.make(kind, config, true);
    else this.formatter(kind, config);
  }

  /** `mayCheckDateParts()`: whether a date format may be checked now (see DatePartsGuard), which takes a process. */
  call(method: string, kind: string, config: string, a: unknown, b: unknown, bigints: number, mayCheckDateParts: () => boolean): unknown {
    if (kind === 'Locale') return this.localeCall(method, config);
    if (method === 'supportedLocalesOf') return this.supportedLocalesOf(kind, config);
    const types = METHOD_TYPES.get(kind)?.get(method);
    if (types === undefined) throw new SandboxError('TypeError', `Intl.${kind} has no method ${method}.`);
    const args = [...types].map((type, i) => argument(i === 0 ? a : b, type, (bigints & (1 << i)) !== 0));
    const formatter = this.formatter(kind, config);
    if (kind === 'DateTimeFormat' && (method === 'formatToParts' || method === 'formatRangeToParts')) this.checkDateParts(formatter as Intl.DateTimeFormat, mayCheckDateParts);
    if (method === 'segment') return segmentStarts(formatter as Intl.Segmenter, args[0] as string);
    if (method === 'sort') return sortOrder(formatter as Intl.Collator, args[0] as string[]);
    return textResult((formatter as unknown as Record<string, (...values: unknown[]) => unknown>)[method](...args));
  }

  collator(config: string): Intl.Collator {
    return this.formatter('Collator', config) as Intl.Collator;
  }

  private checkDateParts(format: Intl.DateTimeFormat, mayCheck: () => boolean): void {
    const safe = this.dateParts.isSafe(format, this.dateOptions.get(format) ?? {}, mayCheck);
    if (safe === true) return;
    if (safe === 'not checked') throw new SandboxError('RangeError', 'The run asked for the parts of more new date formats than Intl checks in one run; use fewer distinct formats.');
    if (safe === 'check failed') throw new SandboxError('RangeError', 'The parts of this date format could not be checked (no process could be started for it); try again later.');
    const { locale, calendar } = format.resolvedOptions();
    throw new SandboxError('RangeError', `The parts of this date format (${locale}, ${calendar} calendar) cannot be made: Node's locale data has a field it cannot name. Use format() instead.`);
  }

  /** The parts of an `Intl.Locale`. */
  locale(tag: string, options: string): Record<string, unknown> {
    const locale = new Intl.Locale(tag, parseOptions(options));
    const { baseName, calendar, caseFirst, collation, hourCycle, numeric, numberingSystem, language, script, region } = locale;
    return { tag: locale.toString(), baseName, calendar, caseFirst, collation, hourCycle, numeric, numberingSystem, language, script, region };
  }

  private localeCall(method: string, tag: string): unknown {
    if (!LOCALE_METHODS.has(method)) throw new SandboxError('TypeError', `Intl.Locale has no method ${method}.`);
    const locale = new Intl.Locale(tag) as unknown as Record<string, unknown>;
    if (method === 'maximize' || method === 'minimize') return String((locale[method] as () => Intl.Locale)());
    // Node 20 has these as getters (`calendars`); newer versions as methods (`getCalendars()`).
    const fn = locale[method];
    return typeof fn === 'function' ? (fn as () => unknown).call(locale) : locale[method[3].toLowerCase() + method.slice(4)];
  }

  private supportedLocalesOf(kind: string, config: string): string[] {
    const ctor = (Intl as unknown as Record<string, { supportedLocalesOf?: (tags: string[], options: Options) => string[] }>)[kind];
    if (!METHOD_TYPES.has(kind) || DATE_METHODS[kind] || typeof ctor?.supportedLocalesOf !== 'function') throw new SandboxError('TypeError', `Intl.${kind} has no supportedLocalesOf.`);
    const [tags, options] = parseConfig(config);
    return ctor.supportedLocalesOf(tags, options);
  }

  private formatter(kind: string, config: string): Formatter {
    const key = `${kind} ${config}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const made = this.make(kind, config, false);
    if (config.length <= MAX_CACHED_CONFIG) {
      this.cache.set(key, made);
    }
    return made;
  }

  /** A formatter for a configuration; `partial`: only the options read before a getter threw (a required `type` is not missed then). */
  private make(kind: string, config: string, partial: boolean): Formatter {
    const [tags, options] = parseConfig(config);
    const locales = withSandboxDefault(tags, false);
    const dateMethod = own(DATE_METHODS, kind);
    if (dateMethod) return dateTimeFormatFor(locales, options, dateMethod.required, dateMethod.defaults);
    switch (kind) {
      case 'DateTimeFormat': {
        const dateOptions = inSandboxTimeZone(options);
        const format = new Intl.DateTimeFormat(locales, dateOptions);
        this.dateOptions.set(format, dateOptions);
        return format;
      }
      case 'NumberFormat':
        return new Intl.NumberFormat(locales, options);
      case 'Collator':
        return new Intl.Collator(locales, options);
      case 'PluralRules':
        return new Intl.PluralRules(locales, options);
      case 'RelativeTimeFormat':
        return new Intl.RelativeTimeFormat(locales, options);
      case 'ListFormat':
        return new Intl.ListFormat(locales, options);
      case 'DisplayNames':
        return new Intl.DisplayNames(locales, (partial ? { type: 'language', ...options } : options) as unknown as Intl.DisplayNamesOptions);
      case 'Segmenter':
        return new Intl.Segmenter(locales, options);
    }
    throw new SandboxError('TypeError', `Intl has no ${kind}.`);
  }
}

/** A table's own entry (never one inherited from Object.prototype, whatever name a connector sends). */
function own<T>(table: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

/**
 * A text argument: a string, or UTF-16 code units (how the sandbox sends a text with lone surrogates,
 * which the engine's UTF-8 hand-over of strings would replace). At most MAX_INTL_TEXT characters:
 * the bound on the host's work for one call.
 */
export function hostText(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value instanceof Uint8Array && value.byteLength % 2 === 0) text = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf16le');
  else throw new SandboxError('TypeError', 'Intl expected a string here.');
  if (text.length > MAX_INTL_TEXT) throw new SandboxError('RangeError', `Intl takes at most ${MAX_INTL_TEXT.toLocaleString('en-US')} characters of text in one call.`);
  return text;
}

/**
 * A result for the sandbox. A string with lone surrogates (a list formatted from such texts) would not
 * survive the engine's UTF-8 hand-over: it goes as the only item of an array (JSON keeps it exact).
 */
export function textResult(value: unknown): unknown {
  return typeof value === 'string' && !wellFormed(value).isWellFormed() ? [value] : value;
}

/** ES2024's well-formed string methods (Node 20 has them; the compiler's library is older). */
export function wellFormed(text: string): { isWellFormed(): boolean; toWellFormed(): string } {
  return text as unknown as { isWellFormed(): boolean; toWellFormed(): string };
}

/** A list of tags given as JSON text. */
export function parseTags(json: string): string[] {
  const tags = parseJson(json);
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) throw invalid();
  return tags;
}

/** The locales to give Node: as they are, or with the sandbox's locale as the fallback when the host's default differs (see HOST_IS_SANDBOX_LOCALE). */
export function withSandboxDefault(tags: string[], always: boolean): string[] {
  if (HOST_IS_SANDBOX_LOCALE && !always) return tags;
  return tags.length === 0 ? [SANDBOX_LOCALE] : always ? tags : [...tags, SANDBOX_LOCALE];
}

function parseConfig(config: string): [string[], Options] {
  const parsed = parseJson(config);
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Array.isArray(parsed[0]) || !parsed[0].every((tag) => typeof tag === 'string')) throw invalid();
  return [parsed[0] as string[], checkOptions(parsed[1])];
}

function parseOptions(json: string): Options {
  return checkOptions(parseJson(json));
}

function checkOptions(options: unknown): Options {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid();
  if (!Object.values(options).every((value) => typeof value === 'string' || typeof value === 'boolean')) throw invalid();
  return options as Options;
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw invalid();
  }
}

const invalid = () => new SandboxError('TypeError', 'Invalid Intl configuration.');

/** An argument of a method, of the type it takes (`x`: a number, a numeric string, or a BigInt given as text). */
function argument(value: unknown, type: string, bigint: boolean): unknown {
  if (type === 'n' && typeof value === 'number') return value;
  if (type === 's') return hostText(value);
  if (type === 'x' && bigint && typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  if (type === 'x' && !bigint && (typeof value === 'number' || typeof value === 'string')) return value;
  if (type === 'l' && typeof value === 'string') return parseTags(value);
  throw new SandboxError('TypeError', 'Invalid argument for an Intl method.');
}

function inSandboxTimeZone(options: Options): Options {
  return options.timeZone === undefined ? { ...options, timeZone: SANDBOX_TIME_ZONE } : options;
}

const DATE_FIELDS = ['weekday', 'year', 'month', 'day'];
const TIME_FIELDS = ['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits'];

/** Whether this Node refuses an invalid locale or option before a style the method does not take (ECMA-402's order). */
const OPTIONS_CHECKED_FIRST = (() => {
  try {
    new Date(0).toLocaleDateString('en_US', { timeStyle: 'full' });
  } catch (error) {
    return error instanceof RangeError;
  }
  return false;
})();

/**
 * The formatter of `Date.prototype.toLocaleString` (required any, defaults all), `toLocaleDateString`
 * (date, date) and `toLocaleTimeString` (time, time): ECMA-402's ToDateTimeOptions, which adds the
 * default fields when none of the required ones is given.
 */
function dateTimeFormatFor(locales: string[], options: Options, required: 'any' | 'date' | 'time', defaults: 'all' | 'date' | 'time'): Intl.DateTimeFormat {
  const { dateStyle, timeStyle } = options;
  const refused = required === 'date' && timeStyle !== undefined ? 'timeStyle' : required === 'time' && dateStyle !== undefined ? 'dateStyle' : null;
  if (refused) {
    // In the order the host's V8 checks: newer ones (Node 24) read every option first, as ECMA-402 does,
    // so an invalid locale or time zone is the RangeError it is before the style is refused.
    if (OPTIONS_CHECKED_FIRST) new Intl.DateTimeFormat(locales, inSandboxTimeZone(options));
    throw new SandboxError('TypeError', `Invalid option : ${refused}`);
  }
  const given = (fields: string[]) => fields.some((field) => options[field] !== undefined);
  const needDefaults = dateStyle === undefined && timeStyle === undefined && !(required !== 'time' && given(DATE_FIELDS)) && !(required !== 'date' && given(TIME_FIELDS));
  const added: Options = {};
  if (needDefaults && defaults !== 'time') Object.assign(added, { year: 'numeric', month: 'numeric', day: 'numeric' });
  if (needDefaults && defaults !== 'date') Object.assign(added, { hour: 'numeric', minute: 'numeric', second: 'numeric' });
  return new Intl.DateTimeFormat(locales, inSandboxTimeZone({ ...options, ...added }));
}

/** The order of a list of strings sorted (stably) with a collator, as little-endian 32-bit indices. */
function sortOrder(collator: Intl.Collator, list: string[]): Uint8Array {
  const order = Array.from(list, (_, i) => i).sort((i, j) => collator.compare(list[i], list[j]) || i - j);
  return new Uint8Array(Uint32Array.from(order).buffer);
}

/**
 * Where each segment of a text starts, as little-endian 32-bit numbers (bit 31: word-like); for word
 * granularity a last 0xFFFFFFFF says that the word-like bits are meaningful.
 */
function segmentStarts(segmenter: Intl.Segmenter, input: string): Uint8Array {
  const words = segmenter.resolvedOptions().granularity === 'word';
  const starts = new Uint32Array(input.length + 1);
  let count = 0;
  for (const { index, isWordLike } of segmenter.segment(input)) starts[count++] = (index | (isWordLike ? 0x80000000 : 0)) >>> 0;
  if (words) starts[count++] = 0xffffffff;
  return new Uint8Array(starts.buffer.slice(0, count * 4));
}
