import type { JournalEntry, StepError, StepKind, StepStatus, StepSummary } from '@gi/domain';

/** One row of `invocation_journal`, as SQLite returns it (the key columns aside). */
export interface JournalRow {
  name: string;
  occurrence: number;
  kind: string;
  status: string;
  /** The result as JSON text (`done`); null otherwise, and never read by listings. */
  result?: string | null;
  result_bytes: number;
  /** JSON of the StepError; null for none. */
  error: string | null;
  attempts: number;
  started_at: number;
  finished_at: number | null;
  until: number | null;
}

/** An entry's columns without its result: what listings read. */
export const SUMMARY_COLUMNS = 'name, occurrence, kind, status, result_bytes, error, attempts, started_at, finished_at, until';
/** An entry whole. */
export const ENTRY_COLUMNS = `${SUMMARY_COLUMNS}, result`;

const errorOf = (row: JournalRow): StepError | null => (row.error === null ? null : (JSON.parse(row.error) as StepError));

export function toEntry(row: JournalRow): JournalEntry {
  return {
    name: row.name,
    occurrence: row.occurrence,
    kind: row.kind as StepKind,
    status: row.status as StepStatus,
    resultJson: row.result ?? null,
    error: errorOf(row),
    attempts: row.attempts,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    until: row.until,
  };
}

export function toStepSummary(row: JournalRow): StepSummary {
  return {
    name: row.name,
    occurrence: row.occurrence,
    kind: row.kind as StepKind,
    status: row.status as StepStatus,
    resultBytes: row.result_bytes,
    error: errorOf(row),
    attempts: row.attempts,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    until: row.until,
  };
}

/** The named parameters of an entry's row (insert or update). */
export function entryParams(id: string, botId: string, entry: JournalEntry, resultBytes: number) {
  return {
    id,
    botId,
    name: entry.name,
    occurrence: entry.occurrence,
    kind: entry.kind,
    status: entry.status,
    result: entry.resultJson,
    resultBytes,
    error: entry.error === null ? null : JSON.stringify(entry.error),
    attempts: entry.attempts,
    startedAt: entry.startedAt,
    finishedAt: entry.finishedAt,
    until: entry.until,
  };
}
