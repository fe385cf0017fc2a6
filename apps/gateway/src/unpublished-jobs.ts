import type { JobBus, JobMessage } from '@gi/contracts';
import type { Clock } from '@gi/domain';
import type { Logger } from '@gi/observability';

export interface UnpublishedJobsOptions {
  bus: Pick<JobBus, 'publish'>;
  clock: Clock;
  logger: Logger;
  /** A job kept longer than this is the sweepers' (REPUBLISH_AFTER_SECONDS): they publish it from the store. */
  maxAgeMs: number;
  /** Jobs kept at most; beyond, the oldest is left to the sweepers. */
  capacity?: number;
}

/** Jobs published again at once, at most. */
const REPUBLISH_BATCH = 200;
const DEFAULT_CAPACITY = 100_000;

/**
 * The jobs this gateway stored but could not publish (the broker out of reach), published again as soon
 * as its connection is back (`republish`, on the bus's reconnect): their invocations then run within
 * seconds of the broker's return instead of waiting for a sweeper to find them. The store stays the
 * truth and the sweepers the backstop (a gateway that dies forgets what it kept): a job older than the
 * sweepers' republish age, or beyond the capacity, is theirs. A job published twice still runs once.
 */
export class UnpublishedJobs {
  private readonly jobs = new Map<string, { job: JobMessage; failedAt: number }>();
  private republishing: Promise<void> = Promise.resolve();

  constructor(private readonly options: UnpublishedJobsOptions) {}

  /** Keeps a job whose publish failed. */
  add(job: JobMessage): void {
    const capacity = this.options.capacity ?? DEFAULT_CAPACITY;
    this.jobs.delete(job.invocationId);
    this.jobs.set(job.invocationId, { job, failedAt: this.options.clock.now() });
    if (this.jobs.size > capacity) this.jobs.delete(this.jobs.keys().next().value as string);
  }

  get size(): number {
    return this.jobs.size;
  }

  /** Publishes what is kept (after one republish in progress, if any); a publish that fails again is kept again. */
  republish(): Promise<void> {
    this.republishing = this.republishing.then(() => this.publishKept());
    return this.republishing;
  }

  private async publishKept(): Promise<void> {
    const { bus, clock, logger, maxAgeMs } = this.options;
    const oldest = clock.now() - maxAgeMs;
    const kept = [...this.jobs.values()].filter(({ failedAt }) => failedAt >= oldest);
    this.jobs.clear();
    if (kept.length === 0) return;
    let published = 0;
    for (let start = 0; start < kept.length; start += REPUBLISH_BATCH) {
      await Promise.all(
        kept.slice(start, start + REPUBLISH_BATCH).map(async (entry) => {
          try {
            await bus.publish(entry.job);
            published++;
          } catch {
            if (!this.jobs.has(entry.job.invocationId)) this.jobs.set(entry.job.invocationId, entry);
          }
        }),
      );
    }
    logger.info({ published, kept: this.jobs.size }, 'jobs whose publish failed were published again');
  }
}
