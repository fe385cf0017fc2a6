/**
 * One dependency a process's readiness covers: `ok` while the process can count on it, else what is
 * wrong in a few words (`unreachable`, `refusing writes`, ...). Never an error's text: /readyz is public.
 */
export type ReadinessCheck = () => Promise<string>;

/** What /readyz answers: ready when every check says `ok`, and each check's verdict by name. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

/** The verdict of a check that threw: it could not tell, so the process is not ready. */
const CHECK_FAILED = 'check failed';

/** Readiness from named checks, run together at each ask; a process whose readiness covers nothing is always ready. */
export function readinessOf(checks: Record<string, ReadinessCheck>): () => Promise<Readiness> {
  const entries = Object.entries(checks);
  return async () => {
    const verdicts = await Promise.all(entries.map(async ([name, check]) => [name, await check().catch(() => CHECK_FAILED)] as const));
    return { ready: verdicts.every(([, verdict]) => verdict === 'ok'), checks: Object.fromEntries(verdicts) };
  };
}
