import { FairQueue, InFlight, KeyCounts } from '@gi/domain';
import type { CancelEvent, CompletionEvent, CompletionWatch, ConsumeOptions, JobBus, JobHandler, JobMessage, PublishOptions, Subscription } from '@gi/contracts';

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
  /** Jobs of one bot it runs at once, at most. */
  perBot: number;
  handler: JobHandler;
  running: InFlight;
  /** Its jobs running, by bot. */
  byBot: KeyCounts;
  closed: boolean;
}

/**
 * The in-process bus of the embedded deployment. It holds nothing durable: the store is the source of
 * truth, and startup recovery republishes every invocation that was not finished. Jobs wait in turns
 * between bots (FairQueue), and a consumer runs at most its `perBot` of one bot's at once.
 */
export class LocalJobBus implements JobBus {
  private readonly queue = new FairQueue<Delivery>((delivery) => delivery.job.botId);
  private readonly consumers = new Set<Consumer>();
  private readonly completionListeners = new Set<(event: CompletionEvent) => void>();
  private readonly cancelListeners = new Set<(event: CancelEvent) => void>();
  /** Jobs a handler gave up on; kept for inspection like a dead-letter queue. */
  readonly deadLetters: JobMessage[] = [];
  private closed = false;
  /** Every pool a job was published to, for `depthByPool`. */
  private readonly pools = new Set<string>();

  /** One queue in memory, fair by bot already: a bot's backlog (`options.backlog`) needs no lane of its own. */
  async publish(job: JobMessage, _options?: PublishOptions): Promise<void> {
    if (this.closed) throw new Error('The bus is closed.');
    this.pools.add(job.pool);
    this.enqueue({ job, deliveryCount: 1 });
  }

  private enqueue(delivery: Delivery): void {
    this.queue.push(delivery);
    this.dispatch();
  }

  async consume(pool: string, concurrency: number, handler: JobHandler, options: ConsumeOptions = {}): Promise<Subscription> {
    const perBot = Math.min(concurrency, options.perBot ?? concurrency);
    const consumer: Consumer = { pool, concurrency, perBot, handler, running: new InFlight(), byBot: new KeyCounts(), closed: false };
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
    let depth = 0;
    for (const delivery of this.queue) if (delivery.job.pool === pool) depth++;
    return depth;
  }

  /** Jobs waiting for a free consumer, by pool: every pool published to, 0 when none waits. */
  depthByPool(): Map<string, number> {
    const depths = new Map<string, number>([...this.pools].map((pool) => [pool, 0]));
    for (const delivery of this.queue) depths.set(delivery.job.pool, (depths.get(delivery.job.pool) ?? 0) + 1);
    return depths;
  }

  /** Jobs waiting for a free consumer. */
  get depth(): number {
    return this.queue.size;
  }

  /** Starts waiting jobs while a consumer of their pool has room, for them and for their bot. */
  private dispatch(): void {
    while (this.queue.size > 0 && this.anyRoom()) {
      let taker: Consumer | undefined;
      const delivery = this.queue.take(
        (botId) => this.anyRoom(botId),
        (waiting) => (taker = this.freeConsumerFor(waiting.job)) !== undefined,
      );
      if (!delivery || !taker) return;
      this.deliver(taker, delivery);
    }
  }

  /** Whether some consumer can start another job (of `botId`, when given). */
  private anyRoom(botId?: string): boolean {
    for (const consumer of this.consumers) if (this.hasRoom(consumer, botId)) return true;
    return false;
  }

  private hasRoom(consumer: Consumer, botId?: string): boolean {
    return !consumer.closed && consumer.running.size < consumer.concurrency && (botId === undefined || consumer.byBot.of(botId) < consumer.perBot);
  }

  private freeConsumerFor(job: JobMessage): Consumer | undefined {
    for (const consumer of this.consumers) {
      if ((consumer.pool === job.pool || consumer.pool === ALL_POOLS) && this.hasRoom(consumer, job.botId)) return consumer;
    }
    return undefined;
  }

  private deliver(consumer: Consumer, delivery: Delivery): void {
    const { botId } = delivery.job;
    consumer.byBot.add(botId);
    void consumer.running.track(this.handle(consumer, delivery)).then(() => {
      consumer.byBot.remove(botId);
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
