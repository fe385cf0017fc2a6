import type { Collection, Filter } from 'mongodb';
import type { SecretPut, SecretRef, SecretScope, SecretStore, StoredSecret } from '@gi/domain';
import type { SecretDocument } from './mongo-documents';
import { isDuplicateKey } from './mongo-errors';

const toSecret = (doc: SecretDocument): StoredSecret => ({
  botId: doc.botId,
  integrationId: doc.scope === '' ? null : doc.scope,
  name: doc.name,
  sealed: doc.sealed,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

/** A bot's own secrets are kept under scope '' (never a valid integration id). */
const keyOf = ({ botId, integrationId, name }: SecretRef) => ({ botId, scope: integrationId ?? '', name });
const ORDER = { botId: 1, scope: 1, name: 1 } as const;
const PROJECTION = { _id: 0 } as const;

/** Connector secrets, sealed; one document per scope and name. */
export class MongoSecretStore implements SecretStore {
  constructor(private readonly secrets: Collection<SecretDocument>) {}

  async put(ref: SecretRef, sealed: string, now: number, maxPerScope: number): Promise<SecretPut> {
    const key = keyOf(ref);
    if ((await this.secrets.updateOne(key, { $set: { sealed, updatedAt: now } })).matchedCount === 1) return 'updated';
    // Counted then inserted: two new names set at the same instant may both pass a scope one short of
    // full; the limit guards against runaway scripts, not against that.
    if ((await this.secrets.countDocuments({ botId: key.botId, scope: key.scope })) >= maxPerScope) return 'full';
    try {
      await this.secrets.insertOne({ ...key, sealed, createdAt: now, updatedAt: now });
      return 'created';
    } catch (error) {
      // Set concurrently: this value replaces that one, as it would a moment later.
      if (!isDuplicateKey(error)) throw error;
      await this.secrets.updateOne(key, { $set: { sealed, updatedAt: now } });
      return 'updated';
    }
  }

  async list({ botId, integrationId }: SecretScope): Promise<StoredSecret[]> {
    const docs = await this.secrets.find({ botId, scope: integrationId ?? '' }, { sort: ORDER, projection: PROJECTION }).toArray();
    return docs.map(toSecret);
  }

  async listForRun(botId: string, integrationId: string): Promise<StoredSecret[]> {
    const docs = await this.secrets.find({ botId, scope: { $in: ['', integrationId] } }, { sort: ORDER, projection: PROJECTION }).toArray();
    return docs.map(toSecret);
  }

  async delete(ref: SecretRef): Promise<boolean> {
    return (await this.secrets.deleteOne(keyOf(ref))).deletedCount === 1;
  }

  async deleteAll(botId: string, integrationId?: string): Promise<number> {
    return (await this.secrets.deleteMany(integrationId === undefined ? { botId } : { botId, scope: integrationId })).deletedCount;
  }

  async page(after: SecretRef | null, limit: number): Promise<StoredSecret[]> {
    let filter: Filter<SecretDocument> = {};
    if (after) {
      const { botId, scope, name } = keyOf(after);
      filter = { $or: [{ botId: { $gt: botId } }, { botId, scope: { $gt: scope } }, { botId, scope, name: { $gt: name } }] };
    }
    const docs = await this.secrets.find(filter, { sort: ORDER, limit, projection: PROJECTION }).toArray();
    return docs.map(toSecret);
  }

  async reseal(ref: SecretRef, expected: string, sealed: string): Promise<boolean> {
    return (await this.secrets.updateOne({ ...keyOf(ref), sealed: expected }, { $set: { sealed } })).matchedCount === 1;
  }
}
