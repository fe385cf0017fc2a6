import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { StartedMongoDBContainer } from '@testcontainers/mongodb';
import { MongoClient } from 'mongodb';
import { dockerEngineAnswers } from './docker-engine';
import { describeWhere } from './suite-skip';
import type { SuiteNeed } from './suite-skip';

/** The MongoDB the tests use: a container's is started (and stopped) by the suite itself. */
export interface TestMongo {
  /** A replica set the driver can reach, without a database in its path. */
  url: string;
  stop(): Promise<void>;
}

/** The image of the one-node replica set started when a Docker engine answers. */
const MONGO_IMAGE = 'mongo:8.0';

/**
 * Describes `title` against MongoDB: the replica set at MONGO_URL, else a one-node replica set in a
 * container when a Docker engine answers (testcontainers), else nothing but one line
 * `SKIPPED <what>: no MONGO_URL and no Docker engine` and a skipped test saying how to run it
 * (suite-skip.ts; a failing test when REQUIRE_SUITES names mongo).
 * `suite` registers its tests; `mongo()` gives the server once the suite's beforeAll has started it.
 */
export function describeWithMongo(title: string, what: string, suite: (mongo: () => TestMongo) => void): void {
  const url = process.env.MONGO_URL || undefined;
  const source = url ? 'url' : dockerEngineAnswers() ? 'container' : 'none';
  const need: SuiteNeed = {
    suite: 'mongo',
    what,
    unavailable: source === 'none' ? 'no MONGO_URL and no Docker engine' : undefined,
    runsWhen: 'runs whenever MONGO_URL names a replica set or a Docker engine answers (testcontainers starts one)',
  };
  describeWhere(need, title, () => {
    let mongo: TestMongo | undefined;
    beforeAll(async () => {
      mongo = url ? { url, stop: async () => undefined } : await startMongoContainer();
    }, 180_000);
    afterAll(async () => {
      await mongo?.stop();
    }, 60_000);
    suite(() => {
      if (!mongo) throw new Error('MongoDB did not start (see beforeAll)');
      return mongo;
    });
  });
}

async function startMongoContainer(): Promise<TestMongo> {
  const { MongoDBContainer } = await import('@testcontainers/mongodb');
  const container: StartedMongoDBContainer = await new MongoDBContainer(MONGO_IMAGE).start();
  // The member announces its in-container host name; talk to it directly, not through discovery.
  return { url: `${container.getConnectionString()}/?directConnection=true`, stop: async () => void (await container.stop()) };
}

/** A database no other test uses (`gi-test-<random>`): each test gets its own and drops it afterwards. */
export const freshDatabaseName = () => `gi-test-${randomBytes(6).toString('hex')}`;

/**
 * The test's own client of the suite's MongoDB, for what a test reads or drops itself (not the store
 * under test, which brings its own settings): connected in a beforeAll of the describe that calls this,
 * closed in its afterAll. Call it inside a describeWithMongo suite, with the suite's `mongo`.
 */
export function mongoTestClient(mongo: () => TestMongo): () => MongoClient {
  let client: MongoClient | undefined;
  beforeAll(async () => {
    client = new MongoClient(mongo().url, { serverSelectionTimeoutMS: 10_000 });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
  });
  return () => {
    if (!client) throw new Error('The MongoDB test client is not connected (see beforeAll)');
    return client;
  };
}

/** The URL with `database` as its path, its options kept: `mongodb://h1,h2/?replicaSet=rs0` -> `mongodb://h1,h2/db?replicaSet=rs0`. */
export function withDatabase(url: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?#]+)(?:\/[^?#]*)?(\?[^#]*)?$/i.exec(url);
  if (!match) throw new Error(`Not a MongoDB URL: ${url}`);
  return `${match[1]}/${encodeURIComponent(database)}${match[2] ?? ''}`;
}

/** Members a replica set needs for the failover and lag tests: a primary and two secondaries that can be elected. */
export const REPLICA_SET_MEMBERS = 3;

// Prints how many electable members the replica set at argv[1] lists (0 when it cannot be reached).
const MEMBERS_SCRIPT = `
const { MongoClient } = require('mongodb');
const client = new MongoClient(process.argv[1], { serverSelectionTimeoutMS: 5000 });
client.connect()
  .then(() => client.db('admin').command({ hello: 1 }))
  .then((hello) => process.stdout.write(String(hello.setName ? (hello.hosts || []).length : 0)), () => process.stdout.write('0'))
  .finally(() => client.close());
`;

/**
 * Describes `title` against the replica set at MONGO_URL when it has REPLICA_SET_MEMBERS electable
 * members (a primary can step down and a secondary take over; secondaries can be made to lag); else
 * nothing but one line `SKIPPED <what>: ...` and a skipped test saying how to run it. A container of
 * one member is never enough, so no container is started. The members are counted at registration, in
 * a short-lived child process (jest registers tests synchronously).
 */
export function describeWithReplicaSet(title: string, what: string, suite: (url: string) => void): void {
  const url = process.env.MONGO_URL || undefined;
  let members = 0;
  if (url) {
    const run = spawnSync(process.execPath, ['-e', MEMBERS_SCRIPT, url], { timeout: 15_000, encoding: 'utf8' });
    members = Number(run.stdout) || 0;
  }
  const why = url
    ? `MONGO_URL names ${members === 0 ? 'no replica set that answers' : `a replica set of ${members} electable members`}; these tests need ${REPLICA_SET_MEMBERS}`
    : `no MONGO_URL naming a replica set of ${REPLICA_SET_MEMBERS} members`;
  const need: SuiteNeed = {
    suite: 'mongo',
    what,
    unavailable: members < REPLICA_SET_MEMBERS ? why : undefined,
    runsWhen: 'runs whenever MONGO_URL names one (docs/operations.md, "Running the MongoDB suites")',
  };
  describeWhere(need, title, () => suite(url as string));
}

/**
 * The URL of one member of the set at `url`, connected to directly (the credentials and options kept,
 * the set's name dropped): `mongodb://u:p@a,b,c/db?replicaSet=rs0&tls=true` -> `mongodb://u:p@b/db?tls=true&directConnection=true`.
 */
export function directUrl(url: string, host: string): string {
  const match = /^mongodb:\/\/([^@/?#]+@)?[^/?#]+(\/[^?#]*)?(?:\?([^#]*))?$/i.exec(url);
  if (!match) throw new Error(`Not a mongodb:// URL listing its hosts: ${url}`);
  const params = new URLSearchParams(match[3] ?? '');
  for (const name of [...params.keys()]) if (name.toLowerCase() === 'replicaset') params.delete(name);
  params.set('directConnection', 'true');
  return `mongodb://${match[1] ?? ''}${host}${match[2] || '/'}?${params}`;
}
