// What the benchmark needs to know about RabbitMQ: whether it answers, its version, its process (to
// count its CPU) and how to remove what a run declared on it.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import amqplib from 'amqplib';

/** The broker's product and version from the AMQP handshake, or null when it does not answer. */
export async function brokerVersion(url) {
  try {
    const connection = await amqplib.connect(url);
    const { product, version, platform } = connection.connection.serverProperties;
    await connection.close();
    return `${product} ${version} (${platform})`;
  } catch {
    return null;
  }
}

/** The pid of the RabbitMQ node on this host (its Erlang VM, beam.smp, booting `rabbit`), or null. */
export function brokerPid() {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0].endsWith('beam.smp') && argv.includes('rabbit') && argv.includes('boot')) return Number(entry);
    } catch {
      // the process ended meanwhile
    }
  }
  return null;
}

/** One connection to read how many messages are ready in some queues together, often, and to purge them. */
export async function watchQueue(url, queues) {
  const connection = await amqplib.connect(url);
  const channel = await connection.createChannel();
  return {
    depth: async () => (await Promise.all(queues.map((queue) => channel.checkQueue(queue)))).reduce((sum, queue) => sum + queue.messageCount, 0),
    purge: () => Promise.all(queues.map((queue) => channel.purgeQueue(queue))),
    close: () => connection.close().catch(() => {}),
  };
}

/**
 * Deletes the queues and exchanges of a bus prefix: the ones the bus declares (libs/bus-amqp
 * amqp-topology.ts) and any other the local rabbitmqctl lists under the prefix.
 */
export async function deleteTopology(url, prefix) {
  const queues = new Set([`${prefix}.jobs.default`, `${prefix}.dead-letters`, ...listed('list_queues', prefix)]);
  const exchanges = new Set([`${prefix}.jobs`, `${prefix}.dead-letter`, `${prefix}.completions`, `${prefix}.completions.by-partition`, `${prefix}.cancellations`, ...listed('list_exchanges', prefix)]);
  const connection = await amqplib.connect(url);
  try {
    for (const queue of queues) await deleteOne(connection, (channel) => channel.deleteQueue(queue));
    for (const exchange of exchanges) await deleteOne(connection, (channel) => channel.deleteExchange(exchange));
  } finally {
    await connection.close();
  }
}

/** One channel per delete: a failed delete closes its channel. */
async function deleteOne(connection, action) {
  const channel = await connection.createChannel();
  channel.on('error', () => {});
  await action(channel).catch(() => {});
  await channel.close().catch(() => {});
}

function listed(command, prefix) {
  try {
    const output = execFileSync('rabbitmqctl', [command, '-q', '--no-table-headers', 'name'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 15_000 });
    return output.split('\n').filter((name) => name.startsWith(`${prefix}.`));
  } catch {
    return [];
  }
}
