import type { InvocationError } from './errors';
import type { WaitReason } from './journal';
import type { VerifiedInbound } from './inbound-auth';
import type { WebhookEntity } from './request-entity';

/**
 * `Waiting`: a durable run suspended in a sleep or an event wait (docs/connectors.md, *Durable jobs*): it
 * holds no executor until it is woken, and callers see it as not complete (polls answer 202 Running).
 */
export const INVOCATION_STATUSES = ['Queued', 'Running', 'Waiting', 'Completed', 'Failed', 'Cancelled'] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];
/** Queued or running: these count as in flight (quotas, fair shares). A Waiting invocation holds no executor and is not counted. */
export const ACTIVE_STATUSES: readonly InvocationStatus[] = ['Queued', 'Running'];
/** Not finished yet: these can still be cancelled, and keep what they were accepted with (their integration version, their files). */
export const UNFINISHED_STATUSES: readonly InvocationStatus[] = ['Queued', 'Running', 'Waiting'];
export const TERMINAL_STATUSES = ['Completed', 'Failed', 'Cancelled'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export const isTerminal = (status: InvocationStatus): status is TerminalStatus => (TERMINAL_STATUSES as readonly string[]).includes(status);

export type InvocationMode = 'sync' | 'async';
export type Endpoint = 'GenericIntegration' | 'GenericIntegrationFileTransfer';

/** Every store query carries the bot id, so one bot can never reach another's invocation. */
export interface InvocationRef {
  botId: string;
  id: string;
}

export interface LogLine {
  at: number;
  level: 'info' | 'error';
  message: string;
}

/** A line as the store keeps it: marked with the attempt (run) that logged it. */
export interface StoredLogLine extends LogLine {
  attempt: number;
}

/**
 * Lines the running attempt logged, appended while it runs: batch `seq` counts from 0 within the
 * attempt, so a batch sent again (a retried write) is stored once.
 */
export interface LogBatch {
  attempt: number;
  seq: number;
  lines: LogLine[];
}

export interface Progress {
  percent: number;
  message?: string;
}

/** The recorded end of an invocation: exactly one per invocation. */
export type Outcome =
  | { status: 'Completed'; responseBody: unknown }
  | { status: 'Failed'; error: InvocationError }
  | { status: 'Cancelled'; error: InvocationError };

/** The error an outcome carries (a failure or a cancellation), null for a completed one. */
export const outcomeError = (outcome: Outcome | null): InvocationError | null => (outcome && outcome.status !== 'Completed' ? outcome.error : null);

export type CallbackState = 'pending' | 'delivered' | 'failed';

/** An invocation's callback: POSTed once it finishes, retried with back-off until delivered or given up. */
export interface CallbackDelivery {
  url: string;
  state: CallbackState;
  attempts: number;
  /** When the next attempt is due; null while the invocation runs and once delivered or given up. */
  nextAttemptAt: number | null;
  lastError: string | null;
  deliveredAt: number | null;
}

export interface NewInvocation extends InvocationRef {
  /** The token the call came with (its quotas count this invocation); null when started otherwise. */
  tokenId: string | null;
  entityName: string;
  integrationId: string;
  integrationVersion: number;
  pool: string;
  mode: InvocationMode;
  endpoint: Endpoint;
  /** The media type the reply is rendered in unless a poll asks for another. */
  responseContentType: string;
  /**
   * The entity (WebhookEntity) as JSON text, built once where the call is accepted (requestEntityJson):
   * what the stores keep and the sandbox parses, never parsed on the way.
   */
  entityJson: string;
  /**
   * The request body exactly as the caller sent it (UTF-8 text, byte order mark included), for
   * connectors that check a signature over it; null where there is no single body (file transfers).
   * Kept apart from the entity, and never logged.
   */
  rawBody: string | null;
  /**
   * What the gateway verified of a call its integration's inbound auth accepted (the scheme and the
   * producer's delivery id); null or absent for a call made with a bot token.
   */
  inbound?: VerifiedInbound | null;
  createdAt: number;
  expireAt: number;
  /** Where its outcome is POSTed once it finishes; null for none. */
  callbackUrl: string | null;
}

export interface Invocation extends Omit<NewInvocation, 'callbackUrl' | 'entityJson'> {
  entity: WebhookEntity;
  status: InvocationStatus;
  attempt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  outcome: Outcome | null;
  /**
   * What the connector logged, every attempt's lines in order: those the attempts appended while they
   * ran, then the rest the last one recorded with its outcome.
   */
  logs: StoredLogLine[];
  progress: Progress | null;
  callback: CallbackDelivery | null;
  /** Durable runs: what the invocation waits for while it is Waiting; null otherwise. */
  waiting: WaitReason | null;
  /** Durable runs: entries in its journal (steps, sleeps, event waits); 0 for a run that made none. */
  steps: number;
  /** Durable runs: the run time of its attempts that ended suspended, added up (the wall-time limit counts it). */
  activeMs: number;
  /**
   * The attempt that last made progress (journalled a step or suspended); 0 before any did. An attempt
   * is given up after MAX_ATTEMPTS runs since then, so a long job that keeps progressing is never given up.
   */
  progressAttempt: number;
}

/** An invocation as a claim hands it to its run: the entity as the store holds it, JSON text, for the sandbox to parse. */
export type ClaimedInvocation = Omit<Invocation, 'entity'> & Pick<NewInvocation, 'entityJson'>;

/**
 * What listings show: no request data, just the run (and the error of its outcome). The stores read
 * these fields and no more (libs/domain invocation-records.ts `invocationSummary` builds it).
 */
export const SUMMARY_FIELDS = ['id', 'botId', 'entityName', 'integrationId', 'integrationVersion', 'mode', 'status', 'attempt', 'createdAt', 'startedAt', 'finishedAt'] as const satisfies ReadonlyArray<keyof Invocation>;
export type InvocationSummary = Pick<Invocation, (typeof SUMMARY_FIELDS)[number]> & { error: InvocationError | null };

/**
 * Where an invocation stands, as a store reads it for its caller and for a waiter (InvocationStore.getState,
 * `watch`): its status, attempt, progress and outcome and the call's mode, without the request entity or
 * the connector's logs (`invocationState` builds it).
 */
export const STATE_FIELDS = ['id', 'botId', 'integrationId', 'mode', 'status', 'attempt', 'startedAt', 'finishedAt', 'progress', 'outcome', 'responseContentType', 'waiting', 'steps'] as const satisfies ReadonlyArray<keyof Invocation>;
export type StoredInvocationState = Pick<Invocation, (typeof STATE_FIELDS)[number]>;

/** When one invocation was created, started and finished: what the activity chart counts and measures (`invocationTiming` builds it). */
export const TIMING_FIELDS = ['integrationId', 'status', 'createdAt', 'startedAt', 'finishedAt'] as const satisfies ReadonlyArray<keyof Invocation>;
export type InvocationTiming = Pick<Invocation, (typeof TIMING_FIELDS)[number]>;

export const durationMs = (inv: Pick<Invocation, 'startedAt' | 'finishedAt'>) =>
  inv.startedAt !== null && inv.finishedAt !== null ? inv.finishedAt - inv.startedAt : null;
