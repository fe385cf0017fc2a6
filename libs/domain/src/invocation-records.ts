import { outcomeError, STATE_FIELDS, SUMMARY_FIELDS, TIMING_FIELDS } from './invocation';
import type { CallbackDelivery, ClaimedInvocation, Invocation, InvocationSummary, InvocationTiming, LogLine, NewInvocation, StoredInvocationState, StoredLogLine } from './invocation';

/*
 * The records every store builds alike (SQLite, MongoDB and the in-memory one): each store maps its own
 * columns or fields to the domain's names, and these say what a record holds. A new field of a listing,
 * a state or a timing is one entry in its field list (invocation.ts), plus its column in each store.
 */

/** The callback of an invocation as created: pending, nothing attempted yet; null without a callback URL. */
export const pendingCallback = (url: string | null): CallbackDelivery | null =>
  url === null ? null : { url, state: 'pending', attempts: 0, nextAttemptAt: null, lastError: null, deliveredAt: null };

/** What a claim's conditional update changed besides the lease: the attempt it began, and where a durable run stands. */
export type ClaimFacts = Pick<Invocation, 'attempt' | 'steps' | 'activeMs' | 'progressAttempt'>;

/**
 * The invocation a claim took, from what its creation stored and the claim itself (every store). Only an
 * unfinished invocation can be claimed, so it has no outcome or finish time, the claim cleared its
 * progress, its callback is as created (attempts start once it finishes), and the lines of earlier
 * attempts are left out (see InvocationStore.claim). Running, it waits for nothing.
 */
export function claimedInvocation(created: NewInvocation, claim: ClaimFacts, lease: { owner: string; leaseUntil: number; now: number }): ClaimedInvocation {
  // Field by field: an object rest (`{ callbackUrl, ...stored }`) copies through a slow runtime path, once per run.
  return {
    id: created.id,
    botId: created.botId,
    tokenId: created.tokenId,
    entityName: created.entityName,
    integrationId: created.integrationId,
    integrationVersion: created.integrationVersion,
    pool: created.pool,
    mode: created.mode,
    endpoint: created.endpoint,
    responseContentType: created.responseContentType,
    entityJson: created.entityJson,
    rawBody: created.rawBody,
    inbound: created.inbound ?? null,
    createdAt: created.createdAt,
    expireAt: created.expireAt,
    status: 'Running',
    attempt: claim.attempt,
    leaseOwner: lease.owner,
    leaseUntil: lease.leaseUntil,
    startedAt: lease.now,
    finishedAt: null,
    outcome: null,
    logs: [],
    progress: null,
    callback: pendingCallback(created.callbackUrl),
    waiting: null,
    steps: claim.steps,
    activeMs: claim.activeMs,
    progressAttempt: claim.progressAttempt,
  };
}

/**
 * Every line of an invocation in order, each marked with its attempt: the batches its attempts appended
 * while they ran (in attempt and sequence order), then the rest its last attempt recorded with its outcome.
 */
export function linesInOrder(batches: Iterable<{ attempt: number; lines: readonly LogLine[] }>, last: { attempt: number; lines: readonly LogLine[] }): StoredLogLine[] {
  const lines: StoredLogLine[] = [];
  for (const batch of batches) for (const line of batch.lines) lines.push({ ...line, attempt: batch.attempt });
  for (const line of last.lines) lines.push({ ...line, attempt: last.attempt });
  return lines;
}

/** The fields `fields` names, copied from `source`, in that order. */
function picked<F extends keyof Invocation>(source: Pick<Invocation, F>, fields: readonly F[]): Pick<Invocation, F> {
  const record = {} as Pick<Invocation, F>;
  for (const field of fields) record[field] = source[field];
  return record;
}

/** What a listing shows of an invocation: its SUMMARY_FIELDS and the error of its outcome. */
export const invocationSummary = (source: Pick<Invocation, (typeof SUMMARY_FIELDS)[number] | 'outcome'>): InvocationSummary => ({
  ...picked(source, SUMMARY_FIELDS),
  error: outcomeError(source.outcome),
});

/** Where an invocation stands (InvocationStore.getState): its STATE_FIELDS. */
export const invocationState = (source: StoredInvocationState): StoredInvocationState => picked(source, STATE_FIELDS);

/** When an invocation was created, started and finished (InvocationStore.timings): its TIMING_FIELDS. */
export const invocationTiming = (source: InvocationTiming): InvocationTiming => picked(source, TIMING_FIELDS);
