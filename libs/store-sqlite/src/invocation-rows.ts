import type { CallbackDelivery, CallbackState, ClaimFacts, IdempotencyRecord, Invocation, InvocationSummary, StoredInvocationState, LogLine, NewInvocation, StoredLogLine, VerifiedInbound } from '@gi/domain';
import { invocationState, invocationSummary, linesInOrder, pendingCallback, rawBodyOf, rawBodySpan, STATE_FIELDS, SUMMARY_FIELDS, TIMING_FIELDS } from '@gi/domain';

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

/**
 * The column of each field that listings, states and timings read (the domain's field lists), selected
 * under the field's name: a row comes back named as the domain names it.
 */
const COLUMN_OF = {
  id: 'id',
  botId: 'bot_id',
  entityName: 'entity_name',
  integrationId: 'integration_id',
  integrationVersion: 'integration_version',
  mode: 'mode',
  status: 'status',
  attempt: 'attempt',
  createdAt: 'created_at',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  progress: 'progress',
  outcome: 'outcome',
  responseContentType: 'response_content_type',
  waiting: 'waiting',
  steps: 'steps',
} as const satisfies Partial<Record<keyof Invocation, keyof InvocationRow>>;

const selected = (fields: ReadonlyArray<keyof typeof COLUMN_OF>) =>
  fields.map((field) => (COLUMN_OF[field] === field ? field : `${COLUMN_OF[field]} AS ${field}`)).join(', ');

/** JSON text of a column that holds an object (the outcome, progress, a wait reason), null when empty. */
const parsed = <T>(text: string | null): T | null => (text ? (JSON.parse(text) as T) : null);

/** A listing's columns, and the outcome its error comes from. */
export const SUMMARY_COLUMNS = selected([...SUMMARY_FIELDS, 'outcome']);
export type SummaryRow = Omit<InvocationSummary, 'error'> & Pick<InvocationRow, 'outcome'>;

export const toSummary = (row: SummaryRow): InvocationSummary => invocationSummary({ ...row, outcome: parsed(row.outcome) });

/** Columns of the state alone; `outcome` and `progress` are small, the entity and logs stay unread. */
export const STATE_COLUMNS = selected(STATE_FIELDS);
export type StateRow = Omit<StoredInvocationState, 'progress' | 'outcome' | 'waiting'> & Pick<InvocationRow, 'progress' | 'outcome' | 'waiting'>;

export const toState = (row: StateRow): StoredInvocationState =>
  invocationState({ ...row, progress: parsed(row.progress), outcome: parsed(row.outcome), waiting: parsed(row.waiting) });

/** A timing's columns: its row is the timing itself. */
export const TIMING_COLUMNS = selected(TIMING_FIELDS);

/** The callback state a new invocation is stored with, as the domain creates its callback. */
export const createdCallbackState = (invocation: NewInvocation): CallbackState | null => pendingCallback(invocation.callbackUrl)?.state ?? null;

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

/** The whole invocation: what creation stored (toCreated), then where its runs stand. */
export function toInvocation(row: InvocationRow & PayloadRow, batches: LogBatchRow[]): Invocation {
  const { callbackUrl, entityJson, ...created } = toCreated(row);
  return {
    ...created,
    entity: JSON.parse(entityJson),
    status: row.status as Invocation['status'],
    attempt: row.attempt,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    outcome: parsed(row.outcome),
    logs: logsOf(batches, row),
    progress: parsed(row.progress),
    callback: callbackUrl === null ? null : callbackOf(row),
    waiting: parsed(row.waiting),
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
