import type { GlobalsModule } from './host-module';
import { SandboxError } from './host-module';
import { CollationRanks } from './collation-ranks';
import { hostText as text, IntlFormatters, parseTags, textResult, wellFormed, withSandboxDefault } from './intl-formatters';

/**
 * `Intl` and the locale-sensitive methods of the built-ins: formatting, collation, plural rules and
 * segmentation by Node's own ICU, so a connector gets exactly Node's results. Formatters are kept per
 * configuration in a bounded cache of the thread (they hold locales and options, no run data).
 */
const formatters = new IntlFormatters();
/** Date formats one run may have checked before their parts are made (each check takes a Node process: see DatePartsGuard). */
export const MAX_DATE_PARTS_CHECKS = 32;

export const intlModule: GlobalsModule = {
  name: 'intl',
  globals: ['Intl'],
  methods: [
    ['Date.prototype', 'toLocaleString'],
    ['Date.prototype', 'toLocaleDateString'],
    ['Date.prototype', 'toLocaleTimeString'],
    ['Number.prototype', 'toLocaleString'],
    ['BigInt.prototype', 'toLocaleString'],
    ['String.prototype', 'localeCompare'],
    ['String.prototype', 'toLocaleUpperCase'],
    ['String.prototype', 'toLocaleLowerCase'],
    ['Array.prototype', 'toLocaleString'],
    ['Int8Array.__proto__.prototype', 'toLocaleString'],
  ],
  functions: {
    create(_run, kind, config, partial) {
      withNodeErrors(() => formatters.create(text(kind), text(config), partial === true));
    },
    call(run, method, kind, config, a, b, bigints) {
      const mayCheckDateParts = () => run.local('intl.datePartsChecks', () => ({ count: 0 })).count++ < MAX_DATE_PARTS_CHECKS;
      return withNodeErrors(() => formatters.call(text(method), text(kind), text(config), a, b, typeof bigints === 'number' ? bigints : 0, mayCheckDateParts));
    },
    rank(run, config, x, y) {
      const settings = text(config);
      const ranks = run.local('intl.ranks', () => new CollationRanks());
      return withNodeErrors(() => ranks.rank(settings, () => formatters.collator(settings), text(x), text(y)));
    },
    canonicalLocales: (_run, tags) => withNodeErrors(() => Intl.getCanonicalLocales(parseTags(text(tags)))),
    supportedValuesOf: (_run, key) => withNodeErrors(() => Intl.supportedValuesOf(text(key) as Parameters<typeof Intl.supportedValuesOf>[0])),
    changeCase(_run, value, tags, upper) {
      const input = text(value);
      const locales = withSandboxDefault(parseTags(text(tags)), true);
      return withNodeErrors(() => textResult(upper === true ? input.toLocaleUpperCase(locales) : input.toLocaleLowerCase(locales)));
    },
    locale: (_run, tag, options) => withNodeErrors(() => formatters.locale(text(tag), text(options))),
  },
};

/** Node's RangeError and TypeError reach the connector as they are. */
function withNodeErrors<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof SandboxError) throw error;
    // Node's messages may quote a connector's text: well-formed, they cross into the sandbox intact.
    const message = error instanceof Error ? wellFormed(error.message).toWellFormed() : 'Intl failed.';
    throw new SandboxError(error instanceof RangeError ? 'RangeError' : 'TypeError', message);
  }
}
