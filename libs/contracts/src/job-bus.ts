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

export interface Subscription {
  /** Stops taking new messages and waits for running handlers. */
  close(): Promise<void>;
}

/** The port between processes: jobs to the executors of a pool, completion and cancel events to everyone. */
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
