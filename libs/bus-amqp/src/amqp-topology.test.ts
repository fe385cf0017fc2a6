import { busNames, busTopology } from './amqp-topology';

describe('bus topology', () => {
  it('describes a direct job exchange, a quorum queue per pool that dead-letters, a direct exchange for completions by partition and a fanout for cancellations', () => {
    const topology = busTopology(busNames('gi'), ['default', 'bulk'], 5);
    expect(topology.exchanges).toEqual([
      { name: 'gi.jobs', type: 'direct' },
      { name: 'gi.dead-letter', type: 'fanout' },
      { name: 'gi.completions.by-partition', type: 'direct' },
      { name: 'gi.cancellations', type: 'fanout' },
    ]);
    expect(topology.queues.map((q) => q.name)).toEqual(['gi.dead-letters', 'gi.jobs.default', 'gi.jobs.bulk']);
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
      { queue: 'gi.jobs.bulk', exchange: 'gi.jobs', routingKey: 'bulk' },
    ]);
  });
});
