import { InFlight, isTerminal, isValidName, unavailable } from '@gi/domain';
import type { CancelEvent, CompletionEvent, CompletionWatch, ConsumeOptions, JobBus, JobHandler, JobMessage, PublishOptions, Subscription } from '@gi/contracts';
import { connect } from 'amqplib';
import type { ChannelModel, RecoveringChannelModel } from 'amqplib';
import { connectionUrl, resolveBusOptions } from './amqp-bus.options';
import type { AmqpJobBusOptions, ResolvedBusOptions } from './amqp-bus.options';
import { AmqpSession, DIRECT_REPLY_TO } from './amqp-session';
import { busNames, busTopology, declareTopology, laneOf, laneQueueName, laneRoutingKey, LANES } from './amqp-topology';
import type { BusNames, Topology } from './amqp-topology';
import { decodeCancel, decodeCompletion, encodeCancel, encodeCompletion, encodeJob } from '@gi/contracts';
import { completionPartition, PartitionInterest } from './completion-partitions';
import { EventSubscriber } from './event-subscriber';
import type { ConfirmPublisher, PublishRequest } from './confirm-publisher';
import { JobConsumer } from './job-consumer';

/** After the broker closes a channel on a live connection, wait this long before using it again. */
const REATTACH_DELAY_MS = 500;
const PING_TIMEOUT_MS = 2000;
/** A completion partition nobody waits in stays bound this long, so steady traffic does not rebind it per call. */
const PARTITION_LINGER_MS = 10_000;

type Phase = 'open' | 'draining' | 'closed';

/**
 * The job bus over RabbitMQ. Jobs go through a direct exchange to the durable quorum queues of their
 * pool (delivery limit, dead-letter exchange and queue): the first lane, or the backlog lane for a bot
 * with many jobs in flight (amqp-topology.ts). Completion events go through a direct exchange by
 * partition of the invocation id, to the listeners of the processes that wait in that partition
 * (watchCompletion); a sync caller's gateway gets its reply directly instead (who sends what, and when:
 * libs/use-cases completion-routing). Cancellations go through
 * a fanout, to an exclusive queue per listener. Every publish waits for its own broker confirm, with any
 * number in flight. A lost connection is re-established with backoff, the topology declared again,
 * and consumers and listeners resume; meanwhile publishing fails at once (the store plus the sweeper
 * cover the gap) instead of waiting for the broker to come back.
 */
export class AmqpJobBus implements JobBus {
  /** Connects (a few retries), declares the topology; rejects when the broker cannot be reached. */
  static async connect(options: AmqpJobBusOptions): Promise<AmqpJobBus> {
    const bus = new AmqpJobBus(resolveBusOptions(options));
    await bus.start();
    return bus;
  }

  readonly names: BusNames;
  /** A job is handed out at most this many times before the broker dead-letters it. */
  readonly maxDeliveries: number;
  private readonly options: ResolvedBusOptions;
  private readonly brokerAddress: string;
  private readonly pools: Set<string>;
  private readonly consumers = new Set<JobConsumer>();
  private readonly subscribers = new Set<EventSubscriber<CompletionEvent>>();
  private readonly cancelSubscribers = new Set<EventSubscriber<CancelEvent>>();
  private readonly interest: PartitionInterest;
  /** Sessions set up so far: from the second on, direct replies expected on an earlier one are lost. */
  private sessionsStarted = 0;
  private readonly inFlight = new InFlight();
  private readonly reconnectListeners = new Set<() => void>();
  private connection: RecoveringChannelModel | null = null;
  private session: AmqpSession | null = null;
  private phase: Phase = 'open';
  private closing: Promise<void> | null = null;

  /** Completion events already encoded, while something still holds them. */
  private readonly encodedCompletions = new WeakMap<CompletionEvent, Buffer>();

  private constructor(options: ResolvedBusOptions) {
    this.options = options;
    this.names = busNames(options.prefix);
    this.maxDeliveries = options.maxDeliveries;
    this.pools = new Set(options.pools);
    this.brokerAddress = connectionUrl(options).display;
    this.interest = new PartitionInterest(
      { bind: (key) => this.bindPartition(key), unbind: (key) => this.unbindPartition(key) },
      PARTITION_LINGER_MS,
    );
  }

  /** To the pool's first lane, or to its backlog lane when the bot has many jobs in flight (`backlog`). */
  async publish(job: JobMessage, options: PublishOptions = {}): Promise<void> {
    const content = encodeJob(job);
    if (this.phase !== 'open') throw unavailable('The message bus is shutting down; the job was not published.');
    this.pools.add(job.pool);
    const reply = options.awaitReply ? { replyTo: DIRECT_REPLY_TO, correlationId: job.invocationId } : {};
    const routingKey = laneRoutingKey(job.pool, laneOf(options.backlog));
    const sent = this.inFlight.track(this.send({ exchange: this.names.jobs, routingKey, content, type: 'job', persistent: true, mandatory: true, ...reply }, job.pool));
    if (!options.awaitReply) return sent;
    try {
      await sent;
    } catch (err) {
      // The sweeper publishes it again, without this reply address: its waits must hear the partition.
      await this.interest.promoteStandbyOf(job.invocationId);
      throw err;
    }
  }

  async reply(replyTo: string, event: CompletionEvent): Promise<void> {
    if (this.phase === 'closed') throw unavailable('The message bus is closed; the reply was not sent.');
    // Through the default exchange to the waiting publisher's channel; gone publishers simply miss it.
    const content = this.completionContent(event);
    return this.inFlight.track(this.sendReply(replyTo, content, event.invocationId));
  }

  async watchCompletion(invocationId: string, options: { directReply?: boolean; onPromoted?: () => void } = {}): Promise<CompletionWatch> {
    return this.interest.watch(invocationId, options.directReply ? { onPromoted: options.onPromoted } : null);
  }

  /**
   * A direct reply: handed to this bus's own completion listeners. One that says the run suspended
   * (a durable run's long wait) is no outcome: its outcome will come from whichever executor resumes
   * it, without a reply address, so the waits for it are routed by partition from now on.
   */
  private deliverDirectReply(content: Buffer): void {
    const decoded = decodeCompletion(content);
    if (!decoded.ok) return this.options.logger.warn({ reason: decoded.reason }, 'malformed direct reply ignored');
    if (!isTerminal(decoded.value.status)) {
      this.interest.promoteStandbyOf(decoded.value.invocationId).catch((err) => this.options.logger.warn({ err }, 'the waits of a suspended run could not be routed by partition; they end at their deadline'));
      return;
    }
    for (const subscriber of this.subscribers) subscriber.deliver(decoded.value);
  }

  /**
   * A completion's message body, encoded once: a sync outcome goes out twice (the direct reply and its
   * partition), and the event now carries the outcome.
   */
  private completionContent(event: CompletionEvent): Buffer {
    let content = this.encodedCompletions.get(event);
    if (!content) this.encodedCompletions.set(event, (content = encodeCompletion(event)));
    return content;
  }

  async publishCompletion(event: CompletionEvent): Promise<void> {
    const content = this.completionContent(event);
    // Handlers still finishing while the bus drains may announce their outcome.
    if (this.phase === 'closed') throw unavailable('The message bus is closed; the completion event was not published.');
    // Hints only, so not persisted; nobody waiting in the partition is the common case, so not mandatory.
    const routingKey = completionPartition(event.invocationId);
    return this.inFlight.track(this.send({ exchange: this.names.completions, routingKey, content, type: 'completed', persistent: false, mandatory: false }));
  }

  async publishCancel(event: CancelEvent): Promise<void> {
    const content = encodeCancel(event);
    if (this.phase === 'closed') throw unavailable('The message bus is closed; the cancellation was not published.');
    // A hint like completions: the store's Cancelled status is what every executor finally goes by.
    return this.inFlight.track(this.send({ exchange: this.names.cancellations, routingKey: '', content, type: 'cancel', persistent: false, mandatory: false }));
  }

  async consume(pool: string, concurrency: number, handler: JobHandler, options: ConsumeOptions = {}): Promise<Subscription> {
    if (this.phase !== 'open') throw new Error('The message bus is closed; cannot consume.');
    if (!isValidName(pool)) throw new Error(`Pool name "${pool}" is invalid: use letters, digits, '_', '.', '-'.`);
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`Consumer concurrency must be a positive integer, got ${concurrency}.`);
    this.pools.add(pool);
    const { requeueDelayMs, logger, onMalformed } = this.options;
    const settings = { names: this.names, requeueDelayMs, reattachDelayMs: REATTACH_DELAY_MS, logger, onMalformed };
    const perBot = Math.min(concurrency, options.perBot ?? concurrency);
    const consumer = new JobConsumer(pool, concurrency, perBot, handler, settings, (c) => this.consumers.delete(c));
    this.consumers.add(consumer);
    await this.attachNow(consumer);
    return consumer;
  }

  async onCompletion(listener: (event: CompletionEvent) => void): Promise<Subscription> {
    if (this.phase !== 'open') throw new Error('The message bus is closed; cannot listen for completions.');
    const settings = { exchange: this.names.completions, keys: () => this.interest.keys(), reattachDelayMs: REATTACH_DELAY_MS, logger: this.options.logger };
    const subscriber = new EventSubscriber(listener, decodeCompletion, settings, (s) => this.subscribers.delete(s));
    this.subscribers.add(subscriber);
    await this.attachNow(subscriber);
    return subscriber;
  }

  async onCancel(listener: (event: CancelEvent) => void): Promise<Subscription> {
    if (this.phase !== 'open') throw new Error('The message bus is closed; cannot listen for cancellations.');
    const settings = { exchange: this.names.cancellations, keys: () => [''], reattachDelayMs: REATTACH_DELAY_MS, logger: this.options.logger };
    const subscriber = new EventSubscriber(listener, decodeCancel, settings, (s) => this.cancelSubscribers.delete(s));
    this.cancelSubscribers.add(subscriber);
    await this.attachNow(subscriber);
    return subscriber;
  }

  /**
   * Calls `listener` each time the connection is back after it was lost, once its topology, listeners
   * and consumers are in place again (a gateway then publishes what failed meanwhile). Returns the way
   * to stop.
   */
  onReconnected(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => void this.reconnectListeners.delete(listener);
  }

  /** True while connected to the broker (readiness). */
  isConnected(): boolean {
    return this.phase !== 'closed' && this.session?.alive === true;
  }

  /** True while the broker refuses publishes (memory or disk alarm); publishing then fails at once. */
  isBlocked(): boolean {
    return this.session?.blockedReason != null;
  }

  /** A round trip to the broker: connected and answering. */
  async ping(): Promise<boolean> {
    const session = this.session;
    if (!session?.alive || this.phase === 'closed') return false;
    try {
      await withDeadline(
        session.adminChannel().then((channel) => channel.checkExchange(this.names.jobs)),
        PING_TIMEOUT_MS,
        'The message broker did not answer in time.',
      );
      return true;
    } catch {
      return false;
    }
  }

  /** Jobs waiting in a pool's lanes (ready, not yet handed out); null when the broker does not answer. */
  async queueDepth(pool: string): Promise<number | null> {
    const session = this.session;
    if (!session?.alive || this.phase === 'closed') return null;
    try {
      const channel = await session.adminChannel();
      const counts = LANES.map((lane) => channel.checkQueue(laneQueueName(this.names, pool, lane)).then((ok) => ok.messageCount));
      const depths = await withDeadline(Promise.all(counts), PING_TIMEOUT_MS, 'The message broker did not answer in time.');
      return depths.reduce((sum, depth) => sum + depth, 0);
    } catch {
      return null;
    }
  }

  /** The broker objects of this bus (for the pools used so far), as data. */
  topology(): Topology {
    return busTopology(this.names, this.pools, this.maxDeliveries);
  }

  /** Jobs and events sent but not yet confirmed. */
  get publishesInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * Shuts down in order: refuse new jobs and let those in flight be confirmed; stop consuming and
   * wait for running handlers (they may still announce completions); close channels, then the
   * connection.
   */
  close(): Promise<void> {
    if (!this.closing) this.closing = this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.phase = 'draining';
    await this.inFlight.settled();
    await Promise.all([...this.consumers].map((consumer) => consumer.close()));
    await Promise.all([...this.subscribers, ...this.cancelSubscribers].map((subscriber) => subscriber.close()));
    this.phase = 'closed';
    this.interest.clear();
    await this.inFlight.settled();
    const session = this.session;
    this.session = null;
    await session?.closeChannels();
    await this.connection?.close().catch(() => undefined);
  }

  private async start(): Promise<void> {
    const { logger } = this.options;
    const connection = await connect(connectionUrl(this.options).url, {
      // Nagle's algorithm delays small frames such as confirms by tens of milliseconds.
      noDelay: true,
      timeout: this.options.connectTimeoutMs,
      clientProperties: { connection_name: this.options.connectionName },
      recovery: {
        initialDelay: this.options.reconnectInitialDelayMs,
        maxDelay: this.options.reconnectMaxDelayMs,
        initialMaxRetries: this.options.initialRetries,
        maxRetries: Infinity,
        waitForConnect: false,
        setup: (model: ChannelModel) => this.setup(model),
      },
    });
    this.connection = connection;
    connection.on('connect', () => logger.info({ broker: this.brokerAddress }, 'connected to the message broker'));
    connection.on('disconnect', (err: Error) => logger.warn({ broker: this.brokerAddress, reason: err.message }, 'lost the message broker connection; reconnecting'));
    connection.on('connect-failed', (err: Error) => logger.warn({ broker: this.brokerAddress, reason: err.message }, 'could not connect to the message broker'));
    connection.on('reconnect-scheduled', (info: { attempt: number; delay: number }) => logger.info(info, 'reconnecting to the message broker'));
    // The session of each connection logs its errors; this listener only keeps them from being thrown.
    connection.on('error', () => undefined);
    try {
      await connection.waitForConnect();
    } catch (err) {
      await connection.close().catch(() => undefined);
      throw this.startError(err);
    }
  }

  private startError(err: unknown): Error {
    const reason = err instanceof Error ? err.message : String(err);
    if (/PRECONDITION_FAILED - inequivalent arg/.test(reason)) {
      // RabbitMQ never changes the arguments of an existing queue (e.g. a new maxDeliveries).
      return new Error(
        `The queues on the message broker at ${this.brokerAddress} were declared with other settings than this service's ` +
          `(keep the old settings, or drain and delete the queues): ${reason}`,
      );
    }
    return new Error(`Cannot connect to the message broker at ${this.brokerAddress}: ${reason}`);
  }

  /** Runs on every (re)connect; the connection counts as up once topology, publisher, listeners and consumers are back. */
  private async setup(model: ChannelModel): Promise<void> {
    const session = new AmqpSession(model, {
      names: this.names,
      maxDeliveries: this.maxDeliveries,
      publishTimeoutMs: this.options.publishTimeoutMs,
      logger: this.options.logger,
      onDirectReply: (content) => this.deliverDirectReply(content),
    });
    model.on('close', () => {
      if (this.session === session) this.session = null;
    });
    const pools = [...this.pools];
    await declareTopology(await session.adminChannel(), busTopology(this.names, pools, this.maxDeliveries));
    session.markDeclared(pools);
    await session.publisher();
    await this.attachAll(session);
    this.session = session;
    // Consumers and listeners registered while the above ran (attach is idempotent per session).
    await this.attachAll(session);
    if (++this.sessionsStarted > 1) {
      // Direct replies to the previous connection's channel go nowhere now: route those waits by partition.
      await this.interest.promoteStandby();
      // After this setup has returned and the connection counts as up.
      setImmediate(() => this.announceReconnect());
    }
  }

  private announceReconnect(): void {
    for (const listener of this.reconnectListeners) {
      try {
        listener();
      } catch (err) {
        this.options.logger.error({ err }, 'reconnect listener threw');
      }
    }
  }

  /**
   * Routes a partition to every completion listener. Never rejects: a binding that failed costs the
   * waits of that partition their wake-up (they read the store when their time is up), not their call.
   */
  private async bindPartition(key: string): Promise<void> {
    const bound = Promise.all([...this.subscribers].map((subscriber) => subscriber.bind(key)));
    try {
      await withDeadline(bound, this.options.publishTimeoutMs, 'The message broker did not bind a completion partition in time.');
    } catch (err) {
      this.options.logger.warn({ err, partition: key }, 'could not listen to a completion partition; its waits end at their deadline');
    }
  }

  private async unbindPartition(key: string): Promise<void> {
    await Promise.all([...this.subscribers].map((subscriber) => subscriber.unbind(key))).catch((err: unknown) => {
      this.options.logger.warn({ err, partition: key }, 'could not stop listening to a completion partition');
    });
  }

  /** Listeners first, so events of the jobs that consumers then finish are heard. */
  private async attachAll(session: AmqpSession): Promise<void> {
    await Promise.all([...this.subscribers, ...this.cancelSubscribers].map((subscriber) => subscriber.attach(session)));
    await Promise.all([...this.consumers].map((consumer) => consumer.attach(session)));
  }

  /** Attaches at once when connected; otherwise the next reconnect does. */
  private async attachNow(target: JobConsumer | EventSubscriber<CompletionEvent> | EventSubscriber<CancelEvent>): Promise<void> {
    const session = this.session;
    if (!session?.alive) return;
    try {
      await target.attach(session);
    } catch (err) {
      // A connection lost meanwhile is not the caller's problem: the reconnect attaches it.
      if (!session.alive) return;
      await target.close();
      throw err;
    }
  }

  private async send(request: PublishRequest, pool?: string): Promise<void> {
    const session = this.usableSession();
    if (pool !== undefined && !session.isDeclared(pool)) {
      await withDeadline(session.ensurePool(pool), this.options.publishTimeoutMs, `The message broker did not declare the queue of pool "${pool}" in time.`);
    }
    const publisher: ConfirmPublisher =
      session.openPublisher() ?? (await withDeadline(session.publisher(), this.options.publishTimeoutMs, 'The message broker did not open a channel in time.'));
    await publisher.publish(request);
  }

  /** A direct reply: handed to the connection, not confirmed (ReplyPublisher says why). */
  private async sendReply(replyTo: string, content: Buffer, correlationId: string): Promise<void> {
    const session = this.usableSession();
    const replier = session.openReplier() ?? (await withDeadline(session.replier(), this.options.publishTimeoutMs, 'The message broker did not open a channel in time.'));
    await replier.publish(replyTo, content, correlationId);
  }

  private usableSession(): AmqpSession {
    const session = this.session;
    if (!session?.alive) throw unavailable('The message broker is not reachable; the message was not published. Try again shortly.');
    if (session.blockedReason !== null) {
      throw unavailable(`The message broker refuses messages for now (${session.blockedReason}); the message was not published. Try again shortly.`);
    }
    return session;
  }
}

function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(unavailable(message)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
