import type { InvocationDetail, StepView } from './control-api';
import { formatBytes, formatDuration, formatTime, table } from './format';

/** What a Waiting invocation waits for and until when: `event "approved" until 2026-01-02 03:04:05Z`. */
export function waitText(waiting: NonNullable<InvocationDetail['waiting']>): string {
  const what = waiting.for === 'retry' ? `the next attempt of step "${waiting.name}"` : `${waiting.for} "${waiting.name}"`;
  return `${what} until ${formatTime(waiting.until)}`;
}

/** Why a step is where it is: its error, and when a wait or the next attempt is due. */
function stepDetail(step: StepView): string {
  const error = step.error ? `${step.error.name}: ${step.error.message}` : '';
  if (step.status === 'retrying') return `next attempt ${formatTime(step.until)}${error ? `; ${error}` : ''}`;
  if (step.status === 'waiting') return `until ${formatTime(step.until)}`;
  return error;
}

/**
 * A durable run's steps as a table, in the order given (newest first from the service). A name and an
 * error are the connector's text: the table shows any control character in them as inert text.
 */
export function stepTable(steps: StepView[]): string {
  const rows = steps.map((step) => [
    `${step.name}#${step.occurrence}`,
    step.kind,
    step.status,
    step.kind === 'step' ? String(step.attempts) : '-',
    formatDuration(step.durationMs),
    step.status === 'done' ? formatBytes(step.resultBytes) : '-',
    stepDetail(step),
  ]);
  return table(['STEP', 'KIND', 'STATUS', 'ATTEMPTS', 'DURATION', 'RESULT', 'DETAIL'], rows);
}
