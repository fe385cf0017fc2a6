import { BACKLOG_AFTER, busNames, busTopology, laneOf } from './amqp-topology';

describe('bus topology', () => {
  it('describes a direct job exchange, two quorum queues per pool (its lanes) that dead-letter, a direct exchange for completions by partition and a fanout for cancellations', () => {
    const topology = busTopology(busNames('gi'), ['default', 'bulk'], 5);
    expect(topology.exchanges).toEqual([
      { name: 'gi.jobs', type: 'direct' },
      { name: 'gi.dead-letter', type: 'fanout' },
      { name: 'gi.completions.by-partition', type: 'direct' },
      { name: 'gi.cancellations', type: 'fanout' },
    ]);
    expect(topology.queues.map((q) => q.name)).toEqual(['gi.dead-letters', 'gi.jobs.default', 'gi.jobs.default:backlog', 'gi.jobs.bulk', 'gi.jobs.bulk:backlog']);
    expect(topology.queues[2].arguments).toEqual(topology.queues[1].arguments);
    expect(topology.queues[1].arguments).toEqual({
      'x-queue-type': 'quorum',
      // RabbitMQ counts returns: 4 returns tolerated = 5 deliveries at most.
      'x-delivery-limit': 4,
      'x-dead-letter-exchange': 'gi.dead-letter',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
    expect(topology.bindings).toEqual([
      { queue: 'gi.dead-letters', exchange: 'gi.dead-letter', routingKey: '' },
      { queue: 'gi.jobs.default', exchange: 'gi.jobs', routingKey: 'default' },
      { queue: 'gi.jobs.default:backlog', exchange: 'gi.jobs', routingKey: 'default:backlog' },
      { queue: 'gi.jobs.bulk', exchange: 'gi.jobs', routingKey: 'bulk' },
      { queue: 'gi.jobs.bulk:backlog', exchange: 'gi.jobs', routingKey: 'bulk:backlog' },
    ]);
  });
});

describe('lanes', () => {
  it("sends a bot's jobs to the backlog lane once it has BACKLOG_AFTER in flight; unknown counts to the first lane", () => {
    expect([undefined, 0, BACKLOG_AFTER - 1].map(laneOf)).toEqual(['first', 'first', 'first']);
    expect([BACKLOG_AFTER, 10_000].map(laneOf)).toEqual(['backlog', 'backlog']);
  });
});
