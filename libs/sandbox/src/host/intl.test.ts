import type { ConnectorRunRequest } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { MAX_INTL_TEXT } from './intl-formatters';
import { MAX_DATE_PARTS_CHECKS } from './intl.host';

/** Runs `expression` (awaited) in a connector and gives its value back. */
function connector(runtime: () => QuickJsConnectorRuntime, prefix: string) {
  let key = 0;
  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime().run({ cacheKey: `bot/${prefix}@${++key}`, code, entity: null, timeoutMs: 20_000, allowedHosts: [], ...extra });
  const value = async (expression: string, extra: Partial<ConnectorRunRequest> = {}) => {
    const result = await run(`Context.SetResponseEntity({ ResponseBody: await (async () => ${expression})() });`, extra);
    if (result.kind !== 'ok') throw new Error(JSON.stringify(result));
    return result.responseBody;
  };
  return { run, value };
}

/** The error a call throws, by constructor name and message, or its result. */
const OUTCOME = `const outcome = (f) => { try { return { ok: f() }; } catch (e) { return { error: e.constructor.name, message: e.message }; } };`;
const outcome = (f: () => unknown) => {
  try {
    return { ok: f() };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
};

describe('Intl in a connector', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());
  const { run, value } = connector(() => runtime, 'intl');

  it('formats the issue’s example as Node does: de-DE in Europe/Berlin, and German numbers', async () => {
    const got = await value(`[
      new Date(0).toLocaleString('de-DE', { timeZone: 'Europe/Berlin' }),
      (1234.5).toLocaleString('de-DE'),
      new Intl.DateTimeFormat('de-DE', { timeZone: 'Europe/Berlin', dateStyle: 'full', timeStyle: 'long' }).format(Date.UTC(2024, 6, 1, 12)),
      new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(1234.5),
      new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 }).format(0.1234),
    ]`);
    expect(got).toEqual([
      '1.1.1970, 01:00:00',
      '1.234,5',
      new Intl.DateTimeFormat('de-DE', { timeZone: 'Europe/Berlin', dateStyle: 'full', timeStyle: 'long' }).format(Date.UTC(2024, 6, 1, 12)),
      (1234.5).toLocaleString('de-DE', { style: 'currency', currency: 'EUR' }),
      '12.3%',
    ]);
  });

  it('lives in UTC and en-US: local time is UTC, and timeZone gives local times elsewhere', async () => {
    const got = await value(`[
      new Date(0).getTimezoneOffset(),
      new Date(0).toLocaleString(),
      Intl.DateTimeFormat().resolvedOptions().timeZone,
      new Intl.NumberFormat().resolvedOptions().locale,
      new Date(0).toLocaleTimeString('en-US', { timeZone: 'America/New_York' }),
    ]`);
    expect(got).toEqual([0, '1/1/1970, 12:00:00 AM', 'UTC', 'en-US', '7:00:00 PM']);
  });

  it('has the built-ins’ shape: names, lengths, toStringTag, instanceof, construction without new where the standard allows it', async () => {
    const probe = `(() => {
      const kinds = ['DateTimeFormat', 'NumberFormat', 'Collator', 'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'DisplayNames', 'Segmenter', 'Locale'];
      const shape = kinds.map((k) => [k, Intl[k].name, Intl[k].length, Object.prototype.toString.call(Intl[k].prototype), typeof Intl[k].supportedLocalesOf,
        Object.getOwnPropertyDescriptor(Intl, k).enumerable, Object.getOwnPropertyDescriptor(Intl[k], 'prototype').writable]);
      const called = ['DateTimeFormat', 'NumberFormat', 'Collator', 'PluralRules'].map((k) => { try { return Intl[k]() instanceof Intl[k]; } catch (e) { return e.constructor.name; } });
      class Mine extends Intl.NumberFormat { twice(x) { return this.format(x) + this.format(x); } }
      const dtf = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC' });
      const format = dtf.format;
      return { shape, called, tag: Object.prototype.toString.call(Intl), sub: new Mine('de-DE').twice(1.5), bound: format(0), same: dtf.format === format,
        lengths: [dtf.format.length, dtf.formatToParts.length, new Intl.Collator().compare.length, Intl.getCanonicalLocales.length] };
    })()`;
    const got = await value(probe);
    const node = new Function(`return ${probe}`)();
    expect(got).toEqual(node);
  });

  it('reads options in ECMA-402’s order, each once, running their getters', async () => {
    const got = await value(`(() => {
      const log = [];
      const spy = (values) => new Proxy({}, { get(_, k) { if (typeof k === 'string') log.push(k); return values[k]; } });
      new Intl.DateTimeFormat('en', spy({ timeZone: 'UTC', hour: 'numeric' }));
      const dates = log.splice(0);
      new Intl.NumberFormat('en', spy({ style: 'currency', currency: 'EUR' }));
      const numbers = log.splice(0);
      new Intl.Collator('en', spy({}));
      return { dates, numbers, collator: log.splice(0) };
    })()`);
    expect(got).toEqual({
      dates: ['localeMatcher', 'calendar', 'numberingSystem', 'hour12', 'hourCycle', 'timeZone', 'weekday', 'era', 'year', 'month', 'day', 'dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits', 'timeZoneName', 'formatMatcher', 'dateStyle', 'timeStyle'],
      numbers: ['localeMatcher', 'numberingSystem', 'style', 'currency', 'currencyDisplay', 'currencySign', 'unit', 'unitDisplay', 'notation', 'minimumIntegerDigits', 'minimumFractionDigits', 'maximumFractionDigits', 'minimumSignificantDigits', 'maximumSignificantDigits', 'roundingIncrement', 'roundingMode', 'roundingPriority', 'trailingZeroDisplay', 'compactDisplay', 'useGrouping', 'signDisplay'],
      collator: ['usage', 'localeMatcher', 'collation', 'numeric', 'caseFirst', 'sensitivity', 'ignorePunctuation'],
    });
  });

  it('throws Node’s errors: RangeError for invalid locales, time zones and values, TypeError for missing or wrong options', async () => {
    const cases: Array<() => unknown> = [
      () => new Intl.DateTimeFormat('en_US'),
      () => new Intl.DateTimeFormat('en', { timeZone: 'Mars/Olympus_Mons' }),
      () => new Intl.DateTimeFormat('en', { dateStyle: 'short', hour: 'numeric' }),
      () => new Intl.DateTimeFormat('en', { hourCycle: 'h25' as 'h23' }),
      () => new Intl.DateTimeFormat('en', { timeZone: 'UTC' }).format(NaN),
      () => new Intl.NumberFormat('en', { style: 'currency' }),
      () => new Intl.NumberFormat('en', { style: 'currency', currency: 'EURO' }),
      () => new Intl.NumberFormat('en', { style: 'unit', unit: 'furlong' }),
      () => new Intl.NumberFormat('en', { maximumFractionDigits: 101 }),
      () => new Intl.NumberFormat('en', { minimumFractionDigits: NaN }),
      () => (new Intl.PluralRules('en') as unknown as { selectRange(start: number, end: number): string }).selectRange(NaN, 1),
      () => new Intl.RelativeTimeFormat('en').format(1, 'fortnight' as 'day'),
      () => new Intl.DisplayNames('en', {} as Intl.DisplayNamesOptions),
      () => Intl.supportedValuesOf('colour' as 'unit'),
      () => Intl.getCanonicalLocales(['en', 5 as unknown as string]),
      () => 'i'.toLocaleUpperCase('!!'),
      () => new Date(0).toLocaleDateString('en', { timeStyle: 'short' }),
      () => 'a'.localeCompare('a', 'en_US'),
    ];
    const got = await value(`(() => { ${OUTCOME} return [${cases.map((f) => `outcome(${f.toString()})`).join(',')}]; })()`);
    const node = cases.map(outcome);
    // Errors Node's Intl throws reach the connector with their messages; those the sandbox throws itself (reading arguments) with the same type.
    expect((got as Array<Record<string, unknown>>).map(({ error }) => error)).toEqual(node.map((o) => ('error' in o ? o.error : 'none')));
    expect((got as Array<{ message: string }>).map((o) => o.message).slice(0, 12)).toEqual(node.map((o) => ('message' in o ? o.message : '')).slice(0, 12));
  });

  it('formats BigInts and numeric strings exactly, and -0, NaN and infinities as Node does', async () => {
    const probe = `(() => {
      const nf = new Intl.NumberFormat('en-US', { maximumFractionDigits: 20 });
      return [nf.format(123456789012345678901234567890n), nf.format('0.1000000000000000000000001'), nf.format('12345678901234567890.5'), nf.format(-0), nf.format(NaN), nf.format(-Infinity),
        (10n ** 20n).toLocaleString('de-DE'), nf.formatRange(1n, '2.5'), nf.formatToParts(-1234.5), new Intl.NumberFormat('en', { notation: 'compact' }).format(1234567),
        new Intl.NumberFormat('en', { style: 'unit', unit: 'kilometer-per-hour', unitDisplay: 'long' }).format(88), new Intl.NumberFormat('en', { signDisplay: 'exceptZero' }).format(0)];
    })()`;
    expect(await value(probe)).toEqual(JSON.parse(JSON.stringify(new Function(`return ${probe}`)())));
  });

  it('sorts with Collator and localeCompare as Node does: sensitivity, numeric, caseFirst, and 10,000 strings within a second or so', async () => {
    const words = Array.from({ length: 10_000 }, (_, i) => `${['Ärger', 'arbeit', 'Zebra', 'zürich', 'item ', 'Öl', 'ostern', 'Ähre', 'résumé', 'Resume'][i % 10]}${(i * 7919) % 10007}`);
    const result = await run(
      `const words = Context.GetRequestEntity().RequestBody;
       const started = Date.now();
       const sorted = words.slice().sort(new Intl.Collator('de').compare);
       const ms = Date.now() - started;
       const numeric = ['item 10', 'item 9', 'Item 1', 'item 1'].sort(new Intl.Collator('en', { numeric: true, caseFirst: 'upper' }).compare);
       const base = ['a', 'á', 'A', 'b'].filter((w) => 'a'.localeCompare(w, 'en', { sensitivity: 'base' }) === 0);
       const swedish = ['z', 'ö', 'o', 'å', 'a'].sort((a, b) => a.localeCompare(b, 'sv'));
       Context.SetResponseEntity({ ResponseBody: { sorted, ms, numeric, base, swedish } });`,
      { entity: { RequestParams: '', RequestHeaders: '', RequestBody: words, ResponseBody: null } },
    );
    expect(result.kind).toBe('ok');
    const body = (result as { responseBody: { sorted: string[]; ms: number; numeric: string[]; base: string[]; swedish: string[] } }).responseBody;
    expect(body.sorted).toEqual(words.slice().sort(new Intl.Collator('de').compare));
    expect(body.numeric).toEqual(['item 10', 'item 9', 'Item 1', 'item 1'].sort(new Intl.Collator('en', { numeric: true, caseFirst: 'upper' }).compare));
    expect(body.base).toEqual(['a', 'á', 'A']);
    expect(body.swedish).toEqual(['a', 'o', 'z', 'å', 'ö']);
    expect(body.ms).toBeLessThan(5000);
  });

  it('sorts arrays with holes, undefined, numbers and objects with a collator as the engine does, and frozen arrays not at all', async () => {
    const probe = `(() => {
      const compare = new Intl.Collator('de', { numeric: true }).compare;
      // eslint-disable-next-line no-sparse-arrays
      const mixed = ['b', 10, undefined, 'a', , 9, { toString: () => 'ä' }, null, 'B'];
      const strings = ['b', 'a', 'ä', 'B'];
      const frozen = Object.freeze(['b', 'a']);
      let error = '';
      try { frozen.sort(compare); } catch (e) { error = e.constructor.name; }
      return [Array.from(mixed.sort(compare), String), mixed.length, strings.sort(compare) === strings, strings, ['x'].sort(compare), error, frozen];
    })()`;
    expect(await value(probe)).toEqual(new Function(`return ${probe}`)());
  });

  it('maps case for Turkish, Azeri, Lithuanian and Greek, and keeps lone surrogates intact', async () => {
    const probe = `['istanbul'.toLocaleUpperCase('tr'), 'İSTANBUL I'.toLocaleLowerCase('tr-TR'), 'i'.toLocaleUpperCase('az'), 'i̇'.toLocaleUpperCase('lt'), 'ΌΣΟΣ'.toLocaleLowerCase('el'),
      'ά'.toLocaleUpperCase('el'), 'i'.toLocaleUpperCase(['en', 'tr']), 'ß'.toLocaleUpperCase('de'), 'a\\uD800i'.toLocaleUpperCase('tr'), ['\\uD800', '\\uFFFD', 'a'].sort(new Intl.Collator('en').compare),
      new Intl.ListFormat('fa').format(['\\uD800', 'a'])]`;
    expect(await value(probe)).toEqual(new Function(`return ${probe}`)());
  });

  it('replaces the locale methods of the built-ins however they are reached: call, apply, saved references, names built at run time', async () => {
    const got = await value(`(() => {
      ${OUTCOME}
      const tls = 'toLocale' + 'String';
      const compare = 'locale' + 'Compare';
      const saved = Number.prototype[tls];
      const array = [1234.5, new Date(0), null, 7n][tls]('de-DE', { timeZone: 'Asia/Tokyo' });
      const typed = new Float64Array([1234.5, 0.25])[tls]('de-DE');
      Number.prototype[tls] = function (...args) { return 'mine:' + saved.apply(this, args); };
      const overridden = [(1234.5)[tls]('de-DE'), (5)[tls](), [1][tls]()];
      return {
        overridden,
        array,
        typed,
        callNull: outcome(() => String.prototype[compare].call(null, 'a')),
        apply: Reflect.apply(saved, 1234.5, ['de-DE', { style: 'percent' }]),
        wrongThis: outcome(() => saved.call('1')),
        date: Date.prototype[tls].call(new Date(0), 'de-DE', { timeZone: 'Europe/Berlin' }),
        bigint: BigInt.prototype[tls].call(12345n, 'de-DE'),
      };
    })()`);
    expect(got).toEqual({
      overridden: ['mine:1.234,5', 'mine:5', 'mine:1'],
      callNull: { error: 'TypeError', message: expect.any(String) },
      apply: (1234.5).toLocaleString('de-DE', { style: 'percent' }),
      wrongThis: { error: 'TypeError', message: expect.any(String) },
      date: '1.1.1970, 01:00:00',
      bigint: '12.345',
      array: [1234.5, new Date(0), null, 7n].toLocaleString('de-DE', { timeZone: 'Asia/Tokyo' } as Intl.NumberFormatOptions),
      typed: new Float64Array([1234.5, 0.25]).toLocaleString('de-DE'),
    });
  });

  it('keeps what a connector defined in place of Intl before the module loaded', async () => {
    expect(await value(`(() => { globalThis['In' + 'tl'] = { mine: true }; return [globalThis['In' + 'tl'], (1.5)['toLocale' + 'String']('de-DE'), globalThis['In' + 'tl']]; })()`)).toEqual([
      { mine: true },
      '1,5',
      { mine: true },
    ]);
  });

  it('RelativeTimeFormat, ListFormat, DisplayNames, Segmenter, Locale and PluralRules give Node’s results', async () => {
    const probe = `(() => {
      const words = [...new Intl.Segmenter('en', { granularity: 'word' }).segment('Hello, wörld! 👋🏽 ok')].map((s) => [s.segment, s.index, s.isWordLike]);
      const graphemes = [...new Intl.Segmenter().segment('e\\u0301👨‍👩‍👧')].map((s) => s.segment);
      const containing = new Intl.Segmenter('en', { granularity: 'sentence' }).segment('One. Two? Three!').containing(6);
      const locale = new Intl.Locale('en-Latn-US', { calendar: 'gregory', hourCycle: 'h23', numeric: true });
      return [new Intl.RelativeTimeFormat('de', { numeric: 'auto' }).format(-1, 'day'), new Intl.RelativeTimeFormat('en').formatToParts(3.5, 'hours'),
        new Intl.ListFormat('en', { type: 'disjunction' }).format(['a', 'b', 'c']), new Intl.ListFormat('de').formatToParts(['x', 'y']),
        new Intl.DisplayNames('de', { type: 'region' }).of('US'), new Intl.DisplayNames('en', { type: 'currency' }).of('JPY'), new Intl.DisplayNames('en', { type: 'language' }).of('zh-Hant'),
        words, graphemes, containing, String(locale), locale.baseName, locale.hourCycle, locale.numeric, String(locale.maximize()), String(new Intl.Locale('zh-Hant-TW').minimize()),
        new Intl.PluralRules('en', { type: 'ordinal' }).select(22), new Intl.PluralRules('ar').select(3), new Intl.PluralRules('en').selectRange(1, 2),
        Intl.getCanonicalLocales(['EN-us', 'zh-hant-tw']), Intl.supportedValuesOf('currency').length, Intl.DateTimeFormat.supportedLocalesOf(['de-DE', 'xx'])];
    })()`;
    expect(await value(probe)).toEqual(JSON.parse(JSON.stringify(new Function(`return ${probe}`)())));
  });

  it('gives a RangeError for the parts of date formats that would abort Node, and their plain format still works', async () => {
    // Node 20 dies with a fatal error on these (CLDR data with a date field V8 has no part type for).
    const got = await value(`(() => {
      ${OUTCOME}
      const gd = new Intl.DateTimeFormat('gd', { year: 'numeric', month: 'short', timeZone: 'UTC' });
      const my = new Intl.DateTimeFormat('my-MM', { calendar: 'hebrew', timeZone: 'UTC' });
      const en = new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', timeZone: 'UTC' });
      return [gd.format(0), outcome(() => gd.formatToParts(0)), outcome(() => my.formatRangeToParts(0, 9e11)), my.formatRange(0, 9e11), en.formatToParts(0).length, outcome(() => en.formatRangeToParts(0, 4e10)).ok.length];
    })()`);
    expect(got).toEqual([
      new Intl.DateTimeFormat('gd', { year: 'numeric', month: 'short', timeZone: 'UTC' }).format(0),
      { error: 'RangeError', message: expect.stringMatching(/parts of this date format \(gd, gregory calendar\) cannot be made/) },
      { error: 'RangeError', message: expect.stringMatching(/my-MM, hebrew calendar/) },
      new Intl.DateTimeFormat('my-MM', { calendar: 'hebrew', timeZone: 'UTC' }).formatRange(0, 9e11),
      new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', timeZone: 'UTC' }).formatToParts(0).length,
      new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', timeZone: 'UTC' }).formatRangeToParts(0, 4e10).length,
    ]);
  });
});

describe('Intl against hostile connectors', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());
  const { value } = connector(() => runtime, 'intl-hostile');

  it('prototype tampering of Intl and the locale methods affects only the run that did it', async () => {
    const code = `
      const tamper = Context.GetRequestEntity().RequestBody.tamper;
      if (tamper) {
        Object.defineProperty(Intl.DateTimeFormat.prototype, 'format', { get: () => () => 'tampered' });
        Intl.NumberFormat.prototype.formatToParts = () => [];
        Number.prototype.toLocaleString = () => 'tampered';
        String.prototype.localeCompare = () => 0;
        Intl.Collator = function () { return { compare: () => 0 }; };
        Object.prototype.timeZone = 'Asia/Tokyo';
      }
      Context.SetResponseEntity({ ResponseBody: [new Intl.DateTimeFormat('en', {}).format(0), (1.5).toLocaleString('de'), 'a'.localeCompare('b'), new Intl.NumberFormat('en').formatToParts(1).length,
        ['b', 'a'].sort(new Intl.Collator('en').compare)] });`;
    const entity = (tamper: boolean) => ({ entity: { RequestParams: '', RequestHeaders: '', RequestBody: { tamper }, ResponseBody: null } });
    const request = { cacheKey: 'bot/intl-tamper@1', code, timeoutMs: 5000, allowedHosts: [] };
    const tampered = await runtime.run({ ...request, ...entity(true) });
    expect(tampered).toMatchObject({ kind: 'ok', responseBody: ['tampered', 'tampered', 0, 0, ['b', 'a']] });
    const clean = await runtime.run({ ...request, ...entity(false) });
    expect(clean).toMatchObject({ kind: 'ok', responseBody: ['1/1/1970', '1,5', -1, 1, ['a', 'b']] });
    // Options inherited from Object.prototype count, as the standard reads them with Get (Node does the same).
    expect(await value(`(() => { Object.prototype.timeZone = 'Asia/Tokyo'; const s = new Intl.DateTimeFormat('en', { hour: 'numeric' }).format(0); delete Object.prototype.timeZone; return s; })()`)).toBe('9 AM');
  });

  it('keeps what one run learnt (collation labels) to that run: other runs and integrations sort right', async () => {
    const sortIn = (cacheKey: string, words: string[], options: string) =>
      runtime.run({
        cacheKey,
        code: `const words = Context.GetRequestEntity().RequestBody;
          Context.SetResponseEntity({ ResponseBody: [words.slice().sort((a, b) => a.localeCompare(b, 'de', ${options})), words.map((w, i) => w.localeCompare(words[(i + 1) % words.length], 'de', ${options}))] });`,
        entity: { RequestParams: '', RequestHeaders: '', RequestBody: words, ResponseBody: null },
        timeoutMs: 5000,
        allowedHosts: [],
      });
    const first = ['b', 'ä', 'a', 'A', 'z', 'ae'];
    const second = ['ab', 'Ä', 'aa', 'b', 'B', 'á'];
    const node = (words: string[], options: Intl.CollatorOptions) => [words.slice().sort((a, b) => a.localeCompare(b, 'de', options)), words.map((w, i) => w.localeCompare(words[(i + 1) % words.length], 'de', options))];
    for (const [key, words, options, text] of [
      ['bot/labels-a@1', first, {}, '{}'],
      ['bot/labels-a@1', second, {}, '{}'],
      ['bot/labels-b@1', first, { sensitivity: 'base' }, "{ sensitivity: 'base' }"],
      ['bot/labels-c@1', second, { caseFirst: 'upper' }, "{ caseFirst: 'upper' }"],
    ] as const) {
      expect(await sortIn(key, [...words], text)).toMatchObject({ kind: 'ok', responseBody: node([...words], options) });
    }
  });

  it('refuses huge option strings and texts with Node’s errors or a clear limit, and the thread goes on', async () => {
    const got = await value(`(() => {
      ${OUTCOME}
      const huge = 'x'.repeat(1 << 20);
      return [outcome(() => new Intl.DateTimeFormat('en', { timeZone: huge })).error, outcome(() => new Intl.NumberFormat(huge)).error, outcome(() => new Intl.NumberFormat('en', { style: 'currency', currency: huge })).error,
        outcome(() => Intl.getCanonicalLocales(Array(20000).fill('en-US'))).ok, outcome(() => 'i'.repeat(${MAX_INTL_TEXT} + 1).toLocaleUpperCase('tr')),
        'i'.repeat(100000).toLocaleUpperCase('tr').length, new Intl.NumberFormat('en').format('9'.repeat(100000)).length];
    })()`);
    expect(got).toEqual([
      'RangeError',
      'RangeError',
      'RangeError',
      ['en-US'],
      { error: 'RangeError', message: expect.stringMatching(/at most 4,194,304 characters/) },
      100000,
      new Intl.NumberFormat('en').format('9'.repeat(100000) as unknown as number).length,
    ]);
  });

  it('stays correct when thousands of distinct formatters flood the cache', async () => {
    const probe = `(() => {
      const out = [];
      for (let digits = 0; digits < 20; digits++) for (const currency of ['EUR', 'USD', 'JPY', 'CHF', 'GBP']) for (const locale of ['de-DE', 'en-US', 'fr-FR', 'ja-JP', 'ar-EG', 'hi-IN'])
        for (const display of ['symbol', 'code', 'name', 'narrowSymbol']) out.push(new Intl.NumberFormat(locale, { style: 'currency', currency, currencyDisplay: display, minimumFractionDigits: digits }).format(1234.5));
      return out;
    })()`;
    const got = (await value(probe)) as string[];
    expect(got).toHaveLength(2400);
    expect(got).toEqual(new Function(`return ${probe}`)());
  });

  it(`checks at most ${MAX_DATE_PARTS_CHECKS} new date formats for their parts in one run (each check takes a process)`, async () => {
    const locales = ['en-US', 'en-GB', 'de-DE', 'fr-FR', 'es-ES', 'it-IT', 'pt-BR', 'nl-NL', 'sv-SE', 'da-DK', 'fi-FI', 'pl-PL', 'cs-CZ', 'tr-TR', 'ru-RU', 'uk-UA', 'el-GR', 'he-IL',
      'ar-EG', 'hi-IN', 'th-TH', 'ja-JP', 'ko-KR', 'zh-CN', 'zh-TW', 'vi-VN', 'id-ID', 'hu-HU', 'ro-RO', 'bg-BG', 'hr-HR', 'sk-SK', 'sl-SI', 'lt-LT', 'lv-LV', 'et-EE'];
    expect(locales.length).toBeGreaterThan(MAX_DATE_PARTS_CHECKS + 1);
    const got = await value(`${JSON.stringify(locales)}.map((locale) => {
      try { return new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'long', weekday: 'short', timeZoneName: 'short' }).formatToParts(0).length > 0; } catch (e) { return e.message; }
    })`);
    expect(got).toEqual(locales.map((_, i) => (i < MAX_DATE_PARTS_CHECKS ? true : expect.stringMatching(/more new date formats than Intl checks in one run/))));
  }, 60_000);
});

describe('Intl on a worker thread', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(() => runtime.close());
  const { value } = connector(() => runtime, 'intl-worker');

  it('formats, sorts, checks date parts and reaches the locale methods there as in process', async () => {
    const got = await value(`(() => {
      const words = Array.from({ length: 2000 }, (_, i) => ['Ärger', 'arbeit', 'Zebra', 'zürich'][i % 4] + (i * 7919) % 10007);
      const sorted = words.slice().sort((a, b) => a.localeCompare(b, 'de'));
      return [new Date(0).toLocaleString('de-DE', { timeZone: 'Europe/Berlin' }), (1234.5)['toLocale' + 'String']('de-DE'), sorted.slice(0, 3), sorted.length,
        new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kolkata', hour: 'numeric', minute: 'numeric' }).formatToParts(0).map((p) => p.value).join('|'),
        (() => { try { return new Intl.DateTimeFormat('gd', { year: 'numeric', month: 'short' }).formatToParts(0); } catch (e) { return e.constructor.name; } })()];
    })()`);
    const words = Array.from({ length: 2000 }, (_, i) => `${['Ärger', 'arbeit', 'Zebra', 'zürich'][i % 4]}${(i * 7919) % 10007}`);
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kolkata', hour: 'numeric', minute: 'numeric' }).formatToParts(0);
    expect(got).toEqual(['1.1.1970, 01:00:00', '1.234,5', words.sort((a, b) => a.localeCompare(b, 'de')).slice(0, 3), 2000, parts.map((p) => p.value).join('|'), 'RangeError']);
  });
});
