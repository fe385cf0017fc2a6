/**
 * Throughput of the RabbitMQ job bus on the broker at the given URL:
 *   1. confirmed job publishes per second with many in flight (a window of 1,000 unconfirmed),
 *   2. the same with one publish at a time (each waits for its confirm: the latency-bound case),
 *   3. jobs per second end to end: publish, deliver to a consumer (concurrency 50), ack.
 *
 *   npx esbuild libs/bus-amqp/bench/throughput.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/bus-throughput.js && node dist/bench/bus-throughput.js [amqp-url] [jobs]
 *
 * Defaults: amqp://guest:guest@127.0.0.1:5672 and 20,000 jobs. Queues and exchanges get a unique
 * prefix and are deleted at the end.
 */
import { randomBytes } from 'node:crypto';
import { AmqpJobBus, deleteTopology } from '../src';
import type { JobMessage } from '@gi/contracts';
import { connect } from 'amqplib';

const url = process.argv[2] ?? 'amqp://guest:guest@127.0.0.1:5672';
const jobs = Number(process.argv[3] ?? 20_000);

const job = (i: number, pool: string): JobMessage => ({ kind: 'job', version: 1, botId: 'bench-bot', invocationId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, pool });

/** Publishes `count` jobs keeping at most `window` unconfirmed; returns publishes per second. */
async function publishWindowed(bus: AmqpJobBus, pool: string, count: number, window: number): Promise<number> {
  const started = process.hrtime.bigint();
  let next = 0;
  const lane = async () => {
    while (next < count) await bus.publish(job(next++, pool));
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, lane));
  return count / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function endToEnd(bus: AmqpJobBus, pool: string, count: number): Promise<number> {
  let handled = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const subscription = await bus.consume(pool, 50, async () => {
    if (++handled === count) done();
    return 'ack';
  });
  const started = process.hrtime.bigint();
  await publishWindowed(bus, pool, count, 1000);
  await finished;
  const rate = count / (Number(process.hrtime.bigint() - started) / 1e9);
  await subscription.close();
  return rate;
}

async function main(): Promise<void> {
  const prefix = `gi-bench-${randomBytes(4).toString('hex')}`;
  const bus = await AmqpJobBus.connect({ url, prefix, connectionName: `${prefix} throughput` });
  try {
    await publishWindowed(bus, 'warmup', 2000, 500);
    const windowed = await publishWindowed(bus, 'windowed', jobs, 1000);
    console.log(`confirmed publishes, 1000 in flight: ${Math.round(windowed)}/s (${jobs} jobs)`);
    const serialCount = Math.min(jobs, 3000);
    const serial = await publishWindowed(bus, 'serial', serialCount, 1);
    console.log(`confirmed publishes, 1 in flight:    ${Math.round(serial)}/s (${serialCount} jobs, ${(1000 / serial).toFixed(2)} ms each)`);
    const e2e = await endToEnd(bus, 'end-to-end', jobs);
    console.log(`publish -> consume -> ack:          ${Math.round(e2e)}/s (${jobs} jobs, consumer concurrency 50)`);
  } finally {
    const topology = bus.topology();
    await bus.close();
    const connection = await connect(url);
    await deleteTopology(await connection.createChannel(), topology);
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
