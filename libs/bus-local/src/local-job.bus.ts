import { InFlight } from '@gi/domain';
import type { CancelEvent, CompletionEvent, CompletionWatch, JobBus, JobHandler, JobMessage, Subscription } from '@gi/contracts';

interface Delivery {
  job: JobMessage;
  /** 1 on the first delivery, like the broker's x-delivery-count + 1. */
  deliveryCount: number;
}

/** Consumes jobs of every pool (the embedded deployment runs all pools in one process). */
export const ALL_POOLS = '*';

interface Consumer {
  pool: string;
  concurrency: number;
  handler: JobHandler;
  running: InFlight;
  closed: boolean;
}

/**
 * The in-process bus of the embedded deployment. It holds nothing durable: the store is the source of
 * truth, and startup recovery republishes every invocation that was not finished.
 */
export class LocalJobBus implements JobBus {
  private readonly queue: Delivery[] = [];
  private readonly consumers = new Set<Consumer>();
  private readonly completionListeners = new Set<(event: CompletionEvent) => void>();
  private readonly cancelListeners = new Set<(event: CancelEvent) => void>();
  /** Jobs a handler gave up on; kept for inspection like a dead-letter queue. */
  readonly deadLetters: JobMessage[] = [];
  private closed = false;
  /** Every pool a job was published to, for `depthByPool`. */
  private readonly pools = new Set<string>();

  async publish(job: JobMessage): Promise<void> {
    if (this.closed) throw new Error('The bus is closed.');
    this.pools.add(job.pool);
    this.enqueue({ job, deliveryCount: 1 });
  }

  private enqueue(delivery: Delivery): void {
    this.queue.push(delivery);
    this.dispatch();
  }

  async consume(pool: string, concurrency: number, handler: JobHandler): Promise<Subscription> {
    const consumer: Consumer = { pool, concurrency, handler, running: new InFlight(), closed: false };
    this.consumers.add(consumer);
    this.dispatch();
    return {
      close: async () => {
        consumer.closed = true;
        this.consumers.delete(consumer);
        await consumer.running.settled();
      },
    };
  }

  async publishCompletion(event: CompletionEvent): Promise<void> {
    for (const listener of this.completionListeners) queueMicrotask(() => listener(event));
  }

  /** In one process every completion event reaches every listener: nothing to route. */
  async watchCompletion(_invocationId: string): Promise<CompletionWatch> {
    return { release: () => undefined };
  }

  async onCompletion(listener: (event: CompletionEvent) => void): Promise<Subscription> {
    this.completionListeners.add(listener);
    return { close: async () => void this.completionListeners.delete(listener) };
  }

  async publishCancel(event: CancelEvent): Promise<void> {
    if (this.closed) throw new Error('The bus is closed.');
    for (const listener of this.cancelListeners) queueMicrotask(() => listener(event));
  }

  async onCancel(listener: (event: CancelEvent) => void): Promise<Subscription> {
    this.cancelListeners.add(listener);
    return { close: async () => void this.cancelListeners.delete(listener) };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.running.settled()));
    this.consumers.clear();
    this.completionListeners.clear();
    this.cancelListeners.clear();
  }

  /** In one process every completion event already reaches every listener: nothing to send. */
  async reply(_replyTo: string, _event: CompletionEvent): Promise<void> {}

  isBlocked(): boolean {
    return false;
  }

  async queueDepth(pool: string): Promise<number | null> {
    return this.queue.filter((delivery) => delivery.job.pool === pool).length;
  }

  /** Jobs waiting for a free consumer, by pool: every pool published to, 0 when none waits. */
  depthByPool(): Map<string, number> {
    const depths = new Map<string, number>([...this.pools].map((pool) => [pool, 0]));
    for (const delivery of this.queue) depths.set(delivery.job.pool, (depths.get(delivery.job.pool) ?? 0) + 1);
    return depths;
  }

  /** Jobs waiting for a free consumer. */
  get depth(): number {
    return this.queue.length;
  }

  private dispatch(): void {
    for (let i = 0; i < this.queue.length; ) {
      const delivery = this.queue[i];
      const consumer = this.freeConsumerFor(delivery.job.pool);
      if (!consumer) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.deliver(consumer, delivery);
    }
  }

  private freeConsumerFor(pool: string): Consumer | undefined {
    for (const consumer of this.consumers) {
      if (!consumer.closed && (consumer.pool === pool || consumer.pool === ALL_POOLS) && consumer.running.size < consumer.concurrency) {
        return consumer;
      }
    }
    return undefined;
  }

  private deliver(consumer: Consumer, delivery: Delivery): void {
    void consumer.running.track(this.handle(consumer, delivery)).then(() => {
      if (!this.closed) this.dispatch();
    });
  }

  /** Hands the job to its consumer and acts on the decision; never rejects. */
  private async handle(consumer: Consumer, delivery: Delivery): Promise<void> {
    let decision: Awaited<ReturnType<JobHandler>>;
    try {
      decision = await consumer.handler(delivery.job, { deliveryCount: delivery.deliveryCount });
    } catch {
      decision = 'requeue';
    }
    if (decision === 'dead-letter') this.deadLetters.push(delivery.job);
    // A requeued job waits a moment so a failing store is not hammered in a tight loop.
    if (decision === 'requeue' && !this.closed) {
      const again = { job: delivery.job, deliveryCount: delivery.deliveryCount + 1 };
      setTimeout(() => !this.closed && this.enqueue(again), 100).unref();
    }
  }
}
