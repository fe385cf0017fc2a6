import type { CallbackDelivery, CallbackState, ClaimFacts, IdempotencyRecord, Invocation, InvocationSummary, StoredInvocationState, LogLine, NewInvocation, Outcome, StoredLogLine, VerifiedInbound, WaitReason } from '@gi/domain';
import { linesInOrder, outcomeError, rawBodyOf, rawBodySpan } from '@gi/domain';

/** One row of `invocations`, as SQLite returns it. */
export interface InvocationRow {
  id: string;
  bot_id: string;
  token_id: string | null;
  entity_name: string;
  integration_id: string;
  integration_version: number;
  pool: string;
  mode: string;
  endpoint: string;
  response_content_type: string;
  status: string;
  attempt: number;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  expire_at: number;
  outcome: string | null;
  logs: string;
  progress: string | null;
  callback_url: string | null;
  callback_state: string | null;
  callback_attempts: number;
  callback_due_at: number | null;
  callback_error: string | null;
  callback_delivered_at: number | null;
  /** JSON of the WaitReason while Waiting; null otherwise. */
  waiting: string | null;
  /** The wake time of its latest wait (indexed only while it is Waiting). */
  wake_at: number | null;
  steps: number;
  journal_bytes: number;
  active_ms: number;
  progress_attempt: number;
  /** Its TTL as created (expire_at - created_at), kept at its first suspension; null for one that never suspended. */
  retain_ms: number | null;
}

/** One row of `invocation_payloads`: what the call brought, written once with its invocation. */
export interface PayloadRow {
  entity: string;
  /** Null for file transfers, for invocations stored before raw bodies were kept, and when the span holds it. */
  raw_body: string | null;
  /** Where the raw body lies in `entity` when it is there as sent (a JSON body): `entity.slice(start, end)`. */
  raw_body_start: number | null;
  raw_body_end: number | null;
  /** What the gateway verified (VerifiedInbound, JSON); null for a call made with a bot token. */
  inbound: string | null;
}

/** The payload row of a new invocation: its raw body once, as a span of the entity when it lies there. */
export function toPayloadRow(invocation: NewInvocation): PayloadRow & { id: string } {
  const span = rawBodySpan(invocation.entityJson, invocation.rawBody);
  return {
    id: invocation.id,
    entity: invocation.entityJson,
    raw_body: span ? null : invocation.rawBody,
    raw_body_start: span?.[0] ?? null,
    raw_body_end: span?.[1] ?? null,
    inbound: invocation.inbound ? JSON.stringify(invocation.inbound) : null,
  };
}

const inboundOfRow = (row: PayloadRow): VerifiedInbound | null => (row.inbound === null ? null : JSON.parse(row.inbound));

const rawBodyOfRow = (row: PayloadRow) =>
  rawBodyOf(row.entity, row.raw_body, row.raw_body_start === null || row.raw_body_end === null ? null : [row.raw_body_start, row.raw_body_end]);

export const SUMMARY_COLUMNS =
  'id, bot_id, entity_name, integration_id, integration_version, mode, status, attempt, created_at, started_at, finished_at, outcome';

/**
 * The columns of `invocations` stored at creation that never change: with the payload, what a claim
 * reads back when it does not hold the invocation as created.
 */
export const CREATED_COLUMNS =
  'id, bot_id, token_id, entity_name, integration_id, integration_version, pool, mode, endpoint, response_content_type, created_at, expire_at, callback_url';

export type CreatedRow = Pick<InvocationRow, 'id' | 'bot_id' | 'token_id' | 'entity_name' | 'integration_id' | 'integration_version' | 'pool' | 'mode' | 'endpoint' | 'response_content_type' | 'created_at' | 'expire_at' | 'callback_url'> & PayloadRow;

export function toCreated(row: CreatedRow): NewInvocation {
  return {
    id: row.id,
    botId: row.bot_id,
    tokenId: row.token_id,
    entityName: row.entity_name,
    integrationId: row.integration_id,
    integrationVersion: row.integration_version,
    pool: row.pool,
    mode: row.mode as Invocation['mode'],
    endpoint: row.endpoint as Invocation['endpoint'],
    responseContentType: row.response_content_type,
    entityJson: row.entity,
    rawBody: rawBodyOfRow(row),
    inbound: inboundOfRow(row),
    createdAt: row.created_at,
    expireAt: row.expire_at,
    callbackUrl: row.callback_url,
  };
}

/** What a claim's update returns besides what creation stored: the attempt it began, and where a durable run stands. */
export const CLAIMED_COLUMNS = 'attempt, steps, active_ms, progress_attempt';
export type ClaimedRow = Pick<InvocationRow, 'attempt' | 'steps' | 'active_ms' | 'progress_attempt'>;

/** The claim's facts, from the row its update returned. */
export const claimFactsOf = (row: ClaimedRow): ClaimFacts => ({ attempt: row.attempt, steps: row.steps, activeMs: row.active_ms, progressAttempt: row.progress_attempt });

/** Columns of the state alone; `outcome` and `progress` are small, the entity and logs stay unread. */
export const STATE_COLUMNS = 'id, bot_id, integration_id, mode, status, attempt, started_at, finished_at, progress, outcome, response_content_type, waiting, steps';

export type StateRow = Pick<
  InvocationRow,
  'id' | 'bot_id' | 'integration_id' | 'mode' | 'status' | 'attempt' | 'started_at' | 'finished_at' | 'progress' | 'outcome' | 'response_content_type' | 'waiting' | 'steps'
>;

const waitingOf = (row: Pick<InvocationRow, 'waiting'>): WaitReason | null => (row.waiting === null ? null : (JSON.parse(row.waiting) as WaitReason));

export function toState(row: StateRow): StoredInvocationState {
  return {
    id: row.id,
    botId: row.bot_id,
    integrationId: row.integration_id,
    mode: row.mode as Invocation['mode'],
    status: row.status as Invocation['status'],
    attempt: row.attempt,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    progress: row.progress ? JSON.parse(row.progress) : null,
    outcome: row.outcome ? JSON.parse(row.outcome) : null,
    responseContentType: row.response_content_type,
    waiting: waitingOf(row),
    steps: row.steps,
  };
}

export function toSummary(row: Pick<InvocationRow, 'id' | 'bot_id' | 'entity_name' | 'integration_id' | 'integration_version' | 'mode' | 'status' | 'attempt' | 'created_at' | 'started_at' | 'finished_at' | 'outcome'>): InvocationSummary {
  const outcome = row.outcome ? (JSON.parse(row.outcome) as Outcome) : null;
  return {
    id: row.id,
    botId: row.bot_id,
    entityName: row.entity_name,
    integrationId: row.integration_id,
    integrationVersion: row.integration_version,
    mode: row.mode as Invocation['mode'],
    status: row.status as Invocation['status'],
    attempt: row.attempt,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    error: outcomeError(outcome),
  };
}

/** One batch of `invocation_logs`. */
export interface LogBatchRow {
  attempt: number;
  lines: string;
}

/** Every line of an invocation in order (linesInOrder), from the rows that hold them as JSON text. */
export function logsOf(batches: LogBatchRow[], row: Pick<InvocationRow, 'logs' | 'attempt'>): StoredLogLine[] {
  return linesInOrder(
    batches.map((batch) => ({ attempt: batch.attempt, lines: JSON.parse(batch.lines) as LogLine[] })),
    { attempt: row.attempt, lines: JSON.parse(row.logs) as LogLine[] },
  );
}

export function toInvocation(row: InvocationRow & PayloadRow, batches: LogBatchRow[]): Invocation {
  const { error: _error, ...summary } = toSummary(row);
  return {
    ...summary,
    tokenId: row.token_id,
    pool: row.pool,
    endpoint: row.endpoint as Invocation['endpoint'],
    responseContentType: row.response_content_type,
    entity: JSON.parse(row.entity),
    rawBody: rawBodyOfRow(row),
    inbound: inboundOfRow(row),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    expireAt: row.expire_at,
    outcome: row.outcome ? JSON.parse(row.outcome) : null,
    logs: logsOf(batches, row),
    progress: row.progress ? JSON.parse(row.progress) : null,
    callback: row.callback_url === null ? null : callbackOf(row),
    waiting: waitingOf(row),
    steps: row.steps,
    activeMs: row.active_ms,
    progressAttempt: row.progress_attempt,
  };
}

function callbackOf(row: InvocationRow): CallbackDelivery {
  const state = row.callback_state as CallbackState;
  return {
    url: row.callback_url as string,
    state,
    attempts: row.callback_attempts,
    nextAttemptAt: state === 'pending' && row.callback_due_at ? row.callback_due_at : null,
    lastError: row.callback_error,
    deliveredAt: row.callback_delivered_at,
  };
}

export interface KeyRow {
  bot_id: string;
  key: string;
  fingerprint: string;
  invocation_id: string;
  created_at: number;
  expire_at: number;
}

export const toRecord = (row: KeyRow): IdempotencyRecord => ({
  botId: row.bot_id,
  key: row.key,
  fingerprint: row.fingerprint,
  invocationId: row.invocation_id,
  createdAt: row.created_at,
  expireAt: row.expire_at,
});
