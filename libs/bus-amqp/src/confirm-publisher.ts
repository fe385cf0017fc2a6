import { randomBytes } from 'node:crypto';
import { SlotMap, unavailable } from '@gi/domain';
import type { ConfirmChannel, Message } from 'amqplib';

export interface PublishRequest {
  exchange: string;
  routingKey: string;
  content: Buffer;
  type: 'job' | 'completed' | 'cancel';
  persistent: boolean;
  /** The broker hands the message back when no queue takes it; publish() then rejects. */
  mandatory: boolean;
  /** Direct reply-to: where the consumer answers, and what the answer is about. */
  replyTo?: string;
  correlationId?: string;
}

interface Pending {
  returned: boolean;
  finish(error?: Error): void;
}

/**
 * Publishes on one confirm channel with any number of messages in flight: each publish resolves on
 * its own broker confirm, so callers never queue behind one another's round trips. A mandatory
 * message that no queue takes comes back (basic.return, always before its confirm) and rejects.
 */
export class ConfirmPublisher {
  private readonly pending = new SlotMap<string, Pending>();
  /** Message ids: unique per publisher; the random part tells publishers apart in broker tooling. */
  private readonly idPrefix = `${randomBytes(6).toString('hex')}-`;
  private sequence = 0;
  private writable = true;
  private drainWaiters: Array<() => void> = [];
  private open = true;

  constructor(
    private readonly channel: ConfirmChannel,
    private readonly timeoutMs: number,
    private readonly onUnroutable: (routingKey: string) => void,
  ) {
    channel.on('return', (message: Message) => this.onReturn(message));
    // The socket buffer is full: hold later publishes until it drains (TCP back-pressure).
    channel.on('drain', () => this.releaseDrainWaiters());
    channel.on('close', () => {
      this.open = false;
      this.releaseDrainWaiters();
    });
  }

  get isOpen(): boolean {
    return this.open;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Closes the channel; messages still unconfirmed then reject. */
  async close(): Promise<void> {
    if (this.open) await this.channel.close().catch(() => undefined);
  }

  async publish(request: PublishRequest): Promise<void> {
    if (!this.writable) await this.waitForDrain();
    if (!this.open) throw unavailable('The connection to the message broker was lost; the message was not published.');
    const messageId = `${this.idPrefix}${++this.sequence}`;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const entry: Pending = {
        returned: false,
        finish: (error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.pending.delete(messageId);
          if (error) reject(error);
          else resolve();
        },
      };
      const timer = setTimeout(
        () => entry.finish(unavailable(`The message broker did not confirm the message within ${this.timeoutMs} ms.`)),
        this.timeoutMs,
      );
      this.pending.set(messageId, entry);
      try {
        const ok = this.channel.publish(
          request.exchange,
          request.routingKey,
          request.content,
          {
            persistent: request.persistent,
            mandatory: request.mandatory,
            messageId,
            type: request.type,
            replyTo: request.replyTo,
            correlationId: request.correlationId,
            contentType: 'application/json',
            timestamp: Math.floor(Date.now() / 1000),
          },
          (err: unknown) => {
            if (err) entry.finish(confirmError(err));
            else if (entry.returned) entry.finish(unroutable(request.routingKey));
            else entry.finish();
          },
        );
        if (!ok) this.writable = false;
      } catch {
        // The channel closed under us (amqplib throws synchronously then).
        entry.finish(unavailable('The connection to the message broker was lost; the message was not published.'));
      }
    });
  }

  private onReturn(message: Message): void {
    const id: unknown = message.properties.messageId;
    const entry = typeof id === 'string' ? this.pending.get(id) : undefined;
    if (entry) entry.returned = true;
    this.onUnroutable(message.fields.routingKey);
  }

  private waitForDrain(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.drainWaiters = this.drainWaiters.filter((w) => w !== done);
        reject(unavailable(`The message broker did not accept more data within ${this.timeoutMs} ms.`));
      }, this.timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.drainWaiters.push(done);
    });
  }

  private releaseDrainWaiters(): void {
    this.writable = true;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter();
  }
}

function confirmError(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (message === 'channel closed') return unavailable('The connection to the message broker was lost before it confirmed the message; it may or may not have been stored.');
  return unavailable('The message broker refused the message (negative acknowledgement).');
}

const unroutable = (pool: string) =>
  unavailable(`No queue takes messages for pool "${pool}" on the message broker; the message was not stored.`);
