/** Plain-text output helpers: times, durations and aligned tables. */
import { terminalText } from './terminal-text';

/** An ISO string or epoch milliseconds, shown as "2026-01-02 03:04:05Z"; "-" when absent. */
export function formatTime(value: number | string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

export function toMillis(value: number | string | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? null : ms;
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  return `${minutes}m ${String(seconds).padStart(2, '0')}s`;
}

/** Columns padded to the widest cell; the last column is left ragged. A cell is one line, whatever it holds. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows].map((row) => row.map((cell) => terminalText(cell, { singleLine: true })));
  const widths = headers.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** "key  value" lines with the keys aligned; a value is one line, whatever it holds. */
export function fields(pairs: Array<[string, string]>): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${key.padEnd(width)}  ${terminalText(value, { singleLine: true })}`).join('\n');
}

export const json = (value: unknown) => JSON.stringify(value, null, 2);

/** "512 B", "1.5 KiB", "12 MiB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** A word for a command line the user may copy: as it is when the shell leaves it alone, else in single quotes. */
export const shellWord = (word: string) => (/^[\w.,:/@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
