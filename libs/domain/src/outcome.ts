import type { Outcome } from './invocation';
import type { ConnectorRunResult } from './ports';
import type { InvocationError } from './errors';

/** A run that ended, rather than suspended to wait. */
export type EndedRunResult = Exclude<ConnectorRunResult, { kind: 'suspended' }>;

/**
 * Turns a connector run into the recorded outcome. A RaiseError passes its title and message to the
 * caller (422); what a connector threw stays in its logs, the caller only learns that it failed (500).
 */
export function outcomeOf(result: EndedRunResult, timeoutMs: number): Outcome {
  switch (result.kind) {
    case 'ok':
      return { status: 'Completed', responseBody: result.responseBody };
    case 'raised':
      return { status: 'Failed', error: { code: 'connector_error', title: result.title, detail: result.message } };
    case 'failed':
      if (result.reason === 'timeout') {
        return {
          status: 'Failed',
          error: { code: 'timeout', title: 'Connector timed out', detail: `The connector did not finish within ${Math.round(timeoutMs / 1000)} s.` },
        };
      }
      if (result.reason === 'cancelled') return { status: 'Cancelled', error: cancelledError('The run was stopped because the invocation was cancelled.') };
      if (result.reason === 'limit') {
        return { status: 'Failed', error: { code: 'connector_failed', title: 'Connector stopped', detail: result.message } };
      }
      return {
        status: 'Failed',
        error: { code: 'connector_failed', title: 'Connector failed', detail: 'The connector threw an error; its logs hold the details.' },
      };
  }
}

/** What a cancelled invocation answers to its poll and to a sync caller still waiting (410). */
export const cancelledError = (detail: string): InvocationError => ({ code: 'cancelled', title: 'Invocation cancelled', detail });

/** An outcome whose data cannot be written to the store: it nests too deeply to serialise, is not JSON data, or is too large. */
export class UnrecordableOutcome extends Error {
  constructor(cause: unknown) {
    super(`The outcome cannot be serialised: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'UnrecordableOutcome';
  }
}

/** An outcome as the stores keep it, as JSON text; UnrecordableOutcome when its data has none. */
export function outcomeJson(outcome: Outcome): string {
  try {
    return JSON.stringify(outcome);
  } catch (error) {
    throw new UnrecordableOutcome(error);
  }
}

/**
 * What is recorded instead of an outcome the store cannot hold (a runtime let a result through that
 * nests too deeply to serialise, or that is larger than an invocation keeps): the run failed, and says why.
 */
export const unrecordableOutcome: Outcome = {
  status: 'Failed',
  error: {
    code: 'connector_failed',
    title: 'Connector stopped',
    detail: "The connector's result could not be recorded: it nests too deeply, is not JSON data, or is larger than an invocation keeps.",
  },
};
