import { MongoClient } from 'mongodb';
import type { Db } from 'mongodb';
import { systemClock } from '@gi/domain';
import type { Clock, Store } from '@gi/domain';
import { MongoCatalogStore } from './mongo-catalog.store';
import { COLLECTIONS } from './mongo-documents';
import type {
  SecretDocument,
  EntityDocument,
  IdempotencyKeyDocument,
  InstanceDocument,
  IntegrationDocument,
  InvocationDocument,
  JournalEntryDocument,
  KeptEventDocument,
  LogBatchDocument,
  QuotaDocument,
  SigningSecretDocument,
  DeletedIntegrationDocument,
  IntegrationDraftDocument,
  TokenDocument,
} from './mongo-documents';
import { withUnavailability } from './mongo-errors';
import { ensureIndexes } from './mongo-indexes';
import { MongoInstanceRegistry } from './mongo-instance.registry';
import { MAJORITY_WAIT_MS, MongoInvocationStore } from './mongo-invocation.store';
import { MongoJournalStore } from './mongo-journal.store';
import { MongoSecretStore } from './mongo-secret.store';
import { MongoTokenStore } from './mongo-token.store';

export interface MongoStoreOptions {
  clock?: Clock;
  /** The database; else the one named in the URL's path; else `generic-integration`. */
  dbName?: string;
  /** Shown in the server's logs and currentOp, e.g. the service name. */
  appName?: string;
  /** How long an operation waits for a reachable primary; SERVER_SELECTION_MS unless a test needs less. */
  serverSelectionTimeoutMS?: number;
  /** How long a write waits for the majority (wtimeout); MAJORITY_WAIT_MS unless a test needs less. */
  majorityWaitMs?: number;
}

/** The MongoDB store, and its database for what lives beside it on the same connection (GridFS files). */
export interface MongoStore extends Store {
  readonly database: Db;
}

export const DEFAULT_MONGO_DATABASE = 'generic-integration';
const PING_TIMEOUT_MS = 2_000;
/**
 * How long an operation waits for a primary: longer than an election (a new primary within about 12 s
 * of losing one, with the server's default settings), so the one retry of a write cut short by a
 * failover reaches the new primary. Then the store answers unavailable (503).
 */
export const SERVER_SELECTION_MS = 20_000;
/** How long opening a connection to a member may take. */
const CONNECT_MS = 10_000;

/**
 * The settings behind the store's promises. A connection string that sets one of them otherwise is
 * refused at start: the driver would let it win, silently (`readConcernLevel=local` over the majority
 * read concern, a `wtimeoutMS` over the code's). Setting one to the same value (Atlas strings carry
 * `retryWrites=true&w=majority`) is harmless.
 */
export const GUARANTEED_SETTINGS: Readonly<Record<string, string>> = {
  w: 'majority',
  wtimeoutMS: String(MAJORITY_WAIT_MS),
  wtimeout: String(MAJORITY_WAIT_MS),
  journal: 'true',
  j: 'true',
  readConcernLevel: 'majority',
  readPreference: 'primary',
  retryWrites: 'true',
  retryReads: 'true',
  serverSelectionTimeoutMS: String(SERVER_SELECTION_MS),
};
/** Connection string settings that only mean something when reads may go elsewhere than the primary. */
const SECONDARY_READ_SETTINGS = ['readPreferenceTags', 'maxStalenessSeconds'];

/**
 * The distributed store: invocations and the journals of durable runs, the catalog, the token registry and live instances in one MongoDB database.
 * A write resolves once a majority of the replica set holds it (within MAJORITY_WAIT_MS, else it is
 * undone where it must be and fails), a single-document write is retried once across a failover, and
 * reads see only majority-committed data, so an accepted invocation survives losing the primary and a
 * poll never sees a state that a failover could roll back. Failures that mean "not now" (no primary,
 * no majority in time) reach callers as unavailable (503 with Retry-After). Opens the connection and
 * creates the indexes before it resolves.
 */
export async function createMongoStore(url: string, options: MongoStoreOptions = {}): Promise<MongoStore> {
  const conflict = settingsConflict(url);
  if (conflict) throw new Error(`Cannot open the MongoDB store at ${redactUrl(url)}: ${conflict}`);
  const majorityWaitMs = options.majorityWaitMs ?? MAJORITY_WAIT_MS;
  const client = new MongoClient(url, {
    appName: options.appName ?? 'generic-integration',
    retryWrites: true,
    retryReads: true,
    writeConcern: { w: 'majority', wtimeoutMS: majorityWaitMs },
    readConcern: { level: 'majority' },
    readPreference: 'primary',
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? SERVER_SELECTION_MS,
    connectTimeoutMS: CONNECT_MS,
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
  const invocations = db.collection<InvocationDocument>(COLLECTIONS.invocations);
  const journal = {
    entries: db.collection<JournalEntryDocument>(COLLECTIONS.invocationJournal),
    events: db.collection<KeptEventDocument>(COLLECTIONS.invocationEvents),
  };
  return {
    invocations: withUnavailability(
      new MongoInvocationStore(
        invocations,
        db.collection<LogBatchDocument>(COLLECTIONS.invocationLogs),
        db.collection<IdempotencyKeyDocument>(COLLECTIONS.idempotencyKeys),
        journal,
        client,
        clock,
        majorityWaitMs,
      ),
    ),
    journal: withUnavailability(new MongoJournalStore(invocations, journal, client)),
    catalog: withUnavailability(
      new MongoCatalogStore(
        db.collection<EntityDocument>(COLLECTIONS.entities),
        db.collection<IntegrationDocument>(COLLECTIONS.integrations),
        db.collection<TokenDocument>(COLLECTIONS.tokens),
        db.collection<QuotaDocument>(COLLECTIONS.quotas),
        db.collection<SigningSecretDocument>(COLLECTIONS.signingSecrets),
        db.collection<DeletedIntegrationDocument>(COLLECTIONS.deletedIntegrations),
        db.collection<IntegrationDraftDocument>(COLLECTIONS.integrationDrafts),
      ),
    ),
    tokens: withUnavailability(new MongoTokenStore(db.collection<TokenDocument>(COLLECTIONS.tokens))),
    secrets: withUnavailability(new MongoSecretStore(db.collection<SecretDocument>(COLLECTIONS.secrets))),
    instances: withUnavailability(new MongoInstanceRegistry(db.collection<InstanceDocument>(COLLECTIONS.instances))),
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

/** Why the connection string cannot be used as it is: a setting of the store's given another value; null when none is. */
export function settingsConflict(url: string): string | null {
  const query = /\?([^#]*)/.exec(url)?.[1] ?? '';
  for (const [name, value] of new URLSearchParams(query)) {
    const setting = Object.keys(GUARANTEED_SETTINGS).find((key) => key.toLowerCase() === name.toLowerCase());
    if (setting && value.toLowerCase() !== GUARANTEED_SETTINGS[setting].toLowerCase()) {
      return `the connection string sets ${name}=${value}, but the store sets ${setting}=${GUARANTEED_SETTINGS[setting]} itself (its durability and consistency depend on it; see docs/operations.md); remove ${name} from the URL`;
    }
    if (SECONDARY_READ_SETTINGS.some((key) => key.toLowerCase() === name.toLowerCase())) {
      return `the connection string sets ${name}, but the store reads from the primary only (see docs/operations.md); remove ${name} from the URL`;
    }
  }
  return null;
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
