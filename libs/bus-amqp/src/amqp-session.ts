import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import type { BusLogger } from './amqp-bus.options';
import { declareTopology, poolTopology } from './amqp-topology';
import type { BusNames } from './amqp-topology';
import { brokerSocket, coalesceWrites } from './coalesced-writes';
import { ConfirmPublisher } from './confirm-publisher';
import { ReplyPublisher } from './reply-publisher';

export interface SessionSettings {
  names: BusNames;
  maxDeliveries: number;
  publishTimeoutMs: number;
  logger: BusLogger;
  /** Direct replies arriving on the publishing channel (RabbitMQ's amq.rabbitmq.reply-to). */
  onDirectReply: (content: Buffer) => void;
}

/** RabbitMQ's pseudo-queue for direct replies: consumed without acks on the channel that publishes. */
export const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

/**
 * One broker connection and the channels the bus shares on it: one for declarations, one confirm
 * channel for publishing, one for direct replies (ReplyPublisher). A reconnect makes a new session;
 * nothing of an old one is reused. Channels a broker error closed are opened again on next use while
 * the connection lives (SharedChannel).
 */
export class AmqpSession {
  /** False once the connection closed. */
  alive = true;
  /** The broker's reason while it refuses publishes (resource alarm), else null. */
  blockedReason: string | null = null;
  private readonly admin: SharedChannel<Channel, Channel>;
  private readonly publishing: SharedChannel<ConfirmChannel, ConfirmPublisher>;
  private readonly replying: SharedChannel<Channel, ReplyPublisher>;
  private readonly declaredPools = new Map<string, Promise<void>>();
  private readonly settledPools = new Set<string>();

  constructor(
    readonly model: ChannelModel,
    private readonly settings: SessionSettings,
  ) {
    const { logger, publishTimeoutMs } = settings;
    this.admin = new SharedChannel(() => model.createChannel(), (channel) => channel, 'declaration channel closed by the broker', logger);
    this.publishing = new SharedChannel(
      () => model.createConfirmChannel(),
      async (channel) => {
        // Direct reply-to needs the publishing channel itself to consume the replies.
        await channel.consume(DIRECT_REPLY_TO, (message) => message && settings.onDirectReply(message.content), { noAck: true });
        // A returned job means its pool queue is gone: declare it again on the next publish.
        return new ConfirmPublisher(channel, publishTimeoutMs, (pool) => this.forgetPool(pool));
      },
      'publishing channel closed by the broker',
      logger,
    );
    this.replying = new SharedChannel(() => model.createChannel(), (channel) => new ReplyPublisher(channel, publishTimeoutMs), 'direct reply channel closed by the broker', logger);
    const socket = brokerSocket(model);
    if (socket) coalesceWrites(socket);
    model.on('close', () => {
      this.alive = false;
    });
    model.on('blocked', (reason: string) => {
      this.blockedReason = reason || 'blocked';
      settings.logger.warn({ reason }, 'message broker blocked publishing');
    });
    model.on('unblocked', () => {
      this.blockedReason = null;
      settings.logger.info({}, 'message broker unblocked publishing');
    });
    // Without a listener an 'error' event would throw; the close that follows drives recovery.
    model.on('error', (err: Error) => settings.logger.warn({ err }, 'message broker connection error'));
    model.on('handler-error', (err: Error, event: string) => settings.logger.error({ err, event }, 'bus event handler failed'));
  }

  /** The channel for declarations and checks. */
  adminChannel(): Promise<Channel> {
    return this.admin.get();
  }

  publisher(): Promise<ConfirmPublisher> {
    return this.publishing.get();
  }

  openPublisher(): ConfirmPublisher | null {
    return this.publishing.now();
  }

  replier(): Promise<ReplyPublisher> {
    return this.replying.get();
  }

  openReplier(): ReplyPublisher | null {
    return this.replying.now();
  }

  isDeclared(pool: string): boolean {
    return this.settledPools.has(pool);
  }

  /** Declares the queue of `pool` once per session (the first publish or consume of a pool pays one round trip). */
  ensurePool(pool: string): Promise<void> {
    let declared = this.declaredPools.get(pool);
    if (!declared) {
      declared = this.adminChannel().then((channel) => declareTopology(channel, poolTopology(this.settings.names, pool, this.settings.maxDeliveries)));
      const entry = declared;
      entry.then(
        () => {
          if (this.declaredPools.get(pool) === entry) this.settledPools.add(pool);
        },
        () => {
          if (this.declaredPools.get(pool) === entry) this.declaredPools.delete(pool);
        },
      );
      this.declaredPools.set(pool, declared);
    }
    return declared;
  }

  /** Declares the queue of `pool` now, whatever was declared before (a consumer starting over). */
  declarePool(pool: string): Promise<void> {
    this.forgetPool(pool);
    return this.ensurePool(pool);
  }

  /** Records pools the connect-time declaration already covered. */
  markDeclared(pools: Iterable<string>): void {
    for (const pool of pools) {
      this.declaredPools.set(pool, Promise.resolve());
      this.settledPools.add(pool);
    }
  }

  private forgetPool(pool: string): void {
    this.declaredPools.delete(pool);
    this.settledPools.delete(pool);
  }

  /** Closes the shared channels; consumers close their own first. */
  async closeChannels(): Promise<void> {
    const [publisher, replier, admin] = await Promise.all([this.publishing.forget(), this.replying.forget(), this.admin.forget()]);
    await publisher?.close();
    await replier?.close();
    await admin?.close().catch(() => undefined);
  }
}

/**
 * One channel the session shares: opened on first use, and opened again on the next use after the broker
 * closed it (while the connection lives). `wrap` makes what callers use of the opened channel.
 */
class SharedChannel<C extends Channel, T> {
  private opening: Promise<T> | null = null;
  /** What `opening` resolved to, while its channel is open: for the hot path, without an await. */
  private opened: T | null = null;

  constructor(
    private readonly open: () => Promise<C>,
    private readonly wrap: (channel: C) => T | Promise<T>,
    private readonly closedByBroker: string,
    private readonly logger: BusLogger,
  ) {}

  get(): Promise<T> {
    if (!this.opening) {
      const opening = this.open().then(async (channel) => {
        channel.on('error', (err: Error) => this.logger.warn({ err }, this.closedByBroker));
        channel.on('close', () => {
          if (this.opening !== opening) return;
          this.opening = null;
          this.opened = null;
        });
        const value = await this.wrap(channel);
        if (this.opening === opening) this.opened = value;
        return value;
      });
      opening.catch(() => {
        if (this.opening === opening) this.opening = null;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  now(): T | null {
    return this.opened;
  }

  /** Forgets the channel; resolves what was opened on it, if anything, for the caller to close. */
  async forget(): Promise<T | null> {
    const opening = this.opening;
    this.opening = null;
    this.opened = null;
    return opening ? opening.catch(() => null) : null;
  }
}
