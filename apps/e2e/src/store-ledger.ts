import { join } from 'node:path';
import Database from 'better-sqlite3';

/** One invocation as a deployment's SQLite store recorded it; `outcome` is what its completion wrote. */
export interface RecordedInvocation {
  id: string;
  status: string;
  attempt: number;
  /** Epoch ms; null while unfinished. */
  finishedAt: number | null;
  outcome: { status?: string; responseBody?: unknown } | null;
}

/**
 * Every invocation in the store a distributed deployment shares (`<dataDir>/store.db`), read beside its
 * running services: what a ledger check counts, rather than log lines that depend on a log level and are
 * lost with a killed process's unflushed output.
 */
export function recordedInvocations(dataDir: string): RecordedInvocation[] {
  const db = new Database(join(dataDir, 'store.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, status, attempt, finished_at AS finishedAt, outcome FROM invocations').all() as Array<Omit<RecordedInvocation, 'outcome'> & { outcome: string | null }>;
    return rows.map((row) => ({ ...row, outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as RecordedInvocation['outcome']) }));
  } finally {
    db.close();
  }
}

/** How many invocations the store holds as Completed with their outcome recorded. */
export function completedCount(dataDir: string): number {
  return recordedInvocations(dataDir).filter((row) => row.status === 'Completed' && row.outcome?.status === 'Completed').length;
}
