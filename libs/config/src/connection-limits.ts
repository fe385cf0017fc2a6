import { readFileSync } from 'node:fs';

/** The limit on open files taken where it cannot be read (no /proc: not Linux): a common soft limit. */
export const ASSUMED_OPEN_FILES = 1024;

/**
 * This process's limit on open files: its soft RLIMIT_NOFILE (which Node raises to the hard limit at
 * start), from /proc/self/limits; null where that cannot be read.
 */
export function openFileLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | null {
  let limits: string;
  try {
    limits = read();
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits)?.[1];
  if (soft === undefined) return null;
  return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
}

/**
 * Connections a process holds at once by default: half its limit on open files (ASSUMED_OPEN_FILES
 * when unknown), at most 500,000. The other half stays for what else it opens: connectors' and
 * callbacks' outbound HTTP, uploads being written, the store, the broker. Past the limit Node cannot
 * accept a connection at all, not even to refuse it.
 */
export function defaultMaxConnections(openFiles: number | null): number {
  return Math.max(16, Math.floor(Math.min(openFiles ?? ASSUMED_OPEN_FILES, 1_000_000) / 2));
}

/** Calls one bot may hold waiting in a process by default (sync waits, long polls): a quarter of its connections. */
export function defaultBotMaxWaits(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections / 4));
}
