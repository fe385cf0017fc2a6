import { payloadTooLarge } from './errors';
import type { LogLine, Outcome } from './invocation';
import { outcomeJson, UnrecordableOutcome } from './outcome';

/**
 * How much of one invocation a store keeps. MongoDB holds an invocation in one document, and a
 * document may not pass 16 MiB (the server's limit); the caller's request (the entity) and the run's
 * result (outcome and logs) share it. The result's budget holds the most a run may produce (a
 * ResponseBody of 10 MiB, 1 MiB of log in at most 10,000 lines), the entity gets 4 MiB, and 64 KiB stay
 * for the other fields. Every store keeps the same budgets, so a call is accepted or refused alike
 * whichever store a deployment runs on.
 */
export const MAX_STORED_ENTITY_BYTES = 4 * 1024 * 1024;
export const MAX_RECORDED_RESULT_BYTES = 12 * 1024 * 1024 - 64 * 1024;
/** What a log line takes beside its text (its time, level and field names), counted against the result's budget. */
export const LOG_LINE_OVERHEAD_BYTES = 64;

/**
 * A payload-too-large error (413) when the entity's JSON and the raw body kept beside it
 * (`Context.GetRawRequestBody`) are over the request's budget together. A body within MAX_BODY_SIZE
 * can still be: it is kept twice (in the entity, and as sent), text is stored as a JSON string whose
 * escapes take more room than the bytes they stand for, and the query, headers and file list come with it.
 */
export function assertEntityFits(entityJson: string, rawBody: string | null): void {
  const bytes = Buffer.byteLength(entityJson) + (rawBody ? Buffer.byteLength(rawBody) : 0);
  if (bytes > MAX_STORED_ENTITY_BYTES) {
    throw payloadTooLarge(
      `The request as stored (its query, headers and body as JSON, and the body as sent) takes ${bytes} bytes; an invocation keeps at most ${MAX_STORED_ENTITY_BYTES}. Send large data as files (GenericIntegrationFileTransfer).`,
    );
  }
}

/** The outcome as the stores keep it, JSON text; UnrecordableOutcome when it has none or it and the logs are over their budget. */
export function recordedOutcomeJson(outcome: Outcome, logs: readonly LogLine[]): string {
  const json = outcomeJson(outcome);
  let bytes = Buffer.byteLength(json);
  for (const line of logs) bytes += Buffer.byteLength(line.message) + LOG_LINE_OVERHEAD_BYTES;
  if (bytes > MAX_RECORDED_RESULT_BYTES) {
    throw new UnrecordableOutcome(new Error(`with its logs it takes ${bytes} bytes; an invocation keeps at most ${MAX_RECORDED_RESULT_BYTES}`));
  }
  return json;
}
