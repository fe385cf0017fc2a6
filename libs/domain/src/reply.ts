import { toGiError } from './errors';
import { durationMs } from './invocation';
import type { Invocation } from './invocation';
import type { WaitReason } from './journal';
import type { StepSummary } from './ports/journal-store';
import { renderResponseBody } from './render';
import type { RenderedBody } from './render';

/**
 * The reply for a finished invocation, the same for the sync call and for every poll: the rendered
 * ResponseBody, or the recorded error or cancellation (thrown as a GiError carrying the invocationId).
 */
export function finalReply(invocation: Pick<Invocation, 'id' | 'outcome' | 'responseContentType'>, mediaType = invocation.responseContentType): RenderedBody {
  const { outcome } = invocation;
  if (!outcome) throw new Error(`invocation ${invocation.id} has no outcome yet`);
  if (outcome.status !== 'Completed') throw toGiError(outcome.error, invocation.id);
  return renderResponseBody(outcome.responseBody, mediaType);
}

/** A step as a poll shows it (StepSummary, with times as ISO text). */
export interface PendingStep {
  name: string;
  occurrence: number;
  kind: StepSummary['kind'];
  status: StepSummary['status'];
  attempts: number;
  startedAt: string;
  durationMs: number | null;
  resultBytes: number;
}

/** What a Waiting invocation waits for and until when, as polls, the control API and the console show it. */
export const waitView = (waiting: WaitReason) => ({ for: waiting.kind, name: waiting.name, until: new Date(waiting.until).toISOString() });

/** At most this many of the latest steps are shown in a poll's reply; the control API lists them all. */
export const POLL_STEPS = 20;

/**
 * The body of a 202 while an invocation is not finished: where it stands (Queued or Running; a durable
 * run suspended in a wait is Running to its caller, with `waiting` saying what it waits for and until
 * when), which attempt it is on, since when the running one started, the connector's last
 * `Context.SetProgress`, if any, and a durable run's step count with its latest steps (newest first).
 */
export function pendingReply(invocation: Pick<Invocation, 'id' | 'status' | 'attempt' | 'startedAt' | 'progress' | 'waiting' | 'steps'>, latestSteps: StepSummary[] = []) {
  const { waiting } = invocation;
  return {
    invocationId: invocation.id,
    status: invocation.status === 'Queued' ? ('Queued' as const) : ('Running' as const),
    message: 'The job is not yet complete.',
    attempt: invocation.attempt,
    // Only of the running attempt: a requeued invocation waits for its next one.
    startedAt: invocation.status === 'Running' && invocation.startedAt !== null ? new Date(invocation.startedAt).toISOString() : null,
    ...(invocation.progress ? { progress: invocation.progress } : {}),
    ...(waiting && invocation.status === 'Waiting' ? { waiting: waitView(waiting) } : {}),
    ...(invocation.steps > 0 ? { steps: invocation.steps, latestSteps: latestSteps.slice(0, POLL_STEPS).map(pendingStep) } : {}),
  };
}

const pendingStep = (step: StepSummary): PendingStep => ({
  name: step.name,
  occurrence: step.occurrence,
  kind: step.kind,
  status: step.status,
  attempts: step.attempts,
  startedAt: new Date(step.startedAt).toISOString(),
  durationMs: durationMs(step),
  resultBytes: step.resultBytes,
});
