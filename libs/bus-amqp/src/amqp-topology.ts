/**
 * The broker objects of one deployment, described as data. The bus declares this description after
 * every (re)connect, so a broker that lost them (restart without durable storage, an operator's
 * delete) gets them back without anyone noticing.
 */

export interface ExchangeSpec {
  name: string;
  type: 'direct' | 'fanout';
}

export interface QueueSpec {
  name: string;
  arguments: Record<string, string | number>;
}

export interface BindingSpec {
  queue: string;
  exchange: string;
  routingKey: string;
}

export interface Topology {
  exchanges: ExchangeSpec[];
  queues: QueueSpec[];
  bindings: BindingSpec[];
}

/** Every name derives from one prefix, so deployments (and test runs) sharing a broker stay apart. */
export interface BusNames {
  prefix: string;
  /** Direct exchange: routing key = pool. */
  jobs: string;
  /** Fanout exchange the pool queues dead-letter into. */
  deadLetter: string;
  /** Where dead-lettered jobs wait for an operator. */
  deadLetterQueue: string;
  /**
   * Direct exchange of completion events, routing key = completion partition (completion-partitions.ts).
   * A new name, not the fanout `<prefix>.completions` of earlier versions: an exchange's type cannot change.
   */
  completions: string;
  /** Fanout exchange of cancellations, heard by every executor. */
  cancellations: string;
}

export function busNames(prefix: string): BusNames {
  return {
    prefix,
    jobs: `${prefix}.jobs`,
    deadLetter: `${prefix}.dead-letter`,
    deadLetterQueue: `${prefix}.dead-letters`,
    completions: `${prefix}.completions.by-partition`,
    cancellations: `${prefix}.cancellations`,
  };
}

export const poolQueueName = (names: BusNames, pool: string): string => `${names.jobs}.${pool}`;

/**
 * The lanes of a pool, consumed side by side in turns between bots (job-consumer.ts). `first` is the
 * pool's queue of earlier versions; `backlog` takes the jobs of a bot that already has
 * BACKLOG_AFTER jobs in flight, so a bot's backlog never stands in front of another bot's first jobs.
 * A pool name cannot hold ':', so no pool's queue or routing key is ever another's lane.
 */
export type Lane = 'first' | 'backlog';
export const LANES: readonly Lane[] = ['first', 'backlog'];

/** A bot with this many jobs in flight sends its next ones to the backlog lane. */
export const BACKLOG_AFTER = 16;

/** The lane of a job whose bot had `backlog` other jobs in flight when it was accepted (unknown: first). */
export const laneOf = (backlog: number | undefined): Lane => (backlog !== undefined && backlog >= BACKLOG_AFTER ? 'backlog' : 'first');

export const laneRoutingKey = (pool: string, lane: Lane): string => (lane === 'first' ? pool : `${pool}:${lane}`);

export const laneQueueName = (names: BusNames, pool: string, lane: Lane): string => `${names.jobs}.${laneRoutingKey(pool, lane)}`;

/**
 * The durable quorum queues of a pool, one per lane. RabbitMQ counts a delivery as failed when it is
 * requeued or its consumer goes away; `x-delivery-limit` is the number of such returns it tolerates, so
 * a job is handed out at most `maxDeliveries` times before it is dead-lettered. At-least-once
 * dead-lettering (which needs `reject-publish` overflow) keeps a poison job from vanishing on its way to
 * the dead-letter queue.
 */
export function poolQueues(names: BusNames, pool: string, maxDeliveries: number): QueueSpec[] {
  return LANES.map((lane) => ({
    name: laneQueueName(names, pool, lane),
    arguments: {
      'x-queue-type': 'quorum',
      'x-delivery-limit': maxDeliveries - 1,
      'x-dead-letter-exchange': names.deadLetter,
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    },
  }));
}

/** The queues of one pool and their bindings; declared when a pool is first used. */
export function poolTopology(names: BusNames, pool: string, maxDeliveries: number): Topology {
  const queues = poolQueues(names, pool, maxDeliveries);
  const bindings = LANES.map((lane) => ({ queue: laneQueueName(names, pool, lane), exchange: names.jobs, routingKey: laneRoutingKey(pool, lane) }));
  return { exchanges: [], queues, bindings };
}

/** Everything the bus needs for the given pools. */
export function busTopology(names: BusNames, pools: Iterable<string>, maxDeliveries: number): Topology {
  const topology: Topology = {
    exchanges: [
      { name: names.jobs, type: 'direct' },
      { name: names.deadLetter, type: 'fanout' },
      { name: names.completions, type: 'direct' },
      { name: names.cancellations, type: 'fanout' },
    ],
    queues: [{ name: names.deadLetterQueue, arguments: { 'x-queue-type': 'quorum' } }],
    bindings: [{ queue: names.deadLetterQueue, exchange: names.deadLetter, routingKey: '' }],
  };
  for (const pool of pools) {
    const part = poolTopology(names, pool, maxDeliveries);
    topology.queues.push(...part.queues);
    topology.bindings.push(...part.bindings);
  }
  return topology;
}

/** The channel operations declaring and deleting need (an amqplib Channel has them). */
export interface TopologyChannel {
  assertExchange(name: string, type: string, options: { durable: boolean }): Promise<unknown>;
  assertQueue(name: string, options: { durable: boolean; arguments: Record<string, string | number> }): Promise<unknown>;
  bindQueue(queue: string, exchange: string, routingKey: string): Promise<unknown>;
  deleteQueue(name: string): Promise<unknown>;
  deleteExchange(name: string): Promise<unknown>;
}

/** Idempotent: declaring what exists with the same arguments is a no-op on the broker. */
export async function declareTopology(channel: TopologyChannel, topology: Topology): Promise<void> {
  for (const exchange of topology.exchanges) await channel.assertExchange(exchange.name, exchange.type, { durable: true });
  for (const queue of topology.queues) await channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments });
  for (const binding of topology.bindings) await channel.bindQueue(binding.queue, binding.exchange, binding.routingKey);
}

/** Removes the queues (with their messages) and exchanges; for tests and decommissioning. */
export async function deleteTopology(channel: TopologyChannel, topology: Topology): Promise<void> {
  for (const queue of topology.queues) await channel.deleteQueue(queue.name);
  for (const exchange of topology.exchanges) await channel.deleteExchange(exchange.name);
}
