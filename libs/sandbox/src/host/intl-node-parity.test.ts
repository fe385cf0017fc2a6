import fc from 'fast-check';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { connectorOutcomes, encodeNumber, nodeOutcomes, type IntlCase } from './intl-cases.fixture';

/**
 * Intl inside a connector gives exactly Node's results: for locales, time zones, options and values
 * generated at random, every call (and every error's type) is compared with Node's own.
 */
const CANDIDATE_LOCALES = [
  'en-US', 'en-GB', 'en-IN', 'en-AU', 'de-DE', 'de-CH', 'de-AT', 'fr-FR', 'fr-CA', 'fr-CH', 'es-ES', 'es-MX', 'es-419', 'it-IT', 'pt-BR',
  'pt-PT', 'nl-NL', 'sv-SE', 'da-DK', 'nb-NO', 'fi-FI', 'pl-PL', 'cs-CZ', 'sk-SK', 'hu-HU', 'ro-RO', 'tr-TR', 'ru-RU', 'uk-UA', 'el-GR',
  'he-IL', 'ar-EG', 'ar-SA', 'fa-IR', 'hi-IN', 'bn-BD', 'ta-IN', 'th-TH', 'ja-JP', 'ko-KR', 'zh-CN', 'zh-TW', 'zh-HK', 'vi-VN', 'id-ID',
  'lt-LT', 'lv-LV', 'et-EE', 'sr-Latn-RS', 'sr-Cyrl-RS', 'hr-HR', 'sl-SI', 'bg-BG', 'ka-GE', 'hy-AM', 'az-AZ', 'kk-KZ', 'sw-KE', 'am-ET',
  'my-MM', 'km-KH', 'ar-u-nu-latn', 'th-u-nu-thai', 'ja-JP-u-ca-japanese', 'fa-u-ca-persian', 'he-u-ca-hebrew', 'zh-u-ca-chinese',
  'en-u-hc-h23', 'de-u-co-phonebk', 'sv-u-co-trad', 'es-u-co-trad', 'en-u-kn-true', 'en-u-kf-upper', 'zz-ZZ',
];
const LOCALES = Intl.DateTimeFormat.supportedLocalesOf(CANDIDATE_LOCALES).concat(['zz-ZZ']);
const TIME_ZONES = Intl.supportedValuesOf('timeZone');

const locales = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...LOCALES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...LOCALES), { minLength: 0, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom('en_US', '', 'x', 'de-DE-u-ca') },
);
/**
 * For the built-in methods (`toLocaleString`...), no empty locale: after a call without locales, V8
 * answers an empty one from its cache instead of throwing (a fresh Node throws a RangeError, as the
 * sandbox does), so Node's own answer depends on what it ran before.
 */
const methodLocales = locales.filter((value) => value !== '');
const some = <T>(...values: T[]) => fc.constantFrom(...values);
const date = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2100, 0, 1) }) },
  { weight: 2, arbitrary: fc.integer({ min: -8.64e15, max: 8.64e15 }) },
  { weight: 1, arbitrary: some(NaN, 8.64e15 + 1, -0, 0.5) },
).map(encodeNumber);
const timeZone = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...TIME_ZONES) }, { weight: 1, arbitrary: some('UTC', 'Etc/GMT+5', 'Mars/Base', 'europe/berlin') });
const dateTimeCommon = {
  timeZone,
  hour12: fc.boolean(),
  hourCycle: some('h11', 'h12', 'h23', 'h24'),
  calendar: some('gregory', 'buddhist', 'japanese', 'islamic', 'hebrew', 'chinese', 'persian', 'iso8601', 'ethiopic', 'bogus'),
  numberingSystem: some('latn', 'arab', 'thai', 'deva', 'hanidec'),
};
const dateTimeOptions = fc.oneof(
  fc.record({ ...dateTimeCommon, dateStyle: some('full', 'long', 'medium', 'short'), timeStyle: some('full', 'long', 'medium', 'short') }, { requiredKeys: ['timeZone'] }),
  fc.record(
    {
      ...dateTimeCommon,
      weekday: some('narrow', 'short', 'long'),
      era: some('narrow', 'short', 'long'),
      year: some('numeric', '2-digit'),
      month: some('numeric', '2-digit', 'narrow', 'short', 'long'),
      day: some('numeric', '2-digit'),
      dayPeriod: some('narrow', 'short', 'long'),
      hour: some('numeric', '2-digit'),
      minute: some('numeric', '2-digit'),
      second: some('numeric', '2-digit'),
      fractionalSecondDigits: some(1, 2, 3, 4),
      timeZoneName: some('short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'),
      formatMatcher: some('basic', 'best fit'),
    },
    { requiredKeys: ['timeZone'] },
  ),
);

const numberOptions = fc.record(
  {
    style: some('decimal', 'percent', 'currency', 'unit'),
    currency: some('EUR', 'USD', 'JPY', 'GBP', 'CHF', 'INR', 'BHD', 'XXX', 'eur', 'EURO'),
    currencyDisplay: some('symbol', 'narrowSymbol', 'code', 'name'),
    currencySign: some('standard', 'accounting'),
    unit: some('kilometer-per-hour', 'percent', 'byte', 'gigabyte', 'celsius', 'liter', 'mile', 'second', 'day', 'furlong'),
    unitDisplay: some('short', 'long', 'narrow'),
    notation: some('standard', 'scientific', 'engineering', 'compact'),
    compactDisplay: some('short', 'long'),
    signDisplay: some('auto', 'never', 'always', 'exceptZero', 'negative'),
    useGrouping: some<boolean | string>(true, false, 'min2', 'auto', 'always', 'true', ''),
    minimumIntegerDigits: fc.integer({ min: 1, max: 22 }),
    minimumFractionDigits: fc.integer({ min: 0, max: 21 }),
    maximumFractionDigits: fc.integer({ min: 0, max: 21 }),
    minimumSignificantDigits: fc.integer({ min: 1, max: 21 }),
    maximumSignificantDigits: fc.integer({ min: 1, max: 22 }),
    roundingMode: some('ceil', 'floor', 'expand', 'trunc', 'halfCeil', 'halfFloor', 'halfExpand', 'halfTrunc', 'halfEven'),
    roundingPriority: some('auto', 'morePrecision', 'lessPrecision'),
    roundingIncrement: some(1, 2, 5, 10, 20, 25, 50, 100, 250, 500, 1000, 2500, 5000, 3),
    trailingZeroDisplay: some('auto', 'stripIfInteger'),
    numberingSystem: some('latn', 'arab', 'deva', 'fullwide'),
  },
  { requiredKeys: [] },
);
const numericString = fc.oneof(
  fc.tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.nat({ max: 999999 })).map(([a, b]) => `${a}.${b}`),
  some('1e3', ' 12 ', '0x1F', 'abc', '-0', 'Infinity', '', '1_000', '.5', '12345678901234567890.123456789'),
);
const number = fc.oneof(
  { weight: 4, arbitrary: fc.double().map(encodeNumber) },
  { weight: 3, arbitrary: fc.integer({ min: -1e9, max: 1e9 }).map((n) => n / 100) },
  { weight: 2, arbitrary: fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(encodeNumber) },
  { weight: 2, arbitrary: numericString },
);

/** Strings to sort: words of several scripts, with accents, case, digits and punctuation. */
const word = fc.oneof(
  some('a', 'A', 'á', 'ä', 'Ä', 'ae', 'b', 'z', 'ß', 'ss', 'ö', 'o', 'œ', 'ı', 'i', 'İ', 'I', 'ch', 'c', 'h', 'ñ', 'n', 'å', 'aa', 'ø',
    'résumé', 'resume', 'Resume', 'item 2', 'item 10', 'item-1', 'Zebra', 'zebra', 'Ärger', 'Arbeit', 'Öl', 'Ostern', 'çalı', 'cam',
    'Жук', 'ёлка', 'елка', 'δ', 'Δ', '日本', '中国', '한국', 'ไทย', '', ' ', '-', '\u0301', 'e\u0301', 'é', '\uD800', '\uFFFD', '😀'),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);


// Each property runs a hundred cases through the sandbox: seconds on a loaded machine.
jest.setTimeout(30_000);
describe('Intl in a connector gives exactly Node’s results', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());

  /** Each property run sends a batch of cases to one connector run and compares them with Node's outcomes. */
  const parity = (cases: fc.Arbitrary<IntlCase>, runs = 12) =>
    fc.assert(
      fc.asyncProperty(fc.array(cases, { minLength: 1, maxLength: 40 }), async (batch) => {
        expect(await connectorOutcomes(runtime, batch)).toEqual(nodeOutcomes(batch));
      }),
      { numRuns: runs },
    );

  it('uses en-US and UTC when a connector names no locale or time zone, as Node does on this host', () => {
    // The comparisons below assume Node's own defaults are the sandbox's.
    expect(new Intl.DateTimeFormat().resolvedOptions()).toMatchObject({ locale: 'en-US', timeZone: 'UTC' });
  });

  it('DateTimeFormat: format, formatToParts, formatRange(ToParts) and resolvedOptions for locales x time zones x options', () =>
    parity(
      fc.record({
        api: fc.constant('DateTimeFormat'),
        locales,
        options: dateTimeOptions,
        args: fc.tuple(date, date),
        // Parts are checked in a separate process the first time for each format (see DatePartsGuard): a sample of them.
        parts: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
      }),
      25,
    ));

  it('Date.prototype.toLocaleString, toLocaleDateString and toLocaleTimeString', () =>
    parity(fc.record({ api: fc.constant('Date'), locales: methodLocales, options: fc.option(dateTimeOptions, { nil: undefined }), args: fc.tuple(date) }), 25));

  it('NumberFormat: currency, percent, unit, compact, signs, rounding; numbers, numeric strings and BigInts', () =>
    parity(fc.record({ api: fc.constant('NumberFormat'), locales, options: numberOptions, args: fc.tuple(number, number) }), 25));

  it('Number.prototype.toLocaleString and BigInt.prototype.toLocaleString', () =>
    parity(
      fc.record({
        api: fc.constant('toLocaleString'),
        locales: methodLocales,
        options: fc.option(numberOptions, { nil: undefined }),
        args: fc.array(fc.oneof(fc.double().map(encodeNumber), fc.bigInt().map(encodeNumber)), { minLength: 1, maxLength: 4 }),
      }),
    ));

  it('Collator: sort with compare and with localeCompare gives Node’s order, for sensitivity, numeric and caseFirst', () =>
    parity(
      fc.record({
        api: fc.constant('Collator'),
        locales: methodLocales,
        options: fc.record(
          {
            usage: some('sort', 'search'),
            sensitivity: some('base', 'accent', 'case', 'variant', 'bogus'),
            numeric: fc.boolean(),
            caseFirst: some('upper', 'lower', 'false'),
            ignorePunctuation: fc.boolean(),
            collation: some('phonebk', 'trad', 'pinyin', 'stroke', 'emoji', 'eor'),
          },
          { requiredKeys: [] },
        ),
        args: fc.array(word, { minLength: 1, maxLength: 60 }),
      }),
      20,
    ));

  it('PluralRules: select, selectRange and resolvedOptions', () =>
    parity(
      fc.record({
        api: fc.constant('PluralRules'),
        locales,
        options: fc.record(
          {
            type: some('cardinal', 'ordinal'),
            minimumFractionDigits: fc.integer({ min: 0, max: 4 }),
            maximumSignificantDigits: fc.integer({ min: 1, max: 5 }),
            roundingPriority: some('auto', 'lessPrecision'),
          },
          { requiredKeys: [] },
        ),
        args: fc.tuple(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -100, max: 100, noNaN: true })), fc.integer({ min: 0, max: 1000 })),
      }),
    ));

  it('RelativeTimeFormat, ListFormat, DisplayNames and Segmenter', () =>
    parity(
      fc.oneof(
        fc.record({
          api: fc.constant('RelativeTimeFormat'),
          locales,
          options: fc.record({ style: some('long', 'short', 'narrow'), numeric: some('always', 'auto') }, { requiredKeys: [] }),
          unit: some('second', 'minutes', 'hour', 'day', 'weeks', 'month', 'quarter', 'year', 'fortnight'),
          // Encoded: -0 ("0 seconds ago", not "in 0 seconds") does not survive JSON as it is.
          args: fc.tuple(fc.oneof(fc.integer({ min: -100, max: 100 }), fc.double({ noNaN: true, min: -10, max: 10 }).map(encodeNumber))),
        }),
        fc.record({
          api: fc.constant('ListFormat'),
          locales,
          options: fc.record({ type: some('conjunction', 'disjunction', 'unit'), style: some('long', 'short', 'narrow') }, { requiredKeys: [] }),
          args: fc.array(word, { maxLength: 5 }),
        }),
        fc.record({
          api: fc.constant('DisplayNames'),
          locales,
          options: fc.record({ type: some('language', 'region', 'script', 'currency', 'calendar', 'dateTimeField'), style: some('long', 'short', 'narrow'), fallback: some('code', 'none'), languageDisplay: some('dialect', 'standard') }, { requiredKeys: ['type'] }),
          args: fc.array(some('de', 'en-GB', 'zh-Hant', 'US', 'DE', '419', 'Latn', 'Cyrl', 'EUR', 'JPY', 'gregory', 'era', 'month', 'xx', 'XYZ', '123'), { maxLength: 3 }),
        }),
        fc.record({
          api: fc.constant('Segmenter'),
          locales,
          options: fc.record({ granularity: some('grapheme', 'word', 'sentence') }, { requiredKeys: [] }),
          args: fc.tuple(fc.oneof(word, fc.array(word).map((words) => words.join(' ')), some('Hello, world! How are you? Fine.', 'นี่คือการทดสอบ', '今日は良い天気です。', 'a\uD800b')), fc.integer({ min: -1, max: 40 })),
        }),
      ),
    ));

  it('Locale, getCanonicalLocales, supportedLocalesOf, toLocaleUpperCase / toLocaleLowerCase and Array.prototype.toLocaleString', () =>
    parity(
      fc.oneof(
        fc.record({
          api: fc.constant('Locale'),
          options: fc.option(fc.record({ calendar: some('gregory', 'japanese'), hourCycle: some('h12', 'h23'), numeric: fc.boolean(), region: some('US', 'GB', 'x') }, { requiredKeys: [] }), { nil: undefined }),
          args: fc.tuple(fc.constantFrom(...LOCALES, 'zh', 'sr', 'und', 'en-Latn', 'i-klingon', 'EN-us', '')),
        }),
        fc.record({ api: fc.constant('canonical'), locales }),
        fc.record({ api: fc.constant('supportedLocalesOf'), locales, options: fc.option(fc.record({ localeMatcher: some('lookup', 'best fit', 'nope') }), { nil: undefined }) }),
        fc.record({ api: fc.constant('case'), locales: methodLocales, args: fc.tuple(fc.oneof(word, some('istanbul İSTANBUL ıi', 'ΌΣΟΣ σοφός', 'i̇ JÌ Į́', 'ǅ ß ŉ'))) }),
        fc.record({ api: fc.constant('Array'), locales: methodLocales, options: fc.option(numberOptions, { nil: undefined }), args: fc.array(number, { maxLength: 4 }) }),
      ),
    ));
});
