import { z } from 'zod';
import { ErrorCodes, INVOCATION_STATUSES, isTraceparent, isTracestate, isValidName } from '@gi/domain';
import type { InvocationRef, InvocationState, InvocationStatus } from '@gi/domain';

const name = z.string().refine(isValidName);
const invocationId = z.string().min(1).max(128);

/**
 * The W3C trace context of whoever published the message (tracing on). Malformed, it is dropped rather
 * than refusing the message: a job is never lost for the sake of a trace.
 */
const trace = z
  .object({ traceparent: z.string().refine(isTraceparent), tracestate: z.string().refine(isTracestate).optional() })
  .optional()
  .catch(undefined);

const invocationError = z.object({ code: z.enum(ErrorCodes), title: z.string(), detail: z.string() });

/**
 * What the executor recorded as it finished the invocation: with it, whoever waits answers without
 * reading the store again. Left out of an event when it would make the message large (see
 * encodeCompletion); a malformed one is dropped rather than refusing the event, whose waiters then read
 * the store as before.
 */
const finished = z
  .object({
    integrationId: z.string(),
    attempt: z.number().int().nonnegative(),
    startedAt: z.number().nullable(),
    finishedAt: z.number(),
    responseContentType: z.string(),
    outcome: z.discriminatedUnion('status', [
      z.object({ status: z.literal('Completed'), responseBody: z.unknown() }),
      z.object({ status: z.literal('Failed'), error: invocationError }),
      z.object({ status: z.literal('Cancelled'), error: invocationError }),
    ]),
  })
  .optional()
  .catch(undefined);

/**
 * Every message the processes send each other over the bus, by `kind`: its current version, what it is
 * called in errors, and the schema of its fields. Decoding and encoding read this table alone.
 */
export const BUS_MESSAGES = {
  /** "Look at this invocation": jobs carry ids, never data; the executor reloads from the store. */
  job: { version: 1, noun: 'job message', fields: z.object({ botId: name, invocationId, pool: name, trace }) },
  /** Published once an outcome is recorded; wakes sync callers and long polls. */
  completed: { version: 1, noun: 'completion event', fields: z.object({ botId: name, invocationId, status: z.enum(INVOCATION_STATUSES), finished }) },
  /** Published when an invocation is cancelled: the executor running it stops the run. */
  cancel: { version: 1, noun: 'cancel event', fields: z.object({ botId: name, invocationId }) },
} as const;

type Table = typeof BUS_MESSAGES;
export type BusMessageKind = keyof Table;

/** The messages of the bus: a union keyed on `kind`, each with its `version`. */
export type BusMessage = { [K in BusMessageKind]: { kind: K; version: Table[K]['version'] } & z.infer<Table[K]['fields']> }[BusMessageKind];
export type BusMessageOf<K extends BusMessageKind> = Extract<BusMessage, { kind: K }>;
export type JobMessage = BusMessageOf<'job'>;
export type CompletionEvent = BusMessageOf<'completed'>;
export type CancelEvent = BusMessageOf<'cancel'>;

/** The job of a stored invocation, for the executors of its pool. */
export const jobMessage = (ref: InvocationRef & { pool: string }): JobMessage => ({ kind: 'job', version: 1, botId: ref.botId, invocationId: ref.id, pool: ref.pool });

/** What a completion event may carry of the finished invocation: its state, less the id, bot and status the event names. */
export type FinishedFacts = NonNullable<CompletionEvent['finished']>;

/**
 * The news that an invocation finished (or was cancelled), with the status recorded and, from the
 * executor that recorded it, what it recorded.
 */
export const completionEvent = (ref: InvocationRef, status: InvocationStatus, finished?: FinishedFacts): CompletionEvent => ({
  kind: 'completed',
  version: 1,
  botId: ref.botId,
  invocationId: ref.id,
  status,
  ...(finished ? { finished } : {}),
});

/**
 * The finished state a completion event carries, as the store would answer it; null when it carries
 * none (the waiter reads the store). A finished invocation's progress, wait and steps are never part of
 * an answer, so none are announced.
 */
export function finishedStateOf(event: CompletionEvent): InvocationState | null {
  const { finished } = event;
  if (!finished || finished.outcome.status !== event.status) return null;
  return { id: event.invocationId, botId: event.botId, status: event.status, progress: null, waiting: null, steps: 0, ...finished, outcome: finished.outcome as InvocationState['outcome'] };
}

/** The request to stop an invocation's run, wherever it runs. */
export const cancelEvent = (ref: InvocationRef): CancelEvent => ({ kind: 'cancel', version: 1, botId: ref.botId, invocationId: ref.id });
