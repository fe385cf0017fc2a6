import type { StartedMongoDBContainer } from '@testcontainers/mongodb';
import { dockerEngineAnswers } from './docker-engine';

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
 * `SKIPPED <what>: no MONGO_URL and no Docker engine` and a skipped test saying how to run it.
 * `suite` registers its tests; `mongo()` gives the server once the suite's beforeAll has started it.
 */
export function describeWithMongo(title: string, what: string, suite: (mongo: () => TestMongo) => void): void {
  const url = process.env.MONGO_URL || undefined;
  const source = url ? 'url' : dockerEngineAnswers() ? 'container' : 'none';
  if (source === 'none') {
    describe(title, () => {
      process.stdout.write(`SKIPPED ${what}: no MONGO_URL and no Docker engine\n`);
      it.skip(
        `${what}: skipped because no MongoDB server answers here (no MONGO_URL, no Docker engine); runs whenever MONGO_URL names a replica set or a Docker engine answers (testcontainers starts one)`,
        () => undefined,
      );
    });
    return;
  }
  describe(title, () => {
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

/** The URL with `database` as its path, its options kept: `mongodb://h1,h2/?replicaSet=rs0` -> `mongodb://h1,h2/db?replicaSet=rs0`. */
export function withDatabase(url: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?#]+)(?:\/[^?#]*)?(\?[^#]*)?$/i.exec(url);
  if (!match) throw new Error(`Not a MongoDB URL: ${url}`);
  return `${match[1]}/${encodeURIComponent(database)}${match[2] ?? ''}`;
}
