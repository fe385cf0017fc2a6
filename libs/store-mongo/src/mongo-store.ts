import { MongoClient } from 'mongodb';
import type { Db } from 'mongodb';
import { systemClock } from '@gi/domain';
import type { Clock, Store } from '@gi/domain';
import { MongoCatalogStore } from './mongo-catalog.store';
import { COLLECTIONS } from './mongo-documents';
import type {
  EntityDocument,
  IdempotencyKeyDocument,
  InstanceDocument,
  IntegrationDocument,
  InvocationDocument,
  QuotaDocument,
  SigningSecretDocument,
  TokenDocument,
} from './mongo-documents';
import { ensureIndexes } from './mongo-indexes';
import { MongoInstanceRegistry } from './mongo-instance.registry';
import { MongoInvocationStore } from './mongo-invocation.store';
import { MongoTokenStore } from './mongo-token.store';

export interface MongoStoreOptions {
  clock?: Clock;
  /** The database; else the one named in the URL's path; else `generic-integration`. */
  dbName?: string;
  /** Shown in the server's logs and currentOp, e.g. the service name. */
  appName?: string;
  /** How long an operation waits for a reachable primary (an election takes a few seconds). */
  serverSelectionTimeoutMS?: number;
}

/** The MongoDB store, and its database for what lives beside it on the same connection (GridFS files). */
export interface MongoStore extends Store {
  readonly database: Db;
}

export const DEFAULT_MONGO_DATABASE = 'generic-integration';
const PING_TIMEOUT_MS = 2_000;

/**
 * The distributed store: invocations, the catalog, the token registry and live instances in one MongoDB database.
 * A write resolves once a majority of the replica set holds it (and writes are retried once across a
 * failover), reads see only majority-committed data, so an accepted invocation survives losing the
 * primary and a poll never sees a state that a failover could roll back. These settings win over any
 * given in the URL. Opens the connection and creates the indexes before it resolves.
 */
export async function createMongoStore(url: string, options: MongoStoreOptions = {}): Promise<MongoStore> {
  const client = new MongoClient(url, {
    appName: options.appName ?? 'generic-integration',
    retryWrites: true,
    retryReads: true,
    writeConcern: { w: 'majority', wtimeoutMS: 10_000 },
    readConcern: { level: 'majority' },
    readPreference: 'primary',
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
  });
  let db: Db;
  try {
    await client.connect();
    db = client.db(options.dbName ?? databaseNameOf(url) ?? DEFAULT_MONGO_DATABASE);
    await requireReplicaSet(db);
    await ensureIndexes(db);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new Error(`Cannot open the MongoDB store at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
  }
  const clock = options.clock ?? systemClock;
  return {
    invocations: new MongoInvocationStore(
      db.collection<InvocationDocument>(COLLECTIONS.invocations),
      db.collection<IdempotencyKeyDocument>(COLLECTIONS.idempotencyKeys),
      client,
      clock,
    ),
    catalog: new MongoCatalogStore(
      db.collection<EntityDocument>(COLLECTIONS.entities),
      db.collection<IntegrationDocument>(COLLECTIONS.integrations),
      db.collection<TokenDocument>(COLLECTIONS.tokens),
      db.collection<QuotaDocument>(COLLECTIONS.quotas),
      db.collection<SigningSecretDocument>(COLLECTIONS.signingSecrets),
    ),
    tokens: new MongoTokenStore(db.collection<TokenDocument>(COLLECTIONS.tokens)),
    instances: new MongoInstanceRegistry(db.collection<InstanceDocument>(COLLECTIONS.instances)),
    database: db,
    ping: () => ping(db),
    close: () => client.close(),
  };
}

/** Majority writes and retryable writes need a replica set (one node is enough) or a sharded cluster. */
async function requireReplicaSet(db: Db): Promise<void> {
  const hello = await db.admin().command({ hello: 1 });
  if (typeof hello.setName !== 'string' && hello.msg !== 'isdbgrid') {
    throw new Error(
      'the server is a standalone mongod; the store needs a replica set (one node is enough: start mongod with --replSet rs0 and run rs.initiate() once) or a sharded cluster',
    );
  }
}

/** Readiness: the primary answers within a short time. */
async function ping(db: Db): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
  });
  const answer = db
    .command({ ping: 1 })
    .then((reply) => reply.ok === 1)
    .catch(() => false);
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database named in the URL's path (`mongodb://host/name?...`), if any. */
export function databaseNameOf(url: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?#]*\/([^?#]+)/i.exec(url);
  return match ? decodeURIComponent(match[1]) : undefined;
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:/?#@]*):[^@/?#]*@/i, '$1:***@');
}
