import type { Outcome } from './invocation';
import type { ConnectorRunResult } from './ports';
import type { InvocationError } from './errors';

/**
 * Turns a connector run into the recorded outcome. A RaiseError passes its title and message to the
 * caller (422); what a connector threw stays in its logs, the caller only learns that it failed (500).
 */
export function outcomeOf(result: ConnectorRunResult, timeoutMs: number): Outcome {
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
