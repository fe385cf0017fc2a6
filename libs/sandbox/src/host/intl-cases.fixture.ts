/**
 * Test support: the same Intl calls made inside a connector and in Node itself, to compare results.
 * `EVALUATE` is JavaScript source run in both places; a case names the API, its arguments (numbers
 * that JSON cannot carry are encoded) and gets back, for each call, its result or the error's name.
 */
import type { ConnectorRunRequest } from '@gi/domain';
import type { QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { DatePartsGuard } from './date-parts-guard';

export type IntlCase = Record<string, unknown> & { api: string };
export type Outcome = { ok: unknown } | { error: string; message?: string };

const EVALUATE = `
  const value = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) ? ('bigint' in x ? BigInt(x.bigint) : 'number' in x ? Number(x.number) : x) : x;
  const attempt = (fn) => { try { return { ok: fn() }; } catch (e) { return { error: e && e.constructor ? e.constructor.name : String(e) }; } };
  const { locales, options } = c;
  const args = (c.args || []).map(value);
  switch (c.api) {
    case 'DateTimeFormat': {
      let f;
      const made = attempt(() => { f = new Intl.DateTimeFormat(locales, options); return true; });
      if (!f) return [made];
      const parts = (call) => attempt(() => { if (!partsSafe(f, options)) throw new RangeError('no parts'); return call(); });
      return [attempt(() => f.format(args[0])), attempt(() => f.formatRange(args[0], args[1])), attempt(() => f.resolvedOptions()),
        ...(c.parts ? [parts(() => f.formatToParts(args[0])), parts(() => f.formatRangeToParts(args[0], args[1]))] : [])];
    }
    case 'Date':
      return ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'].map((m) => attempt(() => new Date(args[0])[m](locales, options)));
    case 'NumberFormat': {
      let f;
      const made = attempt(() => { f = new Intl.NumberFormat(locales, options); return true; });
      if (!f) return [made];
      return [attempt(() => f.format(args[0])), attempt(() => f.formatToParts(args[0])), attempt(() => f.formatRange(args[0], args[1])),
        attempt(() => f.formatRangeToParts(args[0], args[1])), attempt(() => f.resolvedOptions())];
    }
    case 'toLocaleString':
      return args.map((x) => attempt(() => x.toLocaleString(locales, options)));
    case 'Collator': {
      let f;
      const made = attempt(() => { f = new Intl.Collator(locales, options); return true; });
      if (!f) return [made];
      return [attempt(() => args.slice().sort(f.compare)), attempt(() => args.slice().sort((a, b) => a.localeCompare(b, locales, options))),
        attempt(() => args.map((a, i) => f.compare(a, args[(i + 1) % args.length]))), attempt(() => f.resolvedOptions())];
    }
    case 'PluralRules': {
      let f;
      const made = attempt(() => { f = new Intl.PluralRules(locales, options); return true; });
      if (!f) return [made];
      return [attempt(() => f.select(args[0])), attempt(() => f.selectRange(args[0], args[1])), attempt(() => f.resolvedOptions())];
    }
    case 'RelativeTimeFormat': {
      let f;
      const made = attempt(() => { f = new Intl.RelativeTimeFormat(locales, options); return true; });
      if (!f) return [made];
      return [attempt(() => f.format(args[0], c.unit)), attempt(() => f.formatToParts(args[0], c.unit)), attempt(() => f.resolvedOptions())];
    }
    case 'ListFormat': {
      let f;
      const made = attempt(() => { f = new Intl.ListFormat(locales, options); return true; });
      if (!f) return [made];
      return [attempt(() => f.format(args)), attempt(() => f.formatToParts(args)), attempt(() => f.resolvedOptions())];
    }
    case 'DisplayNames': {
      let f;
      const made = attempt(() => { f = new Intl.DisplayNames(locales, options); return true; });
      if (!f) return [made];
      return [...args.map((code) => attempt(() => f.of(code))), attempt(() => f.resolvedOptions())];
    }
    case 'Segmenter': {
      let f;
      const made = attempt(() => { f = new Intl.Segmenter(locales, options); return true; });
      if (!f) return [made];
      return [attempt(() => [...f.segment(args[0])]), attempt(() => f.segment(args[0]).containing(args[1])), attempt(() => f.resolvedOptions())];
    }
    case 'Locale':
      return [attempt(() => { const l = new Intl.Locale(args[0], options); const max = l.maximize(); return [String(l), l.baseName, l.language, l.script, l.region, l.calendar, l.caseFirst, l.collation, l.hourCycle, l.numeric, l.numberingSystem, String(max), String(max.minimize())]; })];
    case 'canonical':
      return [attempt(() => Intl.getCanonicalLocales(locales))];
    case 'supportedLocalesOf':
      return ['DateTimeFormat', 'NumberFormat', 'Collator', 'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'DisplayNames', 'Segmenter'].map((k) => attempt(() => Intl[k].supportedLocalesOf(locales, options)));
    case 'case':
      return [attempt(() => args[0].toLocaleUpperCase(locales)), attempt(() => args[0].toLocaleLowerCase(locales))];
    case 'Array':
      return [attempt(() => args.toLocaleString(locales, options))];
  }
  throw new Error('unknown case ' + c.api);
`;

const inNode = new Function('c', 'partsSafe', EVALUATE) as (c: IntlCase, partsSafe: (format: Intl.DateTimeFormat, options: Record<string, unknown>) => boolean) => Outcome[];
const dateParts = new DatePartsGuard();

/**
 * What Node itself gives for each case. The parts of a date format that would abort Node are not
 * made: the connector gets a RangeError for them (see DatePartsGuard).
 */
export function nodeOutcomes(cases: IntlCase[]): Outcome[][] {
  const partsSafe = (format: Intl.DateTimeFormat, options: Record<string, unknown>) => dateParts.isSafe(format, options ?? {}, () => true) === true;
  return cases.map((c) => JSON.parse(JSON.stringify(inNode(c, partsSafe))) as Outcome[]);
}

let key = 0;
/** What a connector gives for each case (one run for all of them). */
export async function connectorOutcomes(runtime: QuickJsConnectorRuntime, cases: IntlCase[], extra: Partial<ConnectorRunRequest> = {}): Promise<Outcome[][]> {
  const code = `const partsSafe = () => true;
    const evaluate = (c) => { ${EVALUATE} };
    Context.SetResponseEntity({ ResponseBody: Context.GetRequestEntity().RequestBody.map(evaluate) });`;
  const result = await runtime.run({
    cacheKey: `bot/intl-cases@${++key}`,
    code,
    entity: { RequestParams: '', RequestHeaders: '', RequestBody: cases, ResponseBody: null },
    timeoutMs: 30_000,
    allowedHosts: [],
    limits: { cpuMs: 30_000 },
    ...extra,
  } as ConnectorRunRequest);
  if (result.kind !== 'ok') throw new Error(`the connector failed: ${JSON.stringify(result).slice(0, 2000)}`);
  return result.responseBody as Outcome[][];
}

/** A number JSON can carry as it is, else encoded (NaN, infinities, -0); a BigInt always encoded. */
export function encodeNumber(x: number | bigint): unknown {
  if (typeof x === 'bigint') return { bigint: String(x) };
  return Number.isFinite(x) && !Object.is(x, -0) ? x : { number: Object.is(x, -0) ? '-0' : String(x) };
}
