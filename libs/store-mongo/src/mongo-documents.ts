import type { CallbackState, ConnectorLimits, ConnectorSource, InboundAuth, Invocation, LogLine, StepError, StepKind, StepStatus, VerifiedInbound, WaitReason } from '@gi/domain';

/** Collection names of one deployment's database. */
export const COLLECTIONS = {
  invocations: 'invocations',
  invocationLogs: 'invocationLogs',
  invocationJournal: 'invocationJournal',
  invocationEvents: 'invocationEvents',
  entities: 'entities',
  integrations: 'integrations',
  tokens: 'tokens',
  idempotencyKeys: 'idempotencyKeys',
  quotas: 'quotas',
  instances: 'instances',
  signingSecrets: 'signingSecrets',
  secrets: 'secrets',
  deletedIntegrations: 'deletedIntegrations',
  integrationDrafts: 'integrationDrafts',
} as const;

/** The fields of an invocation a document keeps under the domain's name, as the domain holds them. */
type KeptAsTheDomainHasThem =
  | 'botId'
  | 'entityName'
  | 'integrationId'
  | 'integrationVersion'
  | 'pool'
  | 'mode'
  | 'endpoint'
  | 'responseContentType'
  | 'status'
  | 'attempt'
  | 'leaseOwner'
  | 'leaseUntil'
  | 'createdAt'
  | 'startedAt'
  | 'finishedAt'
  | 'progress';

/**
 * One invocation, keyed by its id. Times are epoch milliseconds like the domain's, except `expireAt`:
 * the TTL monitor only deletes by a BSON date. The caller's entity and the connector's outcome are
 * kept as JSON text, so any field name a caller sends (`$where`, `a.b`) round-trips exactly and is
 * never read as an operator.
 */
export interface InvocationDocument extends Pick<Invocation, KeptAsTheDomainHasThem> {
  _id: string;
  /** The token the call came with; absent on invocations stored before quotas existed. */
  tokenId?: string | null;
  /** JSON text of the WebhookEntity. */
  entity: string;
  /** The body as sent; null for file transfers and when `rawBodySpan` holds it, absent on invocations stored before raw bodies were kept. */
  rawBody?: string | null;
  /** Where the raw body lies in `entity` when it is there as sent (a JSON body): kept once (rawBodySpan in libs/domain). */
  rawBodySpan?: [start: number, end: number];
  /** What the gateway verified of a call its inbound auth accepted; absent for a call made with a bot token. */
  inbound?: VerifiedInbound;
  /** When the job was last published; 0 = never (the sweeper publishes it). */
  publishedAt: number;
  expireAt: Date;
  /** JSON text of the Outcome. */
  outcome: string | null;
  /** The lines the last attempt recorded with its outcome (those appended while it ran are in invocationLogs). */
  logs: LogLine[];
  /**
   * Batches appended to invocationLogs; each append increments it in the same transaction, so an append
   * conflicts with (and is retried after) any change of the invocation it races with.
   */
  logBatches?: number;
  /** Marks the invocations one sweep call took, so it returns exactly those. */
  sweepToken?: string;
  /** Absent or null without a callback. */
  callback?: CallbackDocument | null;
  /** True once a process besides a sync caller's gateway waits for it (InvocationStore.watch); absent until then. */
  watched?: boolean;
  /** Durable runs (absent on an invocation that never journalled nor suspended): what a Waiting one waits for, null otherwise. */
  waiting?: WaitReason | null;
  /** Entries in its journal (invocationJournal); each new one's `seq`. */
  steps?: number;
  /** Bytes of its journal's results and errors and of its kept events (JournalLimits.maxJournalBytes). */
  journalBytes?: number;
  /** Events ever sent to it; each kept one's `seq`. */
  eventSeq?: number;
  /** Run time of its attempts that ended suspended. */
  activeMs?: number;
  /** The attempt that last journalled or suspended. */
  progressAttempt?: number;
  /** Its TTL as created (ms), kept at its first suspension: once it finishes it expires that long after its end. */
  retainMs?: number;
}

/**
 * One entry of a durable run's journal, unique per {botId, invocationId, name, occurrence}. `seq` is the
 * invocation's entry count when it was first written, so the entries read in that order. `expireAt`
 * follows the invocation's (moved with it when it suspends and when it ends): the TTL monitor deletes
 * the journal with its invocation.
 */
export interface JournalEntryDocument {
  botId: string;
  invocationId: string;
  name: string;
  occurrence: number;
  seq: number;
  kind: StepKind;
  status: StepStatus;
  /** The result as JSON text (`done`), so any field name round-trips and is never read as an operator. */
  result: string | null;
  resultBytes: number;
  error: StepError | null;
  attempts: number;
  startedAt: number;
  finishedAt: number | null;
  until: number | null;
  expireAt: Date;
}

/** An event sent to an invocation before a wait of its name took it; `seq` orders them (the invocation's eventSeq). */
export interface KeptEventDocument {
  botId: string;
  invocationId: string;
  name: string;
  seq: number;
  /** The payload as JSON text. */
  payload: string;
  sentAt: number;
  expireAt: Date;
}

/**
 * Lines a running attempt logged, appended while it ran: one document per batch, kept apart from the
 * invocation so that no attempt's lines, however many attempts an invocation takes, count against its
 * document's 16 MiB. Keyed `<invocationId>:<attempt>:<seq>`: a batch sent twice is stored once.
 */
export interface LogBatchDocument {
  _id: string;
  botId: string;
  invocationId: string;
  attempt: number;
  seq: number;
  lines: LogLine[];
  /** The invocation's: the TTL monitor deletes the batches with it. */
  expireAt: Date;
}

/** An invocation's callback: pending from the start, due once the invocation finished and `dueAt` came. */
export interface CallbackDocument {
  url: string;
  state: CallbackState;
  attempts: number;
  /** Null until the invocation finishes (then its finish time, then each retry's); 0 on invocations stored by releases before. */
  dueAt: number | null;
  error: string | null;
  deliveredAt: number | null;
}

export interface EntityDocument {
  botId: string;
  name: string;
  fields: string[];
  updatedAt: number;
}

export interface IntegrationDocument {
  botId: string;
  integrationId: string;
  version: number;
  entityName: string;
  code: string;
  pool: string;
  timeoutSeconds: number;
  allowedHosts: string[];
  /** Absent on versions deployed before limits existed: the defaults apply. */
  limits?: ConnectorLimits;
  /** Absent on integrations deployed before callbacks existed. */
  callbackUrl?: string | null;
  deployedAt: number;
  /** The files a bundle was built from; absent for a plain script. */
  sources?: ConnectorSource[];
  /** Absent for a bot token (bearer), the default: docs/inbound.md. */
  inboundAuth?: InboundAuth;
}

/** The draft of an integration (at most one): its settings, as a version has them. */
export interface IntegrationDraftDocument extends Omit<IntegrationDocument, 'version' | 'deployedAt'> {
  draftedAt: number;
}

/** The last version number of a deleted integration: a new deploy under its id goes on from it. */
export interface DeletedIntegrationDocument {
  botId: string;
  integrationId: string;
  lastVersion: number;
}

export interface TokenDocument {
  botId: string;
  tokenId: string;
  label: string | null;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

/** A connector secret, sealed; `scope` is the integration id, '' for the bot's own (unique per {botId, scope, name}). */
export interface SecretDocument {
  botId: string;
  scope: string;
  name: string;
  sealed: string;
  createdAt: number;
  updatedAt: number;
}

/** An Idempotency-Key of a bot; unique per {botId, key}, deleted by the TTL monitor after expireAt. */
export interface IdempotencyKeyDocument {
  botId: string;
  key: string;
  fingerprint: string;
  invocationId: string;
  createdAt: number;
  expireAt: Date;
}
/** Quotas of a bot (`tokenId` '') or of one of its tokens; null members are the defaults. */
export interface QuotaDocument {
  botId: string;
  tokenId: string;
  ratePerSecond: number | null;
  burst: number | null;
  maxInFlight: number | null;
  updatedAt: number;
}

/** One live service instance; the TTL monitor removes it some time after it stopped beating. */
export interface InstanceDocument {
  _id: string;
  role: string;
  seenAt: number;
  expireAt: Date;
}

export interface SigningSecretDocument {
  botId: string;
  secret: string;
  createdAt: number;
  expiresAt: number | null;
}
