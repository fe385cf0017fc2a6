import type { ConnectorRunResult, RunLimits } from '@gi/domain';
import { locateInStack } from './connector-source';
import { formatBytes, formatMs } from './sandbox-options';

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

type Failure = Extract<Verdict, { kind: 'failed' }>;

/** A limit of the integration (`limits.<name>` in its settings) that the run went past. */
const limitVerdict = (message: string): Failure => ({ kind: 'failed', reason: 'limit', message });

export const cpuVerdict = (cpuMs: number) =>
  limitVerdict(`The connector's code ran longer than its CPU time limit of ${formatMs(cpuMs)} (limits.cpuSeconds).`);

export const tooLargeVerdict = (limits: RunLimits) =>
  limitVerdict(`The ResponseBody is larger than the limit of ${formatBytes(limits.responseBodyBytes)} (limits.responseBodyKiB).`);

export const logLimitVerdict = (logBytes: number) =>
  limitVerdict(`The connector logged more than its log limit of ${formatBytes(logBytes)} (limits.logKiB); the run was stopped.`);

export const pendingCallsVerdict = (pendingCalls: number) =>
  limitVerdict(
    `The connector started more than ${pendingCalls} HTTP requests and file reads at once (limits.pendingCalls); await some before starting more.`,
  );

export const memoryVerdict = (limits: RunLimits) =>
  limitVerdict(`The connector used more than its memory limit of ${formatBytes(limits.memoryBytes)} (limits.memoryMiB).`);

/** A thrown error as a run result: engine limits are told apart from the connector's own errors. */
export function failureVerdict(message: string, stack: string, limits: RunLimits): Verdict {
  if (/^InternalError: out of memory/.test(message)) return memoryVerdict(limits);
  if (/^\w*Error: stack overflow/.test(message)) return limitVerdict('The connector nested calls too deeply (stack overflow).');
  const at = locateInStack(stack);
  return { kind: 'failed', reason: 'threw', message: at ? `${message} (line ${at.line}, column ${at.column})` : message };
}

/** The request entity's own ResponseBody, for a connector that never touched an entity. */
export const responseBodyOf = (entity: unknown) =>
  entity !== null && typeof entity === 'object' ? (entity as { ResponseBody?: unknown }).ResponseBody : undefined;
