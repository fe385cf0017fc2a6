// How times, durations and data are shown: short on screen, the exact value in the tooltip.

/** @param {number} n */
const pad = (n) => String(n).padStart(2, '0');

/**
 * `14:03:27` today, `2026-01-31 14:03` on another day; '—' for none.
 * @param {string | number | null | undefined} value an ISO time or epoch milliseconds
 */
export function formatTime(value) {
  if (value === null || value === undefined) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const now = new Date();
  const sameDay = date.toDateString() === now.toDateString();
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return sameDay ? `${clock}:${pad(date.getSeconds())}` : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${clock}`;
}

/** @param {number} ms */
export const formatClock = (ms) => {
  const date = new Date(ms);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}`;
};

/**
 * `850 ms`, `1.24 s`, `3 min 05 s`; '—' for none.
 * @param {number | null | undefined} ms
 */
export function formatDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${pad(Math.round((ms % 60_000) / 1000))} s`;
  return `${Math.floor(minutes / 60)} h ${pad(minutes % 60)} min`;
}

/** @param {number} bytes */
export function formatBytes(bytes) {
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

/**
 * Pretty JSON, or the text itself when the value is a string.
 * @param {unknown} value
 */
export function formatData(value) {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2);
}

/**
 * The pairs of a URL-query-format string (`a=1&b=2`), decoded, in order.
 * @param {string | null | undefined} text
 * @returns {[string, string][]}
 */
export function queryPairs(text) {
  if (!text) return [];
  return [...new URLSearchParams(text).entries()];
}

/**
 * When a token expires: its time, or `never` for a permanent one.
 * @param {string | null} expiresAt
 */
export function formatExpiry(expiresAt) {
  if (!expiresAt) return 'never';
  return formatTime(expiresAt);
}
