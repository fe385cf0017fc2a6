import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { JobDecision, JobDelivery, JobMessage } from '@gi/contracts';
import { GiError } from '@gi/domain';
import { connect } from 'amqplib';
import type { Channel, ChannelModel, GetMessage, Message } from 'amqplib';
import { AmqpJobBus } from './amqp-job.bus';
import type { AmqpJobBusOptions, BusLogger } from './amqp-bus.options';
import { deleteTopology, poolQueueName } from './amqp-topology';
import { completionPartition } from './completion-partitions';

// The real broker: `rabbitmq-server -detached` starts it when it is down.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = promisify(execFile);

jest.setTimeout(20_000);

const job = (invocationId: string, pool = 'default'): JobMessage => ({ kind: 'job', version: 1, botId: 'bot-a', invocationId, pool });

/** Polls until `predicate` holds; fails after `timeoutMs`. */
async function waitFor(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * An invocation id routed by a completion partition other than those of `others`: a wait for it lets a
 * listener hear a later event without binding the partitions under test.
 */
function idOutsidePartitionsOf(...others: string[]): string {
  const taken = new Set(others.map(completionPartition));
  for (let n = 0; ; n++) if (!taken.has(completionPartition(`marker-${n}`))) return `marker-${n}`;
}

/** Closes one client connection from the broker side, found by its connection name. */
async function closeConnectionFromBroker(connectionName: string): Promise<void> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q', '--no-table-headers'], { timeout: 10_000 });
  const line = stdout.split('\n').find((l) => l.includes(`{"connection_name","${connectionName}"}`));
  if (!line) throw new Error(`no broker connection named ${connectionName}`);
  await run('rabbitmqctl', ['close_connection', line.split('\t')[0], 'closed by a test'], { timeout: 10_000 });
}

describe('AmqpJobBus against RabbitMQ', () => {
  let admin: ChannelModel;
  const buses: AmqpJobBus[] = [];

  /** A bus with its own names and a log kept in memory; afterEach closes it and deletes its queues and exchanges. */
  async function openBus(options: Partial<AmqpJobBusOptions> = {}): Promise<{ bus: AmqpJobBus; connectionName: string; log: string[] }> {
    const prefix = `gi-test-${randomBytes(4).toString('hex')}`;
    const connectionName = `${prefix} adapter`;
    const log: string[] = [];
    const logger: BusLogger = {
      info: (_obj, msg) => log.push(`info: ${msg}`),
      warn: (_obj, msg) => log.push(`warn: ${msg}`),
      error: (_obj, msg) => log.push(`error: ${msg}`),
    };
    const bus = await AmqpJobBus.connect({ url: AMQP_URL, prefix, connectionName, logger, ...options });
    buses.push(bus);
    return { bus, connectionName, log };
  }

  /** Takes one message from a queue (a fresh channel: a missing queue closes it). */
  async function take(queue: string): Promise<GetMessage | false> {
    const channel = await admin.createChannel();
    try {
      return await channel.get(queue, { noAck: true });
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  beforeAll(async () => {
    admin = await connect(AMQP_URL);
  });

  afterEach(async () => {
    for (const bus of buses.splice(0)) {
      const topology = bus.topology();
      await bus.close();
      await deleteTopology(await admin.createChannel(), topology);
    }
  });

  afterAll(async () => {
    await admin.close();
  });

  it('resumes consumers and listeners after the broker closes the connection, and the job is consumed', async () => {
    const { bus, connectionName, log } = await openBus({ reconnect: { initialDelayMs: 50 } });
    const deliveries: Array<{ id: string; count: number | undefined }> = [];
    let releaseFirst: (decision: JobDecision) => void = () => undefined;
    await bus.consume('default', 2, (j: JobMessage, delivery?: JobDelivery) => {
      deliveries.push({ id: j.invocationId, count: delivery?.deliveryCount });
      // The first delivery hangs until after the reconnect; its late ack must not break anything.
      if (deliveries.length === 1) return new Promise<JobDecision>((resolve) => (releaseFirst = resolve));
      return Promise.resolve('ack');
    });
    const events: string[] = [];
    await bus.onCompletion((e) => events.push(e.invocationId));
    // Watched before the connection is lost: the new queue is bound to its partition again.
    await bus.watchCompletion('after');

    await bus.publish(job('survivor'));
    await waitFor(() => deliveries.length === 1, 5000, 'first delivery');
    await closeConnectionFromBroker(connectionName);
    await waitFor(() => deliveries.length === 2, 10_000, 'redelivery after reconnect');
    expect(deliveries).toEqual([
      { id: 'survivor', count: 1 },
      { id: 'survivor', count: 2 },
    ]);
    await waitFor(() => bus.isConnected(), 5000, 'reconnect finished');
    releaseFirst('ack');

    await bus.publish(job('after'));
    await bus.publishCompletion({ kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'after', status: 'Completed' });
    await waitFor(() => deliveries.length === 3 && events.length === 1, 5000, 'delivery and event after reconnect');
    expect(deliveries[2]).toEqual({ id: 'after', count: 1 });
    expect(events).toEqual(['after']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(deliveries).toHaveLength(3);
    // The late ack of the first delivery was dropped quietly: the broker had taken the message back.
    expect(log.filter((line) => !line.startsWith('info:'))).toEqual(['warn: lost the message broker connection; reconnecting']);
  });

  it('answers a publisher that awaits a reply directly (direct reply-to), and only that publisher', async () => {
    const { bus: executor } = await openBus();
    const gateway = await AmqpJobBus.connect({ url: AMQP_URL, prefix: executor.names.prefix, connectionName: 'gi-test gateway' });
    const bystander = await AmqpJobBus.connect({ url: AMQP_URL, prefix: executor.names.prefix, connectionName: 'gi-test bystander' });
    try {
      const heard: string[] = [];
      const heardByBystander: string[] = [];
      await gateway.onCompletion((event) => heard.push(event.invocationId));
      await bystander.onCompletion((event) => heardByBystander.push(event.invocationId));
      const deliveries: Array<JobDelivery | undefined> = [];
      await executor.consume('default', 2, async (j, delivery) => {
        deliveries.push(delivery);
        if (delivery?.replyTo) await executor.reply(delivery.replyTo, { kind: 'completed', version: 1, botId: j.botId, invocationId: j.invocationId, status: 'Completed' });
        return 'ack';
      });
      await gateway.publish(job('sync-1'), { awaitReply: true });
      await gateway.publish(job('async-1'));
      await waitFor(() => heard.includes('sync-1') && deliveries.length === 2, 5000, 'direct reply');
      expect(deliveries.find((d) => d?.replyTo)?.replyTo).toMatch(/^amq\.rabbitmq\.reply-to/);
      expect(deliveries.filter((d) => !d?.replyTo)).toHaveLength(1);
      // Nothing was broadcast: the reply went to the waiting publisher alone.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(heard).toEqual(['sync-1']);
      expect(heardByBystander).toEqual([]);
    } finally {
      await gateway.close();
      await bystander.close();
    }
  });

  it('routes a sync wait by partition once the connection its direct reply was expected on is lost', async () => {
    const { bus: gateway, connectionName } = await openBus({ reconnect: { initialDelayMs: 50 } });
    const { bus: executor } = await openBus({ prefix: gateway.names.prefix });
    const heard: string[] = [];
    await gateway.onCompletion((event) => heard.push(event.invocationId));
    // Told once routed by partition: its waiter then marks the invocation watched, so its event is published.
    const promoted: string[] = [];
    await gateway.watchCompletion('sync-lost', { directReply: true, onPromoted: () => promoted.push('sync-lost') });
    const done = await gateway.watchCompletion('sync-done', { directReply: true, onPromoted: () => promoted.push('sync-done') });
    done.release();
    const event = (invocationId: string) => ({ kind: 'completed', version: 1, botId: 'bot-a', invocationId, status: 'Completed' }) as const;
    // Nothing heard of the direct-reply wait: a marker's event, published after it, arrives alone.
    const marker = idOutsidePartitionsOf('sync-lost', 'sync-done');
    const markerWatch = await gateway.watchCompletion(marker);
    await executor.publishCompletion(event('sync-lost'));
    await executor.publishCompletion(event(marker));
    await waitFor(() => heard.includes(marker), 5000, 'the marker event');
    expect(heard).toEqual([marker]);
    markerWatch.release();
    heard.length = 0;

    await closeConnectionFromBroker(connectionName);
    await waitFor(() => !gateway.isConnected(), 5000, 'disconnect seen');
    await waitFor(() => gateway.isConnected(), 10_000, 'reconnect');
    await waitFor(() => promoted.length > 0, 5000, 'promotion');
    expect(promoted).toEqual(['sync-lost']);
    // sync-done's event goes first: were it routed here, it would be heard before sync-lost's.
    await executor.publishCompletion(event('sync-done'));
    await executor.publishCompletion(event('sync-lost'));
    await waitFor(() => heard.includes('sync-lost'), 5000, 'event after reconnect');
    expect(heard).toEqual(['sync-lost']);
  });

  it('acks jobs finished together in one frame, and never a job still running with them', async () => {
    const { bus } = await openBus();
    // Every channel's acks (amqplib's Channel class, shared by all), as (delivery tag, multiple): what reaches the broker.
    const probe = await admin.createChannel();
    const channelClass = Object.getPrototypeOf(probe) as Channel;
    await probe.close();
    const original = channelClass.ack;
    const acks: Array<[number, boolean]> = [];
    const ack = jest.spyOn(channelClass, 'ack').mockImplementation(function (this: Channel, message: Message, allUpTo?: boolean) {
      acks.push([message.fields.deliveryTag, allUpTo === true]);
      original.call(this, message, allUpTo);
    });
    try {
      let releaseSlow: () => void = () => undefined;
      const seen = new Map<string, number>();
      await bus.consume('default', 16, async (j) => {
        seen.set(j.invocationId, (seen.get(j.invocationId) ?? 0) + 1);
        // The first job runs on while the others finish: it heads the unsettled deliveries.
        if (j.invocationId === 'slow') await new Promise<void>((resolve) => (releaseSlow = resolve));
        return 'ack';
      });
      await bus.publish(job('slow'));
      await waitFor(() => seen.has('slow'), 5000, 'slow job started');
      await Promise.all(Array.from({ length: 12 }, (_, i) => bus.publish(job(`quick-${i}`))));
      await waitFor(() => seen.size === 13, 5000, 'quick jobs run');
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Behind the running job each quick one is acked alone: a multiple ack would settle the slow job too.
      expect(acks.every(([, multiple]) => !multiple)).toBe(true);
      expect(acks.map(([tag]) => tag)).not.toContain(1);
      const before = acks.length;
      releaseSlow();
      await waitFor(() => acks.length > before, 5000, 'slow job acked');

      // Now nothing runs: jobs delivered together and finished together go out as one multiple ack.
      acks.length = 0;
      await Promise.all(Array.from({ length: 12 }, (_, i) => bus.publish(job(`batch-${i}`))));
      await waitFor(() => seen.size === 25, 5000, 'batch run');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(acks.length).toBeLessThan(12);
      expect(acks.some(([, multiple]) => multiple)).toBe(true);
      // And nothing came back: every job was acked exactly once, none redelivered.
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
      expect(await bus.queueDepth('default')).toBe(0);
    } finally {
      ack.mockRestore();
    }
  });

  it('rejects publish at once while disconnected, and publishes again once reconnected', async () => {
    const { bus, connectionName } = await openBus({ reconnect: { initialDelayMs: 1500 } });
    await closeConnectionFromBroker(connectionName);
    await waitFor(() => !bus.isConnected(), 5000, 'disconnect seen');
    const started = Date.now();
    const error = await bus.publish(job('during-outage')).catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(100);
    expect(error).toBeInstanceOf(GiError);
    expect((error as GiError).code).toBe('unavailable');
    expect((error as GiError).detail).toMatch(/not reachable/);
    expect(await bus.ping()).toBe(false);

    await waitFor(() => bus.isConnected(), 10_000, 'reconnect');
    expect(await bus.ping()).toBe(true);
    const seen: string[] = [];
    await bus.consume('default', 1, async (j) => {
      seen.push(j.invocationId);
      return 'ack';
    });
    await bus.publish(job('after-outage'));
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual(['after-outage']);
  });

  it('tells its reconnect listeners once the connection is back and publishing works, not at the first connect', async () => {
    const { bus, connectionName } = await openBus({ reconnect: { initialDelayMs: 50 } });
    const told: string[] = [];
    bus.onReconnected(() => {
      // Told after the setup: a publish made now reaches the broker.
      void bus.publish(job('on-reconnect')).then(() => told.push('published'));
    });
    const stop = bus.onReconnected(() => told.push('stopped listener'));
    stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(told).toEqual([]);
    await closeConnectionFromBroker(connectionName);
    await waitFor(() => told.length === 1, 10_000, 'reconnect told');
    expect(told).toEqual(['published']);
    expect(await take(poolQueueName(bus.names, 'default'))).toMatchObject({ content: expect.any(Buffer) });
  });

  it('puts a job its handler dead-lettered in the dead-letter queue', async () => {
    const { bus } = await openBus();
    let calls = 0;
    await bus.consume('default', 1, async () => {
      calls++;
      return 'dead-letter';
    });
    await bus.publish(job('hopeless'));
    let dead: GetMessage | false = false;
    await waitFor(() => calls === 1);
    const deadline = Date.now() + 5000;
    while (!dead && Date.now() < deadline) dead = await take(bus.names.deadLetterQueue);
    expect(dead && JSON.parse(dead.content.toString())).toEqual(job('hopeless'));
    expect(dead && dead.properties.headers?.['x-first-death-reason']).toBe('rejected');
    expect(calls).toBe(1);
  });

  it('stops redelivering at the delivery limit and dead-letters the job', async () => {
    const { bus } = await openBus({ maxDeliveries: 3, requeueDelayMs: 10 });
    const counts: Array<number | undefined> = [];
    await bus.consume('default', 1, async (_j, delivery) => {
      counts.push(delivery?.deliveryCount);
      return 'requeue';
    });
    await bus.publish(job('poison'));
    let dead: GetMessage | false = false;
    const deadline = Date.now() + 5000;
    while (!dead && Date.now() < deadline) dead = await take(bus.names.deadLetterQueue);
    expect(dead && JSON.parse(dead.content.toString())).toEqual(job('poison'));
    expect(dead && dead.properties.headers?.['x-first-death-reason']).toBe('delivery_limit');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(counts).toEqual([1, 2, 3]);
  });

  it('dead-letters malformed messages without calling the handler, and goes on', async () => {
    const { bus } = await openBus();
    const seen: string[] = [];
    await bus.consume('default', 1, async (j) => {
      seen.push(j.invocationId);
      return 'ack';
    });
    const channel = await admin.createConfirmChannel();
    for (const body of ['not json', JSON.stringify({ kind: 'job', version: 2, botId: 'b', invocationId: 'v2', pool: 'default' }), '[1]']) {
      channel.publish(bus.names.jobs, 'default', Buffer.from(body));
    }
    await channel.waitForConfirms();
    await channel.close();
    await bus.publish(job('fine'));
    await waitFor(() => seen.length === 1);
    const reasons: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const dead = await take(bus.names.deadLetterQueue);
      reasons.push(dead && dead.content.toString());
    }
    expect(reasons).toEqual(['not json', expect.stringContaining('"version":2'), '[1]']);
    expect(seen).toEqual(['fine']);
  });

  it('rejects a job no queue takes, then declares the queue again', async () => {
    const { bus } = await openBus();
    await bus.publish(job('first'));
    const channel = await admin.createChannel();
    await channel.deleteQueue(`${bus.names.jobs}.default`);
    await channel.close();

    const error = await bus.publish(job('unroutable')).catch((err: unknown) => err);
    expect((error as GiError).code).toBe('unavailable');
    expect((error as GiError).detail).toMatch(/No queue takes messages for pool "default"/);

    await bus.publish(job('declared-again'));
    const queued = await take(`${bus.names.jobs}.default`);
    expect(queued && JSON.parse(queued.content.toString()).invocationId).toBe('declared-again');
  });

  it('consumes again when the broker cancels the consumer because its queue was deleted', async () => {
    const { bus } = await openBus();
    const seen: string[] = [];
    await bus.consume('default', 1, async (j) => {
      seen.push(j.invocationId);
      return 'ack';
    });
    const channel = await admin.createChannel();
    await channel.deleteQueue(`${bus.names.jobs}.default`);
    await channel.close();
    // The consumer declares the queue again by itself and consumes from it.
    const consumers = async () => {
      const probe = await admin.createChannel();
      probe.on('error', () => undefined);
      const found = await probe.checkQueue(`${bus.names.jobs}.default`).then((q) => q.consumerCount, () => 0);
      await probe.close().catch(() => undefined);
      return found;
    };
    const deadline = Date.now() + 5000;
    while ((await consumers()) !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await bus.publish(job('after-cancel'));
    await waitFor(() => seen.length === 1, 5000, 'delivery after the consumer came back');
    expect(seen).toEqual(['after-cancel']);
  });

  it('confirms many publishes in flight at once', async () => {
    const { bus } = await openBus();
    const pending = Array.from({ length: 500 }, (_, i) => bus.publish(job(`bulk-${i}`)));
    expect(bus.publishesInFlight).toBeGreaterThan(100);
    await Promise.all(pending);
    const channel = await admin.createChannel();
    const { messageCount } = await channel.checkQueue(`${bus.names.jobs}.default`);
    await channel.close();
    expect(messageCount).toBe(500);
  });

  it('rejects publishes at once while the broker blocks the connection', async () => {
    const { bus } = await openBus();
    // A real resource alarm would block every client of the shared broker, so the connection's own
    // event is raised here the way amqplib raises it on connection.blocked.
    const model = (bus as unknown as { session: { model: ChannelModel } }).session.model;
    model.emit('blocked', 'low on memory');
    expect(bus.isBlocked()).toBe(true);
    const error = await bus.publish(job('blocked')).catch((err: unknown) => err);
    expect((error as GiError).code).toBe('unavailable');
    expect((error as GiError).detail).toMatch(/refuses messages for now \(low on memory\)/);
    model.emit('unblocked');
    expect(bus.isBlocked()).toBe(false);
    await bus.publish(job('unblocked'));
  });

  it('refuses invalid jobs and closed buses with clear errors', async () => {
    const { bus } = await openBus();
    await expect(bus.publish({ ...job('x'), pool: 'no spaces' })).rejects.toThrow('Invalid job message: pool is missing or invalid.');
    await expect(bus.consume('bad pool', 1, async () => 'ack')).rejects.toThrow('Pool name "bad pool" is invalid');
    await bus.close();
    await expect(bus.publish(job('late'))).rejects.toThrow(/shutting down/);
    expect(bus.isConnected()).toBe(false);
  });

  it('explains queues declared with other settings instead of connecting', async () => {
    const { bus } = await openBus({ maxDeliveries: 3, pools: ['default'] });
    await expect(
      AmqpJobBus.connect({ url: AMQP_URL, prefix: bus.names.prefix, maxDeliveries: 4, pools: ['default'], reconnect: { initialRetries: 0 } }),
    ).rejects.toThrow(/were declared with other settings than this service's .*x-delivery-limit/);
  });

  it('fails to connect with a clear message when the broker is not there', async () => {
    await expect(
      AmqpJobBus.connect({ url: 'amqp://guest:guest@127.0.0.1:1', prefix: 'gi-test-nobroker', reconnect: { initialRetries: 0 } }),
    ).rejects.toThrow(/Cannot connect to the message broker at amqp:\/\/127\.0\.0\.1:1\/: .*ECONNREFUSED/);
  });
});
