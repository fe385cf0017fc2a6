/** The preferences of RFC 7240 the webhook endpoints honour. */
export interface Preferences {
  /** `respond-async`: answer 202 with the invocationId rather than hold the call. */
  respondAsync: boolean;
  /** `wait=N`: hold the call at most N seconds. */
  waitSeconds?: number;
}

/** Larger `wait` values are read as this; the sync limit caps them anyway. */
const MAX_WAIT_SECONDS = 24 * 3600;

/**
 * Reads the Prefer header (several headers arrive joined by commas). Unknown preferences, parameters
 * and malformed values are ignored, as RFC 7240 asks; of a preference given twice the first counts.
 */
export function parsePrefer(header: string | undefined): Preferences {
  // Most calls send none.
  if (!header) return { respondAsync: false };
  const seen = new Map<string, string>();
  for (const preference of splitPreferences(header)) {
    const [nameValue] = preference.split(';');
    const eq = nameValue.indexOf('=');
    const name = (eq === -1 ? nameValue : nameValue.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? '' : nameValue.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    if (name && !seen.has(name)) seen.set(name, value);
  }
  const wait = seen.get('wait');
  return {
    respondAsync: seen.has('respond-async'),
    ...(wait !== undefined && /^\d{1,10}$/.test(wait) ? { waitSeconds: Math.min(Number(wait), MAX_WAIT_SECONDS) } : {}),
  };
}

/**
 * Splits on the commas outside quoted strings (a quoted value may hold a comma), in one pass: the header
 * is the caller's, so its cost must stay linear in its length whatever it holds. A quote left open runs
 * to the end.
 */
function splitPreferences(header: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      parts.push(header.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(header.slice(start));
  return parts;
}
