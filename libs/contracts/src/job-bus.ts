import type { CancelEvent, CompletionEvent, JobMessage } from './bus-messages';

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

export interface PublishOptions {
  /** A sync caller waits on this publisher: the executor answers it directly (see publish). */
  awaitReply?: boolean;
  /**
   * The bot's other invocations in flight (Queued or Running) when this one was accepted, if known. A
   * bus whose queue all bots share keeps the jobs of a bot with many apart, so they cannot delay the
   * first jobs of the others (RabbitMQ: the bulk lane of the pool).
   */
  backlog?: number;
}

/** How a consumer shares its concurrency between bots. */
export interface ConsumeOptions {
  /**
   * Jobs of one bot it runs at once, at most (default: its whole concurrency). Whatever is waiting, its
   * jobs are handed out in turns between bots (first in, first out within a bot), so a bot with few
   * waiting never waits behind another bot's backlog.
   */
  perBot?: number;
}

export interface Subscription {
  /** Stops taking new messages and waits for running handlers. */
  close(): Promise<void>;
}

/** A registered interest in one invocation's completion event; released when the wait ends. */
export interface CompletionWatch {
  release(): void;
}

/**
 * The port between processes: jobs to the executors of a pool, completion events to the processes
 * that wait for them, cancel events to everyone.
 */
export interface JobBus {
  /**
   * Resolves once the broker holds the job (publisher confirm); rejects when it cannot. With
   * `awaitReply` (sync calls) the executor answers this publisher directly as well (RabbitMQ direct
   * reply-to); the reply reaches the onCompletion listeners of this bus only.
   */
  publish(job: JobMessage, options?: PublishOptions): Promise<void>;
  /** Sends a completion event straight to the publisher waiting at `replyTo` (at most once). */
  reply(replyTo: string, event: CompletionEvent): Promise<void>;
  consume(pool: string, concurrency: number, handler: JobHandler, options?: ConsumeOptions): Promise<Subscription>;
  /** Sends a completion event to every process watching its invocation (none is fine). */
  publishCompletion(event: CompletionEvent): Promise<void>;
  /**
   * Routes the completion events of `invocationId` to this bus's onCompletion listeners until released;
   * resolves once they are routed (register it before reading the store, or an event can slip between).
   * `directReply`: the job was published with `awaitReply` by this bus, so the reply is expected
   * instead; the bus routes the events here as well only if that reply can no longer come (its job was
   * not published, or the connection it was expected on was lost), and then calls `onPromoted`: the
   * waiter must tell the store it waits (InvocationStore.watch), or no event may be published for it.
   * The protocol that drives these calls: libs/use-cases completion-routing.
   */
  watchCompletion(invocationId: string, options?: { directReply?: boolean; onPromoted?: () => void }): Promise<CompletionWatch>;
  /** Hears the completion events of the invocations watched through this bus, and its direct replies. */
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
