import type { InvocationError } from './errors';
import type { WebhookEntity } from './request-entity';

export type InvocationStatus = 'Queued' | 'Running' | 'Completed' | 'Failed';
export const TERMINAL_STATUSES: readonly InvocationStatus[] = ['Completed', 'Failed'];
export const isTerminal = (status: InvocationStatus) => status === 'Completed' || status === 'Failed';

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

export interface Progress {
  percent: number;
  message?: string;
}

/** The recorded end of an invocation: exactly one per invocation. */
export type Outcome =
  | { status: 'Completed'; responseBody: unknown }
  | { status: 'Failed'; error: InvocationError };

export interface NewInvocation extends InvocationRef {
  entityName: string;
  integrationId: string;
  integrationVersion: number;
  pool: string;
  mode: InvocationMode;
  endpoint: Endpoint;
  /** The media type the reply is rendered in unless a poll asks for another. */
  responseContentType: string;
  entity: WebhookEntity;
  createdAt: number;
  expireAt: number;
}

export interface Invocation extends NewInvocation {
  status: InvocationStatus;
  attempt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  outcome: Outcome | null;
  logs: LogLine[];
  progress: Progress | null;
}

/** What listings show: no request data, just the run. */
export type InvocationSummary = Pick<
  Invocation,
  'id' | 'botId' | 'entityName' | 'integrationId' | 'integrationVersion' | 'mode' | 'status' | 'attempt' | 'createdAt' | 'startedAt' | 'finishedAt'
> & { error: InvocationError | null };

/** When one invocation was created, started and finished: what the activity chart counts and measures. */
export type InvocationTiming = Pick<Invocation, 'integrationId' | 'status' | 'createdAt' | 'startedAt' | 'finishedAt'>;

export const durationMs = (inv: Pick<Invocation, 'startedAt' | 'finishedAt'>) =>
  inv.startedAt !== null && inv.finishedAt !== null ? inv.finishedAt - inv.startedAt : null;
