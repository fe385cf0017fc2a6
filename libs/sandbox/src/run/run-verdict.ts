import type { ConnectorRunResult, RunLimits, WaitReason } from '@gi/domain';
import sjson from 'secure-json-parse';
import { locateInStack } from '../compile/connector-source';
import { formatBytes, formatMs } from '../sandbox-options';

/**
 * A run's result before logs and duration are attached. A ResponseBody leaves the sandbox as the JSON
 * text `{"body": ...}` (checked for size and depth), or null for the request entity's own; the host
 * parses it (see `decodeResult`), so no structured clone or recursion ever meets it on the way.
 */
export type Verdict =
  | { kind: 'ok'; responseJson: string | null }
  | { kind: 'raised'; title: string; message: string }
  | { kind: 'failed'; reason: 'threw' | 'timeout' | 'limit' | 'cancelled'; message: string }
  /** A durable run that stopped to wait; it resumes from its journal once woken. */
  | { kind: 'suspended'; wait: WaitReason };

type Failure = Extract<Verdict, { kind: 'failed' }>;
type RunFacts = Pick<ConnectorRunResult, 'logs' | 'durationMs'>;

/** A run's result as the sandbox gives it back: a verdict with the run's logs and duration. */
export type SandboxResult = Verdict & RunFacts;

export const withRunFacts = (verdict: Verdict, facts: RunFacts): SandboxResult => ({ ...verdict, ...facts });

/** A failure as a run's whole result (the pool's own failures: a worker lost, the runtime closed). */
export const failedResult = (verdict: Failure, facts: RunFacts): ConnectorRunResult => ({ ...verdict, ...facts });

/**
 * The result the caller gets, on the host: the ResponseBody parsed from its JSON text (JSON.parse
 * does not recurse, whatever the depth), keys like __proto__ dropped so a returned object cannot
 * pollute prototypes on the host; the request entity's own ResponseBody when the connector never
 * touched an entity.
 */
export function decodeResult(result: SandboxResult, requestEntity: () => unknown): ConnectorRunResult {
  if (result.kind !== 'ok') return result;
  const { responseJson } = result;
  const body = responseJson === null ? responseBodyOf(requestEntity()) : (sjson.parse(responseJson, undefined, SAFE_JSON) as { body?: unknown }).body;
  return { kind: 'ok', responseBody: body, logs: result.logs, durationMs: result.durationMs };
}

const SAFE_JSON = { protoAction: 'remove', constructorAction: 'remove' } as const;

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

/** A limit of the integration (`limits.<name>` in its settings) that the run went past. */
export const limitVerdict = (message: string): Failure => ({ kind: 'failed', reason: 'limit', message });

export const cpuVerdict = (cpuMs: number) =>
  limitVerdict(`The connector's code ran longer than its CPU time limit of ${formatMs(cpuMs)} (limits.cpuSeconds).`);

export const tooLargeVerdict = (limits: RunLimits) =>
  limitVerdict(`The ResponseBody is larger than the limit of ${formatBytes(limits.responseBodyBytes)} (limits.responseBodyKiB).`);

export const tooDeepVerdict = (maxDepth: number) =>
  limitVerdict(`The ResponseBody nests arrays and objects more than ${maxDepth} levels deep, more than can be recorded.`);

export const logLimitVerdict = (logBytes: number) =>
  limitVerdict(`The connector logged more than its log limit of ${formatBytes(logBytes)} (limits.logKiB); the run was stopped.`);

export const logLinesVerdict = (logLines: number) =>
  limitVerdict(`The connector wrote more than ${logLines.toLocaleString('en-US')} log lines, the most one run may write; the run was stopped.`);

export const pendingCallsVerdict = (pendingCalls: number) =>
  limitVerdict(
    `The connector started more than ${pendingCalls} HTTP requests, file reads and crypto operations at once (limits.pendingCalls); await some before starting more.`,
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
const responseBodyOf = (entity: unknown) =>
  entity !== null && typeof entity === 'object' ? (entity as { ResponseBody?: unknown }).ResponseBody : undefined;
