import { randomBytes } from 'node:crypto';
import type { CompletionEvent, JobMessage } from '@gi/contracts';
import { connect } from 'amqplib';
import { AmqpJobBus } from './amqp-job.bus';
import { completionPartition } from './completion-partitions';
import { deleteTopology } from './amqp-topology';

// The real broker: `rabbitmq-server -detached` starts it when it is down.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

jest.setTimeout(30_000);

const SYNC_CALLS_PER_GATEWAY = 40;
const LONG_POLLS = 6;

/** Polls until `predicate` holds; fails after `timeoutMs`. */
async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `count` invocation ids whose completion partitions are not in `taken` (there are 64 partitions, so
 * `taken` must leave some free).
 */
function idsOutside(taken: Set<string>, count: number, label: string): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) {
    const id = `${label}-${i}`;
    if (!taken.has(completionPartition(id))) ids.push(id);
  }
  return ids;
}

describe('completion routing with several gateways and a results replica', () => {
  const buses: AmqpJobBus[] = [];
  let prefix: string;

  async function replica(name: string): Promise<{ bus: AmqpJobBus; heard: string[] }> {
    const bus = await AmqpJobBus.connect({ url: AMQP_URL, prefix, connectionName: `${prefix} ${name}`, pools: ['default'] });
    buses.push(bus);
    const heard: string[] = [];
    await bus.onCompletion((event) => heard.push(event.invocationId));
    return { bus, heard };
  }

  beforeEach(() => {
    prefix = `gi-test-${randomBytes(4).toString('hex')}`;
  });

  afterEach(async () => {
    const topology = buses[0]?.topology();
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
    if (!topology) return;
    const connection = await connect(AMQP_URL);
    try {
      await deleteTopology(await connection.createChannel(), topology);
    } finally {
      await connection.close();
    }
  });

  it('delivers each completion only to the replica that waits for it; replicas without waits receive none', async () => {
    const gateways = await Promise.all(['gateway-1', 'gateway-2', 'gateway-3'].map(replica));
    const idleGateway = await replica('gateway-idle');
    const results = await replica('results');
    const executor = await AmqpJobBus.connect({ url: AMQP_URL, prefix, connectionName: `${prefix} executor`, pools: ['default'] });
    buses.push(executor);
    // What the executor does on an outcome (libs/use-cases completion-routing, announceCompletion): a direct reply alone to
    // a sync caller nobody else waits for, the event by partition for whoever watches the others.
    await executor.consume('default', 16, async (job, delivery) => {
      const event: CompletionEvent = { kind: 'completed', version: 1, botId: job.botId, invocationId: job.invocationId, status: 'Completed' };
      await (delivery?.replyTo ? executor.reply(delivery.replyTo, event) : executor.publishCompletion(event));
      return 'ack';
    });
    const job = (invocationId: string): JobMessage => ({ kind: 'job', version: 1, botId: 'bot-a', invocationId, pool: 'default' });

    // Long polls on the results replica, for async invocations; sync calls in other partitions, so
    // what the results replica hears is what it waits for, not a neighbour's event.
    const pollIds = Array.from({ length: LONG_POLLS }, (_, i) => `polled-${i}`);
    const pollPartitions = new Set(pollIds.map(completionPartition));
    // Sync calls: each gateway waits for its own, by direct reply (as handle-webhook-call.ts registers them).
    const syncIds = gateways.map((_, g) => idsOutside(pollPartitions, SYNC_CALLS_PER_GATEWAY, `sync-${g}`));
    const watches = await Promise.all(gateways.flatMap(({ bus }, g) => syncIds[g].map((id) => bus.watchCompletion(id, { directReply: true }))));
    watches.push(...(await Promise.all(pollIds.map((id) => results.bus.watchCompletion(id)))));

    await Promise.all([...gateways.flatMap(({ bus }, g) => syncIds[g].map((id) => bus.publish(job(id), { awaitReply: true }))), ...pollIds.map((id) => executor.publish(job(id)))]);
    const expected = SYNC_CALLS_PER_GATEWAY * gateways.length + LONG_POLLS;
    const heardInAll = () => [...gateways, idleGateway, results].reduce((sum, r) => sum + r.heard.length, 0);
    await waitFor(() => heardInAll() >= expected, 20_000, `${expected} completions heard`);
    // Late or duplicate events by partition would reach a replica before a marker the executor publishes
    // after them: each replica waits for a marker of its own, in a partition nothing else binds.
    const replicas = [...gateways, idleGateway, results];
    const markers: string[] = [];
    for (const label of replicas.map((_, r) => `marker-${r}`)) markers.push(...idsOutside(new Set([...pollIds, ...markers].map(completionPartition)), 1, label));
    watches.push(...(await Promise.all(replicas.map(({ bus }, r) => bus.watchCompletion(markers[r])))));
    for (const marker of markers) await executor.publishCompletion({ kind: 'completed', version: 1, botId: 'bot-a', invocationId: marker, status: 'Completed' });
    await waitFor(() => replicas.every(({ heard }, r) => heard.includes(markers[r])), 10_000, 'every marker heard');
    for (const watch of watches) watch.release();
    const heardBefore = (r: number) => replicas[r].heard.filter((id) => id !== markers[r]);

    gateways.forEach((_, g) => expect([...heardBefore(g)].sort()).toEqual([...syncIds[g]].sort()));
    expect([...heardBefore(replicas.indexOf(results))].sort()).toEqual([...pollIds].sort());
    expect(heardBefore(replicas.indexOf(idleGateway))).toEqual([]);
    expect(heardInAll()).toBe(expected + markers.length);
  });
});
