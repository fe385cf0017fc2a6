import type { ConnectorRunResult } from '@gi/domain';
import { locateInStack } from './connector-source';
import { formatBytes, type SandboxLimits } from './sandbox-options';

/** A run's result before logs and duration are attached. */
export type Verdict =
  | { kind: 'ok'; responseBody: unknown }
  | { kind: 'raised'; title: string; message: string }
  | { kind: 'failed'; reason: 'threw' | 'timeout' | 'limit' | 'cancelled'; message: string };

export const withRunFacts = (verdict: Verdict, facts: Pick<ConnectorRunResult, 'logs' | 'durationMs'>) =>
  ({ ...verdict, ...facts }) as ConnectorRunResult;

export const timeoutVerdict = (timeoutMs: number): Verdict => ({
  kind: 'failed',
  reason: 'timeout',
  message: `The connector did not finish within its time limit of ${timeoutMs} ms.`,
});

export const cancelledVerdict: Extract<Verdict, { kind: 'failed' }> = { kind: 'failed', reason: 'cancelled', message: 'The run was stopped: its invocation was cancelled.' };

export const stalledVerdict: Verdict = {
  kind: 'failed',
  reason: 'timeout',
  message: 'The connector waits on a promise that can never settle (nothing is left that could resolve it), so it cannot finish.',
};

export const tooLargeVerdict = (limits: SandboxLimits): Verdict => ({
  kind: 'failed',
  reason: 'limit',
  message: `The ResponseBody is larger than the limit of ${formatBytes(limits.maxResponseBytes)}.`,
});

/** A thrown error as a run result: engine limits are told apart from the connector's own errors. */
export function failureVerdict(message: string, stack: string, limits: SandboxLimits): Verdict {
  if (/^InternalError: out of memory/.test(message)) {
    return { kind: 'failed', reason: 'limit', message: `The connector used more than its memory limit of ${formatBytes(limits.memoryLimitBytes)}.` };
  }
  if (/^\w*Error: stack overflow/.test(message)) {
    return { kind: 'failed', reason: 'limit', message: 'The connector nested calls too deeply (stack overflow).' };
  }
  const at = locateInStack(stack);
  return { kind: 'failed', reason: 'threw', message: at ? `${message} (line ${at.line}, column ${at.column})` : message };
}

/** The request entity's own ResponseBody, for a connector that never touched an entity. */
export const responseBodyOf = (entity: unknown) =>
  entity !== null && typeof entity === 'object' ? (entity as { ResponseBody?: unknown }).ResponseBody : undefined;
