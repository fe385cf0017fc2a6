import { BUS_MESSAGES } from './bus-messages';
import type { BusMessage, BusMessageKind, BusMessageOf, CancelEvent, CompletionEvent, JobMessage } from './bus-messages';

/**
 * Bus messages on the wire: JSON of exactly the fields of the typed message (BUS_MESSAGES). Anything
 * read from the broker is checked before use, since other processes (or other versions of this one)
 * wrote it.
 */
export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Why `value` is not a valid message of `kind`, or null when it is; `fields` gets the fields it holds. */
function problemOf(kind: BusMessageKind, value: Record<string, unknown>, fields: { value?: object } = {}): string | null {
  const spec = BUS_MESSAGES[kind];
  if (value.kind !== kind) return `kind must be "${kind}", got ${JSON.stringify(value.kind)}`;
  if (value.version !== spec.version) return `version ${JSON.stringify(value.version)} is not supported (expected ${spec.version})`;
  const parsed = spec.fields.safeParse(value);
  if (!parsed.success) return `${String(parsed.error.issues[0].path[0])} is missing or invalid`;
  fields.value = parsed.data;
  return null;
}

/** Reads a message of `kind` from the wire; fields that are not part of it are dropped. */
export function decodeBusMessage<K extends BusMessageKind>(kind: K, content: Buffer): Decoded<BusMessageOf<K>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    return { ok: false, reason: 'the body is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, reason: 'the body is not a JSON object' };
  const fields: { value?: object } = {};
  const problem = problemOf(kind, parsed as Record<string, unknown>, fields);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, value: { kind, version: BUS_MESSAGES[kind].version, ...fields.value } as BusMessageOf<K> };
}

/** Refuses to send what no consumer would accept: a bad message is a bug of the sender. */
export function encodeBusMessage(message: BusMessage): Buffer {
  const fields: { value?: object } = {};
  const problem = problemOf(message.kind, { ...message }, fields);
  if (problem) throw new Error(`Invalid ${BUS_MESSAGES[message.kind].noun}: ${problem}.`);
  return Buffer.from(JSON.stringify({ kind: message.kind, version: message.version, ...fields.value }));
}

export const decodeJob = (content: Buffer): Decoded<JobMessage> => decodeBusMessage('job', content);
export const decodeCompletion = (content: Buffer): Decoded<CompletionEvent> => decodeBusMessage('completed', content);
export const decodeCancel = (content: Buffer): Decoded<CancelEvent> => decodeBusMessage('cancel', content);
export const encodeJob = (job: JobMessage): Buffer => encodeBusMessage(job);
/**
 * Past this size a completion event goes without what was recorded (`finished`): a large ResponseBody is
 * read from the store by the one waiter that needs it rather than carried by the broker.
 */
export const MAX_COMPLETION_EVENT_BYTES = 32 * 1024;

export function encodeCompletion(event: CompletionEvent): Buffer {
  const encoded = encodeBusMessage(event);
  if (encoded.length <= MAX_COMPLETION_EVENT_BYTES || !event.finished) return encoded;
  return encodeBusMessage({ kind: event.kind, version: event.version, botId: event.botId, invocationId: event.invocationId, status: event.status });
}
export const encodeCancel = (event: CancelEvent): Buffer => encodeBusMessage(event);
