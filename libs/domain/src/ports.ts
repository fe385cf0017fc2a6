/**
 * Ports: every side effect the services need, named by role. Adapters (store-sqlite, bus-local,
 * sandbox, ...) implement them; services receive them in their factories.
 */
import type { InvocationError } from './errors';
import type { EntityDefinition, IntegrationDefinition, IntegrationSettings, IntegrationTarget, RunLimits, SigningSecret, TokenRecord } from './catalog';
import type { IdempotencyRecord } from './idempotency';
import type { BotQuotas, Quotas } from './quotas';
import type {
  Invocation,
  InvocationRef,
  InvocationStatus,
  InvocationSummary,
  InvocationTiming,
  LogLine,
  NewInvocation,
  Outcome,
  Progress,
} from './invocation';
import type { WebhookEntity } from './request-entity';

export interface InvocationListFilter {
  status?: InvocationStatus;
  integrationId?: string;
  limit: number;
}

export interface ActiveCount {
  total: number;
  /** By the id of the token that started them (invocations started without one are not listed). */
  byToken: Record<string, number>;
}

/**
 * Where an invocation stands, for its caller: what the sync reply and every poll answer need (its status,
 * attempt, progress and outcome), without the request entity or the connector's logs.
 */
export type InvocationState = Pick<
  Invocation,
  'id' | 'botId' | 'integrationId' | 'status' | 'attempt' | 'startedAt' | 'finishedAt' | 'progress' | 'outcome' | 'responseContentType'
>;

export interface InvocationStore {
  /** Persists a new invocation in status Queued. Resolves only once it is durable. */
  create(invocation: NewInvocation): Promise<void>;
  /**
   * Persists a new invocation together with the Idempotency-Key record that names it, atomically: when
   * the bot holds no live record of `record.key` (an expired one is replaced), both are stored and null
   * is returned; otherwise nothing is stored and the live record is returned. Of concurrent creates with
   * one key exactly one stores anything.
   */
  createWithKey(invocation: NewInvocation, record: IdempotencyRecord): Promise<IdempotencyRecord | null>;
  get(ref: InvocationRef): Promise<Invocation | null>;
  /** The same invocation's state alone, neither reading nor decoding its entity and logs; null when `get` is. */
  getState(ref: InvocationRef): Promise<InvocationState | null>;
  /**
   * Claims an invocation for a run: Queued, or Running with an expired lease, becomes Running with
   * attempt + 1 and a lease for `owner`. Null when it is terminal or leased by someone else.
   */
  claim(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<Invocation | null>;
  /** Extends the lease while the run goes on; false when the lease was lost. */
  renewLease(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<boolean>;
  setProgress(ref: InvocationRef, owner: string, progress: Progress): Promise<void>;
  /** Records the outcome once: only the lease owner of a Running invocation can complete it. */
  complete(ref: InvocationRef, owner: string, outcome: Outcome, logs: LogLine[], now: number): Promise<boolean>;
  /**
   * Records a Failed outcome for an invocation that cannot be run (a poison job), whatever its lease,
   * without reading its data. False when it is already finished.
   */
  giveUp(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean>;
  /**
   * Cancels a Queued or Running invocation, whatever its lease: it becomes Cancelled with `error` as
   * its outcome, so no executor claims or completes it afterwards. False when it is already finished.
   */
  cancel(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean>;
  /** Running invocations whose lease ended before `before` go back to Queued; returns them. */
  requeueExpiredLeases(before: number): Promise<InvocationRef[]>;
  /**
   * Queued invocations last published before `before`: marks them published at `now` and returns them,
   * so concurrent sweepers never republish the same invocation twice in one round.
   */
  takeUnpublished(before: number, now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>>;
  list(botId: string, filter: InvocationListFilter): Promise<InvocationSummary[]>;
  /**
   * Callbacks due at `now` (of finished invocations: the first attempt, or a retry whose time came):
   * moves each one's due time `leaseMs` ahead, so concurrent senders never take the same one, and
   * returns them. A sender that dies mid-attempt leaves it to be taken again after `leaseMs`.
   */
  takeDueCallbacks(now: number, leaseMs: number, limit: number): Promise<InvocationRef[]>;
  /**
   * Records one attempt of a pending callback: `error` null means delivered; otherwise it is retried at
   * `nextAttemptAt`, or given up when that is null.
   */
  recordCallbackAttempt(ref: InvocationRef, attempt: { at: number; error: string | null; nextAttemptAt: number | null }): Promise<void>;
  /** The bot's invocations in flight (Queued or Running, not expired): in total and per token. */
  countActive(botId: string, now: number): Promise<ActiveCount>;
  /** Timings of the bot's invocations created at or after `since`, newest first, at most `limit`. */
  timings(botId: string, since: number, limit: number): Promise<InvocationTiming[]>;
  /** How long (finishedAt - startedAt, ms) the integration's latest finished runs took, newest first, at most `limit`. */
  recentDurations(botId: string, integrationId: string, limit: number): Promise<number[]>;
  /** Deletes invocations and Idempotency-Key records whose expireAt has passed; returns how many invocations. */
  deleteExpired(now: number): Promise<number>;
}

export interface CatalogStore {
  putEntity(botId: string, name: string, extraFields: string[], now: number): Promise<EntityDefinition>;
  getEntity(botId: string, name: string): Promise<EntityDefinition | null>;
  listEntities(botId: string): Promise<EntityDefinition[]>;
  /** Stores a new version of the integration (1 for the first deploy). */
  deployIntegration(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDefinition>;
  /** The latest version, or the given one. */
  getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null>;
  /** The latest version's target of calls alone, neither reading its code nor decoding its settings; null when `getIntegration` is. */
  resolveIntegration(botId: string, integrationId: string): Promise<IntegrationTarget | null>;
  listIntegrations(botId: string): Promise<IntegrationDefinition[]>;
  listIntegrationVersions(botId: string, integrationId: string): Promise<Array<{ version: number; deployedAt: number }>>;
  listBots(): Promise<string[]>;
  /** The quotas of the bot and of its tokens; all defaults when none were set. */
  getQuotas(botId: string): Promise<BotQuotas>;
  /** Replaces the quotas of the bot (`tokenId` null) or of one of its tokens; all-null returns them to the defaults. */
  putQuotas(botId: string, tokenId: string | null, quotas: Quotas, now: number): Promise<void>;
  /** Adds the bot's new signing secret; those before it that had no end stay valid until `retireAt`. */
  rotateSigningSecret(botId: string, secret: SigningSecret, retireAt: number): Promise<void>;
  /** The bot's signing secrets still valid at `now`, newest first. */
  getSigningSecrets(botId: string, now: number): Promise<SigningSecret[]>;
}

export interface TokenStore {
  create(record: TokenRecord): Promise<void>;
  get(botId: string, tokenId: string): Promise<TokenRecord | null>;
  list(botId: string): Promise<TokenRecord[]>;
  /** False when there is no such token. */
  revoke(botId: string, tokenId: string, now: number): Promise<boolean>;
}

/** Which service instances are alive, so replicas can share a limit (each gateway enforces its part). */
export interface InstanceRegistry {
  /** Records that `instanceId` of `role` is alive at `now`; returns how many of `role` were seen within `ttlMs` (itself included). */
  heartbeat(role: string, instanceId: string, now: number, ttlMs: number): Promise<number>;
  /** Forgets an instance that stops, so the others take over its part at once. */
  leave(role: string, instanceId: string): Promise<void>;
}

/** The whole store of one deployment. */
export interface Store {
  invocations: InvocationStore;
  catalog: CatalogStore;
  tokens: TokenStore;
  instances: InstanceRegistry;
  /** True when the store answers (readiness). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** "Look at this invocation": jobs carry ids, never data; the executor reloads from the store. */
export interface JobMessage {
  kind: 'job';
  version: 1;
  botId: string;
  invocationId: string;
  pool: string;
}

/** Published once an outcome is recorded; wakes sync callers and long polls. */
export interface CompletionEvent {
  kind: 'completed';
  version: 1;
  botId: string;
  invocationId: string;
  status: InvocationStatus;
}

/** Published when an invocation is cancelled: the executor running it stops the run. */
export interface CancelEvent {
  kind: 'cancel';
  version: 1;
  botId: string;
  invocationId: string;
}

/** What a job handler decides: done, try again later, or give up on this message. */
export type JobDecision = 'ack' | 'requeue' | 'dead-letter';
/** What the bus knows about one delivery of a job (adapters that cannot tell leave it out). */
export interface JobDelivery {
  /** Where the publisher waits for a direct reply (sync calls), if it does. */
  replyTo?: string;
  /** How many times the broker has handed this job out, this time included (1 the first time). */
  deliveryCount: number;
}
export type JobHandler = (job: JobMessage, delivery?: JobDelivery) => Promise<JobDecision>;

export interface Subscription {
  /** Stops taking new messages and waits for running handlers. */
  close(): Promise<void>;
}

export interface JobBus {
  /**
   * Resolves once the broker holds the job (publisher confirm); rejects when it cannot. With
   * `awaitReply` (sync calls) the executor answers this publisher directly as well (RabbitMQ direct
   * reply-to); the reply reaches the onCompletion listeners of this bus only.
   */
  publish(job: JobMessage, options?: { awaitReply?: boolean }): Promise<void>;
  /** Sends a completion event straight to the publisher waiting at `replyTo` (at most once). */
  reply(replyTo: string, event: CompletionEvent): Promise<void>;
  consume(pool: string, concurrency: number, handler: JobHandler): Promise<Subscription>;
  publishCompletion(event: CompletionEvent): Promise<void>;
  onCompletion(listener: (event: CompletionEvent) => void): Promise<Subscription>;
  /** Broadcasts a cancellation to every executor (a hint: the store's Cancelled status is the truth). */
  publishCancel(event: CancelEvent): Promise<void>;
  onCancel(listener: (event: CancelEvent) => void): Promise<Subscription>;
  /** True while the broker refuses publishes (a memory or disk alarm): back-pressure callers should see. */
  isBlocked(): boolean;
  /** Jobs waiting in a pool's queue; null when unknown right now. */
  queueDepth(pool: string): Promise<number | null>;
  close(): Promise<void>;
}

/** The invocation a stored file belongs to: files are kept, read and deleted per owner, never across bots. */
export type FileOwner = InvocationRef;

/** A contiguous part of a file; a range past the end is clipped to the end. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** What the store learnt while writing a file. */
export interface StoredFile {
  /** Generated by the store; never derived from anything the client sent. */
  id: string;
  size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
}

/**
 * The bytes of uploaded files (RequestFiles), kept apart from the invocation that lists them. Files
 * live as long as their invocation: the sweep deletes the files of owners the store no longer holds.
 */
export interface FileStore {
  /**
   * Streams `source` into a new file of `owner` while computing its SHA-256 and size. Resolves once
   * the bytes are durable (synced), so the invocation listing the file can be stored next. When the
   * source or the disk fails, the partial file is removed and the promise rejects with that error.
   */
  write(owner: FileOwner, source: AsyncIterable<Uint8Array>): Promise<StoredFile>;
  /** The whole file or a range of it; null when the owner has no file with this id. */
  read(owner: FileOwner, id: string, range?: ByteRange): Promise<Uint8Array | null>;
  /** False when there was no such file. */
  delete(owner: FileOwner, id: string): Promise<boolean>;
  /**
   * Deletes every file of the owner. A write that failed has already removed its partial file; what a
   * crash mid-write leaves goes with its owner (local disk) or through deleteAbandoned (GridFS).
   */
  deleteAll(owner: FileOwner): Promise<void>;
  /** Owners whose files were all last written before `before` (ms since the epoch): candidates for the sweep. */
  listOwners(before: number): Promise<FileOwner[]>;
  /**
   * Deletes the bytes of writes begun before `before` that never finished and that no owner lists (GridFS
   * chunks whose file was never recorded, after a crash mid-upload); returns how many writes. Stores that
   * keep partial files under their owner (local disk) leave it out: listOwners already covers them.
   */
  deleteAbandoned?(before: number): Promise<number>;
}

/** Reads a file of the running invocation for its connector; rejects with a message meant for the connector. */
export type ConnectorFileReader = (id: string, range: ByteRange) => Promise<Uint8Array>;

export interface ConnectorRunRequest {
  /** Identifies the code for the compiled-code cache, e.g. `bot/integration@version`. */
  cacheKey: string;
  code: string;
  entity: WebhookEntity | null;
  timeoutMs: number;
  /** The run's other limits; any left out take the runtime's defaults. */
  limits?: Partial<RunLimits>;
  allowedHosts: string[];
  onProgress?: (progress: Progress) => void;
  /** `Context.ReadFile`: only the files of this run's own request; absent when it has none. */
  readFile?: ConnectorFileReader;
  /** Aborting it stops the run at once (the invocation was cancelled); the result is then `cancelled`. */
  signal?: AbortSignal;
}

export type ConnectorRunResult =
  | { kind: 'ok'; responseBody: unknown; logs: LogLine[]; durationMs: number }
  | { kind: 'raised'; title: string; message: string; logs: LogLine[]; durationMs: number }
  | { kind: 'failed'; reason: 'threw' | 'timeout' | 'limit' | 'cancelled'; message: string; logs: LogLine[]; durationMs: number };

export type CompileResult = { ok: true } | { ok: false; message: string; line: number; column: number };

export interface ConnectorRuntime {
  /** Checks that the code compiles, without running it. */
  compile(code: string): CompileResult;
  run(request: ConnectorRunRequest): Promise<ConnectorRunResult>;
  close(): Promise<void>;
}

/** What became of one callback POST. */
export type CallbackResult =
  | { kind: 'answered'; status: number }
  /** Not sent, and never will be to this URL: the egress policy refuses its destination. */
  | { kind: 'refused'; reason: string }
  /** No answer: DNS, connection, TLS or time-out trouble; worth trying again later. */
  | { kind: 'unreachable'; reason: string };

/** POSTs callbacks to the URLs callers gave, guarded like connector HTTP (no private addresses). */
export interface CallbackSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<CallbackResult>;
}

export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };
