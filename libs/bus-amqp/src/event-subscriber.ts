import { randomBytes } from 'node:crypto';
import type { Subscription } from '@gi/contracts';
import type { Decoded } from '@gi/contracts';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { BusLogger } from './amqp-bus.options';
import type { AmqpSession } from './amqp-session';

export interface SubscriberSettings {
  /** The exchange listened to; each attach binds a fresh queue named after it. */
  exchange: string;
  /** The routing keys to bind at each attach ('' for a fanout); more are bound and unbound as needed. */
  keys: () => Iterable<string>;
  /** Wait before listening again after the broker closed the channel on a live connection. */
  reattachDelayMs: number;
  logger: BusLogger;
}

/** What an event exchange carries: an event with the invocation it is about. */
export interface BusEvent {
  kind: string;
  invocationId: string;
}

/**
 * One listener of an event exchange (completions by partition, cancellations by fanout): an exclusive,
 * auto-deleted queue bound to the exchange with the keys asked for, consumed without acks. Events are
 * hints (the store holds the truth), so the few sent while the connection is down are simply missed; a
 * new queue is bound after each reconnect.
 */
export class EventSubscriber<T extends BusEvent> implements Subscription {
  private queue: string | null = null;
  private session: AmqpSession | null = null;
  private attaching: Promise<void> | null = null;
  private channel: Channel | null = null;
  private reattachTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly listener: (event: T) => void,
    private readonly decode: (content: Buffer) => Decoded<T>,
    private readonly settings: SubscriberSettings,
    private readonly onClosed: (subscriber: EventSubscriber<T>) => void,
  ) {}

  /** Resolves once the queue is bound, so events published afterwards reach the listener. */
  attach(session: AmqpSession): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.session === session && this.attaching) return this.attaching;
    this.session = session;
    const attaching = this.open(session);
    this.attaching = attaching;
    attaching.catch(() => {
      if (this.attaching === attaching) this.attaching = null;
    });
    return attaching;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reattachTimer) clearTimeout(this.reattachTimer);
    await this.attaching?.catch(() => undefined);
    const channel = this.channel;
    this.channel = null;
    // Closing the channel ends the consumer; the exclusive queue goes with it (auto-delete).
    if (channel) await channel.close().catch(() => undefined);
    this.onClosed(this);
  }

  private async open(session: AmqpSession): Promise<void> {
    const channel = await session.model.createChannel();
    channel.on('error', (err: Error) => this.settings.logger.warn({ err, exchange: this.settings.exchange }, 'listening channel closed by the broker'));
    channel.on('close', () => {
      if (this.channel !== channel) return;
      this.channel = null;
      this.attaching = null;
      if (!this.closed) this.scheduleReattach(session);
    });
    try {
      // Exclusive queues belong to their connection, so each attach takes a fresh name.
      const queue = `${this.settings.exchange}.${randomBytes(8).toString('hex')}`;
      await channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
      for (const key of this.settings.keys()) await channel.bindQueue(queue, this.settings.exchange, key);
      this.queue = queue;
      this.channel = channel;
      await channel.consume(queue, (message) => this.onMessage(channel, message), { noAck: true });
    } catch (err) {
      await channel.close().catch(() => undefined);
      throw err;
    }
  }

  /** Routes `key` to this listener too; resolves once bound (at once while detached: the next attach binds it). */
  async bind(key: string): Promise<void> {
    await this.attaching?.catch(() => undefined);
    const { channel, queue } = this;
    if (channel && queue) await channel.bindQueue(queue, this.settings.exchange, key);
  }

  async unbind(key: string): Promise<void> {
    await this.attaching?.catch(() => undefined);
    const { channel, queue } = this;
    if (channel && queue) await channel.unbindQueue(queue, this.settings.exchange, key);
  }

  /** A lost connection is the reconnect's business; this covers a channel the broker closed alone. */
  private scheduleReattach(session: AmqpSession): void {
    if (this.reattachTimer) return;
    this.reattachTimer = setTimeout(() => {
      this.reattachTimer = null;
      if (this.closed || !session.alive || this.session !== session || this.channel) return;
      this.attach(session).catch((err: unknown) => {
        this.settings.logger.warn({ err, exchange: this.settings.exchange }, 'could not listen again; retrying');
        this.scheduleReattach(session);
      });
    }, this.settings.reattachDelayMs);
  }

  private onMessage(channel: Channel, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (its queue was deleted): listen again on a new queue.
      if (this.channel === channel) void channel.close().catch(() => undefined);
      return;
    }
    if (this.closed) return;
    const decoded = this.decode(message.content);
    if (!decoded.ok) {
      this.settings.logger.warn({ reason: decoded.reason, exchange: this.settings.exchange }, 'malformed event ignored');
      return;
    }
    this.deliver(decoded.value);
  }

  /** Hands an event to the listener (also used for direct replies, which arrive on the publishing channel). */
  deliver(event: T): void {
    if (this.closed) return;
    try {
      this.listener(event);
    } catch (err) {
      this.settings.logger.error({ err, invocationId: event.invocationId, kind: event.kind }, 'event listener threw');
    }
  }
}
