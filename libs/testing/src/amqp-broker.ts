import { busNames, busTopology, deleteTopology } from '@gi/bus-amqp';
import { connect } from 'amqplib';

/** The broker the tests use: `rabbitmq-server -detached` starts it when it is down; CI exports AMQP_URL. */
export const TEST_AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** Deletes the queues and exchanges of a bus prefix (the test's own, unique per run). */
export async function deleteBusTopology(prefix: string, pools: string[], maxDeliveries: number, url = TEST_AMQP_URL): Promise<void> {
  const connection = await connect(url);
  try {
    await deleteTopology(await connection.createChannel(), busTopology(busNames(prefix), pools, maxDeliveries));
  } finally {
    await connection.close();
  }
}
