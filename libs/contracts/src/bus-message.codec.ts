import { INVOCATION_STATUSES, isValidName } from '@gi/domain';
import type { CancelEvent, CompletionEvent, InvocationStatus, JobMessage } from '@gi/domain';

/**
 * Bus messages on the wire: JSON of exactly the fields of the typed message. Anything read from the
 * broker is checked before use, since other processes (or other versions of this one) wrote it.
 */
export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

const STATUSES: readonly InvocationStatus[] = INVOCATION_STATUSES;
const MAX_ID_LENGTH = 128;

const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;

function parseObject(content: Buffer): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    return 'the body is not JSON';
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : 'the body is not a JSON object';
}

function jobProblem(m: Record<string, unknown>): string | null {
  if (m.kind !== 'job') return `kind must be "job", got ${JSON.stringify(m.kind)}`;
  if (m.version !== 1) return `version ${JSON.stringify(m.version)} is not supported (expected 1)`;
  if (typeof m.botId !== 'string' || !isValidName(m.botId)) return 'botId is missing or invalid';
  if (!isId(m.invocationId)) return 'invocationId is missing or invalid';
  if (typeof m.pool !== 'string' || !isValidName(m.pool)) return 'pool is missing or invalid';
  return null;
}

function completionProblem(m: Record<string, unknown>): string | null {
  if (m.kind !== 'completed') return `kind must be "completed", got ${JSON.stringify(m.kind)}`;
  if (m.version !== 1) return `version ${JSON.stringify(m.version)} is not supported (expected 1)`;
  if (typeof m.botId !== 'string' || !isValidName(m.botId)) return 'botId is missing or invalid';
  if (!isId(m.invocationId)) return 'invocationId is missing or invalid';
  if (!STATUSES.includes(m.status as InvocationStatus)) return 'status is missing or invalid';
  return null;
}

function cancelProblem(m: Record<string, unknown>): string | null {
  if (m.kind !== 'cancel') return `kind must be "cancel", got ${JSON.stringify(m.kind)}`;
  if (m.version !== 1) return `version ${JSON.stringify(m.version)} is not supported (expected 1)`;
  if (typeof m.botId !== 'string' || !isValidName(m.botId)) return 'botId is missing or invalid';
  if (!isId(m.invocationId)) return 'invocationId is missing or invalid';
  return null;
}

export function decodeJob(content: Buffer): Decoded<JobMessage> {
  const m = parseObject(content);
  if (typeof m === 'string') return { ok: false, reason: m };
  const problem = jobProblem(m);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, value: { kind: 'job', version: 1, botId: m.botId as string, invocationId: m.invocationId as string, pool: m.pool as string } };
}

export function decodeCompletion(content: Buffer): Decoded<CompletionEvent> {
  const m = parseObject(content);
  if (typeof m === 'string') return { ok: false, reason: m };
  const problem = completionProblem(m);
  if (problem) return { ok: false, reason: problem };
  return {
    ok: true,
    value: { kind: 'completed', version: 1, botId: m.botId as string, invocationId: m.invocationId as string, status: m.status as InvocationStatus },
  };
}

export function decodeCancel(content: Buffer): Decoded<CancelEvent> {
  const m = parseObject(content);
  if (typeof m === 'string') return { ok: false, reason: m };
  const problem = cancelProblem(m);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, value: { kind: 'cancel', version: 1, botId: m.botId as string, invocationId: m.invocationId as string } };
}

/** Refuses to send what no consumer would accept: a bad message is a bug of the sender. */
export function encodeJob(job: JobMessage): Buffer {
  const problem = jobProblem({ ...job });
  if (problem) throw new Error(`Invalid job message: ${problem}.`);
  const { kind, version, botId, invocationId, pool } = job;
  return Buffer.from(JSON.stringify({ kind, version, botId, invocationId, pool }));
}

export function encodeCompletion(event: CompletionEvent): Buffer {
  const problem = completionProblem({ ...event });
  if (problem) throw new Error(`Invalid completion event: ${problem}.`);
  const { kind, version, botId, invocationId, status } = event;
  return Buffer.from(JSON.stringify({ kind, version, botId, invocationId, status }));
}

export function encodeCancel(event: CancelEvent): Buffer {
  const problem = cancelProblem({ ...event });
  if (problem) throw new Error(`Invalid cancel event: ${problem}.`);
  const { kind, version, botId, invocationId } = event;
  return Buffer.from(JSON.stringify({ kind, version, botId, invocationId }));
}
