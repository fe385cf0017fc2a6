// What each kind of message a call sends costs RabbitMQ by itself: the broker's CPU per operation,
// with nothing else running, so the distributed rows' broker CPU per call can be read as a sum of parts
// (docs/scaling.md). Each operation runs IN_FLIGHT at a time, as a busy gateway or executor would.
import amqplib from 'amqplib';
import { randomBytes } from 'node:crypto';
import { cpuMicros } from './processes.mjs';

export const IN_FLIGHT = 50;
const WARM_UP = 2000;
/** A sync call's job and completion are a few hundred bytes; a reply can carry a ResponseBody of any size. */
const SMALL = Buffer.alloc(300, 'x');
const LARGE = Buffer.alloc(64 * 1024, 'x');

/**
 * Rows of { id, name, opsPerSecond, brokerMicros } for each operation, `count` times each after a
 * warm-up; every queue and exchange it declares is deleted before it returns.
 */
export async function brokerCosts(url, brokerPid, count) {
  const prefix = `gi-bench-costs-${randomBytes(4).toString('hex')}`;
  const connection = await amqplib.connect(url, { noDelay: true });
  const publisher = await connection.createConfirmChannel();
  const exchange = `${prefix}.direct`;
  await publisher.assertExchange(exchange, 'direct', { durable: true });
  const confirmed = (target, key, body, options) =>
    new Promise((resolve, reject) => publisher.publish(target, key, body, options, (error) => (error ? reject(error) : resolve())));
  const rows = [];

  async function measure(id, name, operation) {
    await pump(operation, WARM_UP);
    const before = cpuMicros(brokerPid);
    const started = process.hrtime.bigint();
    await pump(operation, count);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    rows.push({ id, name, opsPerSecond: Math.round(count / seconds), brokerMicros: Math.round((cpuMicros(brokerPid) - before) / count) });
  }

  /** A queue of the given arguments bound to the exchange, its messages consumed and acked one by one. */
  async function jobQueue(argumentsOf, id, name) {
    const queue = `${prefix}.${id}`;
    await publisher.assertQueue(queue, { durable: true, arguments: argumentsOf });
    await publisher.bindQueue(queue, exchange, queue);
    const consumer = await connection.createChannel();
    await consumer.prefetch(IN_FLIGHT * 2);
    const arrivals = [];
    await consumer.consume(queue, (message) => {
      consumer.ack(message);
      arrivals.shift()?.();
    });
    try {
      await measure(id, name, async () => {
        const arrived = new Promise((resolve) => arrivals.push(resolve));
        await confirmed(exchange, queue, SMALL, { persistent: true, mandatory: true });
        await arrived;
      });
    } finally {
      // A durable queue outlives the connection: deleted whatever happened, so a failed run leaves none behind.
      await consumer.close().catch(() => {});
      await publisher.deleteQueue(queue).catch(() => {});
    }
  }

  /**
   * Direct reply-to: a consumer of amq.rabbitmq.reply-to, its address learnt from a message it sent itself.
   * Replies go out unconfirmed on a channel of their own, as executors send them (libs/bus-amqp reply-publisher.ts).
   */
  async function directReply(body, id, name) {
    const replies = await connection.createChannel();
    const waiting = await connection.createChannel();
    const arrivals = [];
    await waiting.consume('amq.rabbitmq.reply-to', () => arrivals.shift()?.(), { noAck: true });
    const probe = `${prefix}.probe`;
    await publisher.assertQueue(probe, { exclusive: true });
    waiting.sendToQueue(probe, Buffer.from('?'), { replyTo: 'amq.rabbitmq.reply-to' });
    let address = null;
    while (!address) {
      const got = await publisher.get(probe, { noAck: true });
      if (got) address = got.properties.replyTo;
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await publisher.deleteQueue(probe);
    await measure(id, name, async () => {
      const arrived = new Promise((resolve) => arrivals.push(resolve));
      replies.publish('', address, body, { persistent: false });
      await arrived;
    });
    await waiting.close();
    await replies.close();
  }

  try {
    await jobQueue({ 'x-queue-type': 'quorum', 'x-delivery-limit': 4 }, 'quorum-job', 'a job through a quorum queue, as the pools use: publish, confirm, delivery, ack');
    await jobQueue({ 'x-queue-type': 'classic' }, 'classic-job', 'the same through a durable classic queue, for comparison (not replicated)');
    await directReply(SMALL, 'direct-reply', 'a direct reply of 300 bytes: publish (unconfirmed, as executors send it), delivery');
    await directReply(LARGE, 'direct-reply-64k', 'a direct reply of 64 KB (a large ResponseBody)');
    await measure('event-unrouted', 'a completion event no process waits for: publish, confirm', () => confirmed(exchange, `${prefix}.nobody`, SMALL, { persistent: false }));
  } finally {
    await publisher.deleteExchange(exchange).catch(() => {});
    await connection.close().catch(() => {});
  }
  return rows;
}

/** Runs `operation` `total` times, IN_FLIGHT at once. */
async function pump(operation, total) {
  let started = 0;
  const lane = async () => {
    while (started < total) {
      started++;
      await operation();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}
