import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { deleteBusTopology, describeWithMongo, withDatabase } from '@gi/testing';
import { Api } from './api-client';
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
