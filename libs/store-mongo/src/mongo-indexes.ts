import type { Db, IndexDescription } from 'mongodb';
import { COLLECTIONS } from './mongo-documents';

/**
 * Every index the store relies on, by collection. Names are fixed, so creating them again at each
 * start is a no-op on the server; a changed definition fails loudly (IndexOptionsConflict) instead of
 * piling up a second index.
 */
export const INDEXES: Record<keyof typeof COLLECTIONS, IndexDescription[]> = {
  invocations: [
    // The id alone is the primary key (_id): an invocation id is never reused, whatever the bot.
    { name: 'bot_newest_first', key: { botId: 1, createdAt: -1, _id: 1 } },
    { name: 'queued_by_published', key: { status: 1, publishedAt: 1 } },
    { name: 'running_by_lease', key: { status: 1, leaseUntil: 1 } },
    { name: 'recent_runs', key: { botId: 1, integrationId: 1, finishedAt: -1 } },
    // Invocations in flight per bot, counted for quotas.
    { name: 'bot_by_status', key: { botId: 1, status: 1 } },
    { name: 'callbacks_due', key: { 'callback.dueAt': 1 }, partialFilterExpression: { 'callback.state': 'pending' } },
    // Waiting invocations by wake time, for the sweeper's wake-up: only they are in it.
    { name: 'waiting_by_wake', key: { 'waiting.until': 1 }, partialFilterExpression: { status: 'Waiting' } },
    // The TTL monitor deletes a record once expireAt has passed; it runs about once a minute, so every
    // read also filters on expireAt and an expired record is gone for callers at once. Never one that
    // an executor holds: its run goes on and records its outcome (the expiry sweep removes it after).
    { name: 'ttl_expire_at_unleased', key: { expireAt: 1 }, expireAfterSeconds: 0, partialFilterExpression: { leaseOwner: { $type: 'null' } } },
  ],
  // An invocation's batches in order; gone with it.
  invocationLogs: [
    { name: 'bot_invocation_in_order', key: { botId: 1, invocationId: 1, attempt: 1, seq: 1 } },
    { name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 },
  ],
  // A durable run's journal: one entry per step name and occurrence, read in the order written; gone with its invocation.
  invocationJournal: [
    { name: 'unique_bot_invocation_step', key: { botId: 1, invocationId: 1, name: 1, occurrence: 1 }, unique: true },
    { name: 'bot_invocation_in_order', key: { botId: 1, invocationId: 1, seq: 1 } },
    { name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 },
  ],
  // Events kept for a wait, oldest first per name; gone with their invocation.
  invocationEvents: [
    { name: 'bot_invocation_name_in_order', key: { botId: 1, invocationId: 1, name: 1, seq: 1 } },
    { name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 },
  ],
  entities: [{ name: 'unique_bot_entity', key: { botId: 1, name: 1 }, unique: true }],
  // Two concurrent deploys can never both record the same version.
  integrations: [{ name: 'unique_bot_integration_version', key: { botId: 1, integrationId: 1, version: -1 }, unique: true }],
  tokens: [{ name: 'unique_bot_token', key: { botId: 1, tokenId: 1 }, unique: true }],
  // One record per key and bot, however many requests race to take it; gone once expired.
  idempotencyKeys: [
    { name: 'unique_bot_key', key: { botId: 1, key: 1 }, unique: true },
    { name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 },
  ],
  quotas: [{ name: 'unique_bot_quota', key: { botId: 1, tokenId: 1 }, unique: true }],
  signingSecrets: [{ name: 'bot_newest_first', key: { botId: 1, createdAt: -1 } }],
  // One value per name and scope; also the order re-encryption pages in.
  secrets: [{ name: 'unique_bot_scope_name', key: { botId: 1, scope: 1, name: 1 }, unique: true }],
  deletedIntegrations: [{ name: 'unique_bot_integration', key: { botId: 1, integrationId: 1 }, unique: true }],
  // One draft per integration.
  integrationDrafts: [{ name: 'unique_bot_integration', key: { botId: 1, integrationId: 1 }, unique: true }],
  instances: [
    { name: 'role_by_seen', key: { role: 1, seenAt: 1 } },
    { name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 },
  ],
};

/** Indexes of earlier releases that this one replaced, dropped at start before their successors are created. */
export const RETIRED_INDEXES: Partial<Record<keyof typeof COLLECTIONS, string[]>> = {
  // Deleted invocations whose run was still under way.
  invocations: ['ttl_expire_at'],
};

/** IndexNotFound, NamespaceNotFound: a retired index already gone, or a collection not created yet. */
const ALREADY_GONE = new Set([26, 27]);

/**
 * Creates the collections' indexes; safe to run from every process at every start. A new index
 * commits once a majority of the voting members built it, not every one of them (the server's
 * default): an upgrade with a member down starts, and the member builds it when it is back.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES) as Array<[keyof typeof COLLECTIONS, IndexDescription[]]>) {
    const target = db.collection(COLLECTIONS[collection]);
    for (const name of RETIRED_INDEXES[collection] ?? []) {
      await target.dropIndex(name).catch((error: { code?: unknown }) => {
        if (!ALREADY_GONE.has(Number(error?.code))) throw error;
      });
    }
    await target.createIndexes(indexes, { commitQuorum: 'majority' });
  }
}
