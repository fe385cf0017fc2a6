import { EventEmitter } from 'node:events';
import type { Channel } from 'amqplib';
import { ReplyPublisher } from './reply-publisher';

/** amqplib's channel at the edge: publish answers whether the socket took the write under its high-water mark. */
class FakeChannel extends EventEmitter {
  readonly sent: Array<{ routingKey: string; correlationId: string }> = [];
  full = false;
  closed = false;
  publish(_exchange: string, routingKey: string, _content: Buffer, options: { correlationId: string }): boolean {
    if (this.closed) throw new Error('Channel closed');
    this.sent.push({ routingKey, correlationId: options.correlationId });
    return !this.full;
  }
  async close(): Promise<void> {
    this.closed = true;
    this.emit('close');
  }
}

const replier = (channel: FakeChannel, timeoutMs = 5_000) => new ReplyPublisher(channel as unknown as Channel, timeoutMs);
const settledWithin = async (promise: Promise<unknown>, ms: number) => {
  let settled = false;
  void promise.then(() => (settled = true), () => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, ms));
  return settled;
};

describe('ReplyPublisher', () => {
  it('resolves once the reply is handed to the connection, with no confirm to wait for', async () => {
    const channel = new FakeChannel();
    await replier(channel).publish('amq.rabbitmq.reply-to.g1', Buffer.from('{}'), 'inv-1');
    expect(channel.sent).toEqual([{ routingKey: 'amq.rabbitmq.reply-to.g1', correlationId: 'inv-1' }]);
  });

  it('holds later replies while the socket is over its high-water mark, until it drains', async () => {
    const channel = new FakeChannel();
    const publisher = replier(channel);
    channel.full = true;
    await publisher.publish('r', Buffer.from('{}'), 'first');
    channel.full = false;
    const second = publisher.publish('r', Buffer.from('{}'), 'second');
    expect(await settledWithin(second, 20)).toBe(false);
    expect(channel.sent.map((s) => s.correlationId)).toEqual(['first']);
    channel.emit('drain');
    await second;
    expect(channel.sent.map((s) => s.correlationId)).toEqual(['first', 'second']);
  });

  it('rejects once its channel is closed, so the job is requeued and announced again', async () => {
    const channel = new FakeChannel();
    const publisher = replier(channel);
    await channel.close();
    expect(publisher.isOpen).toBe(false);
    await expect(publisher.publish('r', Buffer.from('{}'), 'inv-1')).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('rejects a reply held for a drain when the channel closes meanwhile, or when the drain does not come in time', async () => {
    const closing = new FakeChannel();
    const held = replier(closing);
    closing.full = true;
    await held.publish('r', Buffer.from('{}'), 'first');
    const waiting = held.publish('r', Buffer.from('{}'), 'second');
    await closing.close();
    await expect(waiting).rejects.toMatchObject({ code: 'unavailable' });

    const stuck = new FakeChannel();
    const slow = replier(stuck, 30);
    stuck.full = true;
    await slow.publish('r', Buffer.from('{}'), 'first');
    await expect(slow.publish('r', Buffer.from('{}'), 'second')).rejects.toThrow('did not accept more data within 30 ms');
    stuck.full = false;
    // The hold ends with its deadline: the next reply goes out.
    await slow.publish('r', Buffer.from('{}'), 'third');
    expect(stuck.sent.map((s) => s.correlationId)).toEqual(['first', 'third']);
  });
});
