import { spawnSync } from 'node:child_process';
import { LruMap } from '@gi/domain';

/** Date formats a thread remembers the verdict of. */
const MAX_VERDICTS = 1024;
/** How long one check may take before the format is taken as unsafe. */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * What the check runs in a separate Node process: the formatter's parts for dates that exercise its
 * pattern and each interval pattern (a range whose largest difference is the era, the year, the
 * month, the day, the half of the day, the hour, the minute, the second, the millisecond).
 */
const CHECK_SCRIPT = `
const [locales, options] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const format = new Intl.DateTimeFormat(locales, options);
for (const base of [0, 1.5e11, 1.7e12, -3e12]) {
  format.formatToParts(base);
  for (const delta of [1, 1e3, 6e4, 3.6e6, 2.16e7, 4.32e7, 8.64e7, 3e9, 4e10, 4e11]) format.formatRangeToParts(base, base + delta);
}
format.formatRangeToParts(-8.64e15, 8.64e15);
`;

/**
 * Node (20 to 24) aborts its whole process, a fatal "unreachable code" no try/catch sees, when
 * `formatToParts` or `formatRangeToParts` of an `Intl.DateTimeFormat` meets a date field V8 has no
 * part type for. The CLDR data of a few locales has such fields: Scottish Gaelic for a year and a
 * short month, Burmese with the Hebrew calendar, Konkani with the Japanese calendar... So before a
 * date format's parts are made in this process, a separate Node process makes them for the same
 * format; only a format that process survives is used. The verdict depends on the locale and options
 * only (not the time zone: it changes no field), and is kept per thread.
 */
export class DatePartsGuard {
  private readonly verdicts = new LruMap<string, boolean>(MAX_VERDICTS);
  private readonly checked = new WeakMap<Intl.DateTimeFormat, boolean>();

  /**
   * Whether the parts of a formatter made with these options can be made in this process. The
   * first time, `mayCheck()` says whether a check may run now: 'not checked' when it may not,
   * 'check failed' when no process could be started (asked again next time).
   */
  isSafe(format: Intl.DateTimeFormat, options: Record<string, unknown>, mayCheck: () => boolean): boolean | 'not checked' | 'check failed' {
    const known = this.checked.get(format);
    if (known !== undefined) return known;
    const { timeZone: _zone, localeMatcher: _matcher, ...fields } = options;
    const locale = format.resolvedOptions().locale;
    const key = JSON.stringify([locale, fields]);
    let verdict = this.verdicts.get(key);
    if (verdict === undefined) {
      if (!mayCheck()) return 'not checked';
      const checked = check(locale, fields);
      if (checked === null) return 'check failed';
      verdict = checked;
      this.verdicts.set(key, verdict);
    }
    this.checked.set(format, verdict);
    return verdict;
  }
}

/** True when a separate process made the parts, false when it died, null when the check could not run. */
function check(locale: string, options: Record<string, unknown>): boolean | null {
  const result = spawnSync(process.execPath, ['-e', CHECK_SCRIPT], {
    input: JSON.stringify([[locale], { ...options, timeZone: 'UTC' }]),
    stdio: ['pipe', 'ignore', 'ignore'],
    timeout: CHECK_TIMEOUT_MS,
    windowsHide: true,
  });
  if (result.error) return null;
  return result.status === 0;
}
