import type { CompletionEvent, JobBus, JobHandler, JobMessage, Subscription } from '@gi/domain';

/** Consumes jobs of every pool (the embedded deployment runs all pools in one process). */
export const ALL_POOLS = '*';

interface Consumer {
  pool: string;
  concurrency: number;
  handler: JobHandler;
  running: Set<Promise<void>>;
  closed: boolean;
}

/**
 * The in-process bus of the embedded deployment. It holds nothing durable: the store is the source of
 * truth, and startup recovery republishes every invocation that was not finished.
 */
export class LocalJobBus implements JobBus {
  private readonly queue: JobMessage[] = [];
  private readonly consumers = new Set<Consumer>();
  private readonly completionListeners = new Set<(event: CompletionEvent) => void>();
  /** Jobs a handler gave up on; kept for inspection like a dead-letter queue. */
  readonly deadLetters: JobMessage[] = [];
  private closed = false;

  async publish(job: JobMessage): Promise<void> {
    if (this.closed) throw new Error('The bus is closed.');
    this.queue.push(job);
    this.dispatch();
  }

  async consume(pool: string, concurrency: number, handler: JobHandler): Promise<Subscription> {
    const consumer: Consumer = { pool, concurrency, handler, running: new Set(), closed: false };
    this.consumers.add(consumer);
    this.dispatch();
    return {
      close: async () => {
        consumer.closed = true;
        this.consumers.delete(consumer);
        await Promise.all(consumer.running);
      },
    };
  }

  async publishCompletion(event: CompletionEvent): Promise<void> {
    for (const listener of this.completionListeners) queueMicrotask(() => listener(event));
  }

  async onCompletion(listener: (event: CompletionEvent) => void): Promise<Subscription> {
    this.completionListeners.add(listener);
    return { close: async () => void this.completionListeners.delete(listener) };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].flatMap((c) => [...c.running]));
    this.consumers.clear();
    this.completionListeners.clear();
  }

  /** Jobs waiting for a free consumer. */
  get depth(): number {
    return this.queue.length;
  }

  private dispatch(): void {
    for (let i = 0; i < this.queue.length; ) {
      const job = this.queue[i];
      const consumer = this.freeConsumerFor(job.pool);
      if (!consumer) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.deliver(consumer, job);
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

  private deliver(consumer: Consumer, job: JobMessage): void {
    const run = (async () => {
      let decision: Awaited<ReturnType<JobHandler>>;
      try {
        decision = await consumer.handler(job);
      } catch {
        decision = 'requeue';
      }
      if (decision === 'dead-letter') this.deadLetters.push(job);
      // A requeued job waits a moment so a failing store is not hammered in a tight loop.
      if (decision === 'requeue' && !this.closed) setTimeout(() => void this.publish(job).catch(() => undefined), 100).unref();
    })();
    consumer.running.add(run);
    void run.finally(() => {
      consumer.running.delete(run);
      if (!this.closed) this.dispatch();
    });
  }
}
