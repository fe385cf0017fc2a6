import { defineGlobal } from '../internal/global';
import type { LocaleRecord } from './common';
import type { IntlKit } from './kit';

/** Intl.Locale. */
export function localeClasses(kit: IntlKit) {
  const { host, defineProperty, locales, readOptions, tagOf } = kit;
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

  return { Locale };
}
