import { FairQueue, InFlight, KeyCounts, SlotMap } from '@gi/domain';
import type { JobDecision, JobHandler, JobMessage, Subscription } from '@gi/contracts';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { BusLogger } from './amqp-bus.options';
import type { AmqpSession } from './amqp-session';
import { laneQueueName, LANES, BACKLOG_AFTER } from './amqp-topology';
import type { BusNames, Lane } from './amqp-topology';
import { decodeJob } from '@gi/contracts';

export interface ConsumerSettings {
  names: BusNames;
  requeueDelayMs: number;
  /** Wait before consuming again after the broker closed the channel on a live connection. */
  reattachDelayMs: number;
  logger: BusLogger;
  onMalformed: () => void;
}

/** One consumer channel; its deliveries are only ever settled on it, and not at all once it closed. */
interface ChannelState {
  channel: Channel;
  session: AmqpSession;
  open: boolean;
  /** Delivery tags handed out on this channel and not settled yet, in the order the broker gave them. */
  unsettled: number[];
  /** Acks decided in this turn of the event loop, sent together by flushAcks. */
  acksDue: SlotMap<number, ConsumeMessage>;
  flushScheduled: boolean;
}

interface Delivery {
  state: ChannelState;
  message: ConsumeMessage;
  job: JobMessage;
  deliveryCount: number;
}

/**
 * Consumes the lanes of one pool (amqp-topology.ts) on one channel with manual acks, and maps each
 * handler's decision to ack, nack with requeue, or nack without requeue (the queue dead-letters it).
 *
 * Each lane has a prefetch of its own: the backlog lane `concurrency`, the first lane as much plus
 * BACKLOG_AFTER, room for the first jobs of a bot that is at its cap. Deliveries wait here in turns
 * between bots (FairQueue) and at most `perBot` of one bot's run at once, so a bot's first jobs are
 * delivered past another bot's backlog and started before the rest of it.
 *
 * Acks decided in the same turn of the event loop go out together (flushAcks): about 35 µs of broker
 * CPU less per job on a quorum queue when they arrive in runs, measured against one ack per job. It
 * moves to the new connection after a reconnect; handlers still running from the old one finish, but
 * their messages were already handed back by the broker, so their decisions are not sent. Those
 * handlers still count against the concurrency, so a reconnect never runs more handlers at once than asked.
 */
export class JobConsumer implements Subscription {
  private session: AmqpSession | null = null;
  private attaching: Promise<void> | null = null;
  private current: ChannelState | null = null;
  private consumerTags: string[] = [];
  private readonly running = new InFlight();
  /** Running handlers by bot. */
  private readonly byBot = new KeyCounts();
  private readonly waiting = new FairQueue<Delivery>((delivery) => delivery.job.botId);
  private readonly sleepers = new Set<() => void>();
  private reattachTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(
    readonly pool: string,
    private readonly concurrency: number,
    /** Handlers of one bot's jobs running at once, at most. */
    private readonly perBot: number,
    private readonly handler: JobHandler,
    private readonly settings: ConsumerSettings,
    private readonly onClosed: (consumer: JobConsumer) => void,
  ) {}

  /** Starts consuming on `session`; idempotent per session. */
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

  close(): Promise<void> {
    if (!this.closing) this.closing = this.shutdown();
    return this.closing;
  }

  private async open(session: AmqpSession): Promise<void> {
    // Declared on every attach: after a broker-side cancel the queue may be gone.
    await session.declarePool(this.pool);
    const channel = await session.model.createChannel();
    const state: ChannelState = { channel, session, open: true, unsettled: [], acksDue: new SlotMap(), flushScheduled: false };
    channel.on('error', (err: Error) => this.settings.logger.warn({ err, pool: this.pool }, 'consumer channel closed by the broker'));
    channel.on('close', () => this.onChannelClosed(state));
    try {
      this.current = state;
      this.consumerTags = [];
      for (const lane of LANES) {
        // Per consumer (not global): each lane's consumer gets its own window.
        await channel.prefetch(this.prefetchOf(lane));
        const { consumerTag } = await channel.consume(laneQueueName(this.settings.names, this.pool, lane), (message) => this.onMessage(state, message), { noAck: false });
        this.consumerTags.push(consumerTag);
      }
    } catch (err) {
      await channel.close().catch(() => undefined);
      throw err;
    }
  }

  private prefetchOf(lane: Lane): number {
    return lane === 'first' ? this.concurrency + BACKLOG_AFTER : this.concurrency;
  }

  private onMessage(state: ChannelState, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (its queue was deleted, for one): start over on a new channel.
      this.settings.logger.warn({ pool: this.pool }, 'the broker cancelled the job consumer; consuming again');
      if (this.current === state) void state.channel.close().catch(() => undefined);
      return;
    }
    state.unsettled.push(message.fields.deliveryTag);
    if (this.closed) {
      this.settle(state, message, 'requeue');
      return;
    }
    const decoded = decodeJob(message.content);
    if (!decoded.ok) {
      this.settings.logger.warn({ pool: this.pool, reason: decoded.reason, messageId: message.properties.messageId }, 'malformed job message dead-lettered');
      this.settings.onMalformed();
      this.settle(state, message, 'dead-letter');
      return;
    }
    this.waiting.push({ state, message, job: decoded.value, deliveryCount: deliveryCountOf(message) });
    this.pump();
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.waiting.size > 0) {
      const delivery = this.waiting.take((botId) => this.byBot.of(botId) < this.perBot);
      if (!delivery) return;
      if (!delivery.state.open) continue;
      if (this.closed) {
        this.settle(delivery.state, delivery.message, 'requeue');
        continue;
      }
      const { botId } = delivery.job;
      this.byBot.add(botId);
      void this.running.track(this.run(delivery)).finally(() => {
        this.byBot.remove(botId);
        this.pump();
      });
    }
  }

  private async run(delivery: Delivery): Promise<void> {
    let decision: JobDecision;
    try {
      const replyTo = typeof delivery.message.properties.replyTo === 'string' ? delivery.message.properties.replyTo : undefined;
      decision = await this.handler(delivery.job, { deliveryCount: delivery.deliveryCount, ...(replyTo && { replyTo }) });
    } catch (err) {
      this.settings.logger.warn({ err, pool: this.pool, invocationId: delivery.job.invocationId }, 'job handler threw; job requeued');
      decision = 'requeue';
    }
    if (decision !== 'ack' && decision !== 'dead-letter') decision = 'requeue';
    if (decision === 'requeue' && !this.closed && this.settings.requeueDelayMs > 0) await this.sleep(this.settings.requeueDelayMs);
    this.settle(delivery.state, delivery.message, decision);
  }

  private settle(state: ChannelState, message: ConsumeMessage, decision: JobDecision): void {
    if (!state.open) return;
    if (decision === 'ack') {
      state.acksDue.set(message.fields.deliveryTag, message);
      if (!state.flushScheduled) {
        state.flushScheduled = true;
        setImmediate(() => this.flushAcks(state));
      }
      return;
    }
    this.forget(state, message.fields.deliveryTag);
    this.tryOn(state, () => state.channel.nack(message, false, decision === 'requeue'));
  }

  /**
   * Sends the acks decided since the last turn: the run of them at the head of the unsettled
   * deliveries as one ack with `multiple` (the broker settles a quorum queue's messages in one command
   * instead of one each), the others one by one. A job still running holds the head, so nothing after
   * it is ever acked with it.
   */
  private flushAcks(state: ChannelState): void {
    state.flushScheduled = false;
    if (!state.open || state.acksDue.size === 0) return;
    let head = 0;
    while (head < state.unsettled.length && state.acksDue.has(state.unsettled[head])) head++;
    if (head > 0) {
      const last = state.acksDue.get(state.unsettled[head - 1]) as ConsumeMessage;
      for (const tag of state.unsettled.splice(0, head)) state.acksDue.delete(tag);
      this.tryOn(state, () => state.channel.ack(last, head > 1));
    }
    for (const [tag, message] of state.acksDue) {
      this.forget(state, tag);
      this.tryOn(state, () => state.channel.ack(message));
    }
    state.acksDue.clear();
  }

  private forget(state: ChannelState, tag: number): void {
    const at = state.unsettled.indexOf(tag);
    if (at >= 0) state.unsettled.splice(at, 1);
  }

  private tryOn(state: ChannelState, settle: () => void): void {
    try {
      settle();
    } catch (err) {
      // The channel closed between the check and the call: the broker has the message back already.
      this.settings.logger.warn({ err, pool: this.pool }, 'could not settle a job message');
    }
  }

  /** A pause that close() cuts short. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private onChannelClosed(state: ChannelState): void {
    state.open = false;
    if (this.current !== state) return;
    this.current = null;
    this.consumerTags = [];
    this.attaching = null;
    // Unstarted deliveries of this channel are back in the queue already.
    this.waiting.removeWhere((delivery) => delivery.state === state);
    if (!this.closed) this.scheduleReattach(state.session);
  }

  /** The broker closed the channel but maybe not the connection (e.g. an ack timeout): consume again. */
  private scheduleReattach(session: AmqpSession): void {
    if (this.reattachTimer) return;
    this.reattachTimer = setTimeout(() => {
      this.reattachTimer = null;
      // A lost connection is the reconnect's business: it attaches every consumer to the new one.
      if (this.closed || !session.alive || this.session !== session || this.current) return;
      this.attach(session).catch((err: unknown) => {
        this.settings.logger.warn({ err, pool: this.pool }, 'could not consume again; retrying');
        this.scheduleReattach(session);
      });
    }, this.settings.reattachDelayMs);
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    if (this.reattachTimer) clearTimeout(this.reattachTimer);
    for (const wake of [...this.sleepers]) wake();
    await this.attaching?.catch(() => undefined);
    const state = this.current;
    if (state?.open) for (const tag of this.consumerTags) await state.channel.cancel(tag).catch(() => undefined);
    // Deliveries still waiting for a free slot go back to the queue for other consumers.
    for (const delivery of this.waiting.removeWhere(() => true)) this.settle(delivery.state, delivery.message, 'requeue');
    await this.running.settled();
    if (state?.open) {
      // Acks still due would otherwise be lost with the channel, and their jobs run again.
      this.flushAcks(state);
      await state.channel.close().catch(() => undefined);
    }
    this.onClosed(this);
  }
}

/** Quorum queues count earlier deliveries in `x-delivery-count` (absent the first time). */
function deliveryCountOf(message: ConsumeMessage): number {
  const count: unknown = message.properties.headers?.['x-delivery-count'];
  return typeof count === 'number' && count >= 0 ? count + 1 : 1;
}
