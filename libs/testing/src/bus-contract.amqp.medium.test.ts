import { randomBytes } from 'node:crypto';
import { AmqpJobBus, deleteTopology } from '@gi/bus-amqp';
import { connect } from 'amqplib';
import { describeBusContract } from './bus.contract';

// The real broker: `rabbitmq-server -detached` starts it when it is down.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** Each bus gets its own names, and its queues and exchanges are deleted afterwards. */
describeBusContract('RabbitMQ', async () => {
  const prefix = `gi-test-${randomBytes(4).toString('hex')}`;
  const bus = await AmqpJobBus.connect({ url: AMQP_URL, prefix, connectionName: `${prefix} contract` });
  return {
    bus,
    async dispose() {
      const topology = bus.topology();
      await bus.close();
      const connection = await connect(AMQP_URL);
      try {
        await deleteTopology(await connection.createChannel(), topology);
      } finally {
        await connection.close();
      }
    },
  };
});
