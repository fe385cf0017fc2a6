import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { busNames, busTopology, deleteTopology } from '@gi/bus-amqp';
import { connect } from 'amqplib';

const run = promisify(execFile);

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

/**
 * Closes a service's connection from the broker's side (as a broker node restart or a network fault
 * would), found by the name it gives its connection: `gi-<role>-<pid>` for a service process.
 */
export async function closeBrokerConnection(connectionName: string): Promise<void> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q', '--no-table-headers'], { timeout: 10_000 });
  const line = stdout.split('\n').find((l) => l.includes(`{"connection_name","${connectionName}"}`));
  if (!line) throw new Error(`no broker connection named ${connectionName}`);
  await run('rabbitmqctl', ['close_connection', line.split('\t')[0], 'closed by a test'], { timeout: 10_000 });
}
