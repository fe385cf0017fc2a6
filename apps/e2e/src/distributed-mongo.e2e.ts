import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { deleteBusTopology, describeWithMongo, describeWithReplicaSet, directUrl, withDatabase } from '@gi/testing';
import { Api } from './api-client';
import type { Reply } from './api-client';
import { busy, example } from './connectors';
import { distributedDeployment } from './distributed-env';
import { MULTIPART, multipartBody } from './multipart';
import type { ServiceProcess } from './service-process';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The fields of a stored invocation these tests look at (see libs/store-mongo/src/mongo-documents.ts). */
interface StoredInvocation {
  _id: string;
  botId: string;
  status: string;
  attempt: number;
}

/**
 * The production shape end to end: gateway, results, control and two executors as separate processes
 * on MongoDB (store and GridFS files) and RabbitMQ, each with a data directory of its own as on
 * separate hosts. Runs against MONGO_URL, or a one-node replica set in a container when a Docker engine
 * answers; elsewhere one SKIPPED line says why.
 */
describeWithMongo('distributed deployment on MongoDB (RabbitMQ, separate processes)', 'MongoDB full-stack end-to-end suite', (mongo) => {
  const database = `gi-e2e-${randomBytes(4).toString('hex')}`;
  let deployment: ReturnType<typeof distributedDeployment>;
  let client: MongoClient;
  let gateway: ServiceProcess;
  let results: ServiceProcess;
  let control: ServiceProcess;
  let executors: ServiceProcess[];
  let token: string;
  const all = () => [gateway, results, control, ...executors].filter(Boolean);
  const invocations = () => client.db(database).collection<StoredInvocation>('invocations');

  beforeAll(async () => {
    client = new MongoClient(mongo().url, { serverSelectionTimeoutMS: 10_000 });
    await client.connect();
    deployment = distributedDeployment('mongo', { storeUrl: withDatabase(mongo().url, database) });
    control = await deployment.start('control');
    [gateway, results, ...executors] = await Promise.all([
      deployment.start('gateway'),
      deployment.start('results'),
      deployment.start('executor', ['--pools', 'default']),
      deployment.start('executor', ['--pools', 'default']),
    ]);
    const admin = new Api(control.baseUrl);
    token = await admin.setUp('acme', 'Order', 'ack', example('ack'));
    expect((await admin.admin('PUT', '/bots/acme/integrations/busy', { entityName: 'Order', code: busy })).status).toBe(200);
    expect((await admin.admin('PUT', '/bots/acme/integrations/files', { entityName: 'Order', code: example('files') })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(all().map((service) => service.stop()));
    if (deployment) {
      await deleteBusTopology(deployment.prefix, ['default'], 6);
      rmSync(deployment.dataDir, { recursive: true, force: true });
    }
    await client?.db(database).dropDatabase();
    await client?.close();
  }, 120_000);

  it('answers a sync call through the gateway and an async one through polls of results', async () => {
    const api = new Api(gateway.baseUrl);
    const sync = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 1 });
    expect([sync.status, sync.json]).toEqual([200, { Status: 'Accepted', Message: 'order 1' }]);
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'busy', 'asyncResponse=true&ms=300'), token, {});
    expect(started.status).toBe(202);
    const polled = await new Api(results.baseUrl).poll('acme', token, started.json.invocationId, 'waitSeconds=30');
    expect([polled.status, polled.json]).toEqual([200, { done: true, ms: 300 }]);
    const stored = await invocations().findOne({ _id: started.json.invocationId });
    expect(stored).toMatchObject({ botId: 'acme', status: 'Completed' });
  });

  it('hands uploaded files from the gateway to an executor on another "host" through GridFS', async () => {
    // Three GridFS chunks (255 KiB each) and a small file: the connector reads both back in ranges.
    const scan = Buffer.from(Array.from({ length: 600_000 }, (_, i) => (i * 7919) & 255));
    const notes = Buffer.from('line 1\nline 2\n'.repeat(100));
    const body = multipartBody([
      { name: 'orderId', data: '42' },
      { name: 'scan', filename: 'scan.pdf', contentType: 'application/pdf', data: scan },
      { name: 'notes', filename: 'notes.txt', contentType: 'text/plain', data: notes },
    ]);
    const api = new Api(gateway.baseUrl);
    const url = api.webhookUrl('acme', 'Order', 'files', 'asyncResponse=true', 'GenericIntegrationFileTransfer');
    const started = await api.call(url, token, { body, headers: { 'content-type': MULTIPART } });
    expect(started.status).toBe(202);
    const polled = await new Api(results.baseUrl).poll('acme', token, started.json.invocationId, 'waitSeconds=30');
    expect(polled.status).toBe(200);
    expect(polled.json).toEqual({
      Fields: { orderId: '42' },
      Files: [
        { PartName: 'scan', FileName: 'scan.pdf', ContentType: 'application/pdf', Size: scan.length, Sha256: sha256(scan), Verified: true },
        { PartName: 'notes', FileName: 'notes.txt', ContentType: 'text/plain', Size: notes.length, Sha256: sha256(notes), Verified: true },
      ],
    });

    const db = client.db(database);
    const files = await db.collection('files.files').find({ 'metadata.botId': 'acme', 'metadata.invocationId': started.json.invocationId }).toArray();
    expect(files.map((file) => file.length).sort((a, b) => a - b)).toEqual([notes.length, scan.length]);
    expect(await db.collection('files.chunks').countDocuments({ files_id: { $in: files.map((file) => file._id) } })).toBe(4);
    // Nothing went to a local disk.
    for (const service of all()) expect({ service: service.dataDir, files: existsSync(join(service.dataDir, 'files')) }).toEqual({ service: service.dataDir, files: false });
  });

  it('completes every accepted job exactly once when an executor is killed mid-run', async () => {
    const api = new Api(gateway.baseUrl);
    const replies = await Promise.all(
      Array.from({ length: 16 }, (_, i) => api.postJson(api.webhookUrl('acme', 'Order', 'busy', `asyncResponse=true&ms=400&n=${i}`), token, {})),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(16).fill(202));
    const accepted = replies.map((reply) => reply.json.invocationId as string);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await executors[1].stop('SIGKILL');

    const poller = new Api(results.baseUrl);
    for (const id of accepted) {
      const polled = await poller.poll('acme', token, id, 'waitSeconds=45');
      expect([polled.status, polled.json]).toEqual([200, { done: true, ms: 400 }]);
    }
    const runs = await invocations()
      .find({ _id: { $in: accepted } })
      .toArray();
    expect(runs).toHaveLength(accepted.length);
    expect(runs.every((run) => run.status === 'Completed')).toBe(true);
    // A job the killed executor held ran again once its lease (5 s) lapsed: two attempts at most.
    expect(Math.max(...runs.map((run) => run.attempt))).toBeLessThanOrEqual(2);
  }, 120_000);
});

/**
 * The promises that only a replica set of several members can put to the test: a primary stepping
 * down while calls arrive (rs.stepDown()), and secondaries that lag (held with fsyncLock, so the
 * majority cannot confirm). Runs against MONGO_URL when it names a set of three electable members;
 * elsewhere one SKIPPED line says why (docs/operations.md tells how to start one).
 */
describeWithReplicaSet('distributed deployment on a MongoDB replica set: failover and lag', 'MongoDB replica-set end-to-end suite (failover, lagging secondaries)', (url) => {
  const database = `gi-e2e-rs-${randomBytes(4).toString('hex')}`;
  let deployment: ReturnType<typeof distributedDeployment>;
  let client: MongoClient;
  let services: ServiceProcess[] = [];
  let api: Api;
  let poller: Api;
  let token: string;
  const invocations = () => client.db(database).collection<StoredInvocation & { entity: string }>('invocations');

  beforeAll(async () => {
    client = new MongoClient(url, { serverSelectionTimeoutMS: 30_000 });
    await client.connect();
    deployment = distributedDeployment('mongo-rs', { storeUrl: withDatabase(url, database) });
    const control = await deployment.start('control');
    const [gateway, results, ...executors] = await Promise.all([
      deployment.start('gateway'),
      deployment.start('results'),
      deployment.start('executor', ['--pools', 'default']),
      deployment.start('executor', ['--pools', 'default']),
    ]);
    services = [control, gateway, results, ...executors];
    token = await new Api(control.baseUrl).setUp('acme', 'Order', 'ack', example('ack'));
    api = new Api(gateway.baseUrl);
    poller = new Api(results.baseUrl);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    if (deployment) {
      await deleteBusTopology(deployment.prefix, ['default'], 6);
      rmSync(deployment.dataDir, { recursive: true, force: true });
    }
    await client?.db(database).dropDatabase();
    await client?.close();
  }, 120_000);

  /** The members other than the primary, each through a direct connection. */
  async function secondaries(): Promise<MongoClient[]> {
    const hello = await client.db('admin').command({ hello: 1 });
    const hosts = [...(hello.hosts as string[]), ...((hello.passives as string[] | undefined) ?? [])].filter((host) => host !== hello.primary);
    return Promise.all(hosts.map((host) => new MongoClient(directUrl(url, host), { serverSelectionTimeoutMS: 10_000 }).connect()));
  }

  /** Runs `during` while every secondary stops applying the primary's writes (fsyncLock): nothing new reaches a majority. */
  async function withSecondariesHeld<T>(during: () => Promise<T>): Promise<T> {
    const held = await secondaries();
    try {
      for (const member of held) await member.db('admin').command({ fsync: 1, lock: true });
      return await during();
    } finally {
      for (const member of held) {
        // Until no lock is left; a member whose lock failed answers that it is not locked.
        for (let lockCount = 1; lockCount > 0; ) {
          lockCount = await member
            .db('admin')
            .command({ fsyncUnlock: 1 })
            .then((answer) => Number(answer.lockCount ?? 0), () => 0);
        }
        await member.close();
      }
    }
  }

  const post = (key: string | null, body: unknown) =>
    api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, body, key ? { 'idempotency-key': `"${key}"` } : {});
  /** The invocation a keyed call's reply names: a new one (202), one still running (409) or finished (200). */
  const invocationOf = (reply: Reply): string => (reply.status === 200 ? (reply.headers.get('x-invocation-id') as string) : reply.json.invocationId);

  it('answers every call 2xx or 503 while the primary steps down, runs each accepted call once, and a 503 retried with its key once', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `failover-${i}`);
    const firstAnswers: number[] = [];
    const invocationByKey = new Map<string, string>();
    const callUntilAccepted = async (key: string, i: number) => {
      await sleep(i * 250);
      for (let attempt = 0; attempt < 10; attempt++) {
        const reply = await post(key, { orderId: i });
        if (attempt === 0) firstAnswers.push(reply.status);
        if (reply.status !== 503) {
          expect({ key, accepted: [200, 202, 409].includes(reply.status) }).toEqual({ key, accepted: true });
          invocationByKey.set(key, invocationOf(reply));
          return;
        }
        expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
        await sleep(Number(reply.headers.get('retry-after')) * 1000);
      }
      throw new Error(`${key} was never accepted`);
    };
    const calling = Promise.all(keys.map(callUntilAccepted));
    await sleep(2_000);
    // The primary hands over to a secondary (the connection it answers on is closed as it steps down).
    await client
      .db('admin')
      .command({ replSetStepDown: 20, secondaryCatchUpPeriodSecs: 10 })
      .catch(() => undefined);
    await calling;

    expect(firstAnswers.filter((status) => status !== 202 && status !== 503)).toEqual([]);
    for (const key of keys) {
      const polled = await poller.poll('acme', token, invocationByKey.get(key) as string, 'waitSeconds=45');
      expect({ key, status: polled.status }).toEqual({ key, status: 200 });
    }
    // One invocation per key, whatever was retried, each run to completion once (a second attempt only after a lost lease).
    const stored = await invocations().find({ botId: 'acme', entity: /"orderId":\d+/ }).toArray();
    expect(stored.map((run) => run._id).sort()).toEqual([...new Set(invocationByKey.values())].sort());
    expect(stored.every((run) => run.status === 'Completed' && run.attempt <= 2)).toBe(true);
  }, 180_000);

  it('answers concurrent repeats of a key only once the majority holds the first: never 404 while secondaries lag', async () => {
    const replies = await withSecondariesHeld(async () => {
      const racing = Promise.all(Array.from({ length: 8 }, () => post('lag-race', { orderId: 'race' })));
      await sleep(2_000);
      return racing;
    });
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(1);
    expect(statuses.filter((status) => ![200, 202, 409].includes(status))).toEqual([]);
    expect(new Set(replies.map(invocationOf)).size).toBe(1);
  }, 120_000);

  it('answers 503 when the majority does not confirm a call within 10 s, and never runs it; the key is free for the retry', async () => {
    const [plain, keyed] = await withSecondariesHeld(async () => {
      const started = Date.now();
      const answers = await Promise.all([post(null, { orderId: 'lag-timeout' }), post('lag-timeout-key', { orderId: 'lag-timeout' })]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
      return answers;
    });
    expect([plain.status, keyed.status]).toEqual([503, 503]);
    expect(plain.json.detail).toContain('nothing was accepted');
    // Past the republish time (5 s) and a few sweeps: nothing of either call was left to run.
    await sleep(12_000);
    expect(await invocations().countDocuments({ entity: /lag-timeout/ })).toBe(0);

    const retried = await post('lag-timeout-key', { orderId: 'lag-timeout' });
    expect(retried.status).toBe(202);
    expect((await poller.poll('acme', token, retried.json.invocationId, 'waitSeconds=30')).status).toBe(200);
    expect(await invocations().countDocuments({ entity: /lag-timeout/ })).toBe(1);
  }, 120_000);
});
