import type { Channel, ChannelModel } from 'amqplib';
import type { BusLogger } from './amqp-bus.options';
import { declareTopology, poolTopology } from './amqp-topology';
import type { BusNames } from './amqp-topology';
import { brokerSocket, coalesceWrites } from './coalesced-writes';
import { ConfirmPublisher } from './confirm-publisher';

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
 * channel for publishing. A reconnect makes a new session; nothing of an old one is reused.
 * Channels a broker error closed are opened again on next use while the connection lives.
 */
export class AmqpSession {
  /** False once the connection closed. */
  alive = true;
  /** The broker's reason while it refuses publishes (resource alarm), else null. */
  blockedReason: string | null = null;
  private admin: Promise<Channel> | null = null;
  private publisherPromise: Promise<ConfirmPublisher> | null = null;
  /** The publisher once open, for the hot path (no await). */
  private openedPublisher: ConfirmPublisher | null = null;
  private readonly declaredPools = new Map<string, Promise<void>>();
  private readonly settledPools = new Set<string>();

  constructor(
    readonly model: ChannelModel,
    private readonly settings: SessionSettings,
  ) {
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
    if (!this.admin) {
      const opening = this.model.createChannel().then((channel) => {
        channel.on('error', (err: Error) => this.settings.logger.warn({ err }, 'declaration channel closed by the broker'));
        channel.on('close', () => {
          if (this.admin === opening) this.admin = null;
        });
        return channel;
      });
      opening.catch(() => {
        if (this.admin === opening) this.admin = null;
      });
      this.admin = opening;
    }
    return this.admin;
  }

  publisher(): Promise<ConfirmPublisher> {
    if (!this.publisherPromise) {
      const opening = this.model.createConfirmChannel().then(async (channel) => {
        channel.on('error', (err: Error) => this.settings.logger.warn({ err }, 'publishing channel closed by the broker'));
        // Direct reply-to needs the publishing channel itself to consume the replies.
        await channel.consume(DIRECT_REPLY_TO, (message) => message && this.settings.onDirectReply(message.content), { noAck: true });
        // A returned job means its pool queue is gone: declare it again on the next publish.
        const publisher = new ConfirmPublisher(channel, this.settings.publishTimeoutMs, (pool) => this.forgetPool(pool));
        channel.on('close', () => {
          if (this.publisherPromise === opening) this.publisherPromise = null;
          if (this.openedPublisher === publisher) this.openedPublisher = null;
        });
        this.openedPublisher = publisher;
        return publisher;
      });
      opening.catch(() => {
        if (this.publisherPromise === opening) this.publisherPromise = null;
      });
      this.publisherPromise = opening;
    }
    return this.publisherPromise;
  }

  openPublisher(): ConfirmPublisher | null {
    return this.openedPublisher?.isOpen ? this.openedPublisher : null;
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
    const [publisher, admin] = await Promise.allSettled([this.publisherPromise, this.admin]);
    this.publisherPromise = null;
    this.openedPublisher = null;
    this.admin = null;
    if (publisher.status === 'fulfilled' && publisher.value) await publisher.value.close();
    if (admin.status === 'fulfilled' && admin.value) await admin.value.close().catch(() => undefined);
  }
}
