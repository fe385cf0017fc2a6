import type { Collection } from 'mongodb';
import type { TokenRecord, TokenStore } from '@gi/domain';
import type { TokenDocument } from './mongo-documents';

const toRecord = (doc: TokenDocument): TokenRecord => ({
  botId: doc.botId,
  tokenId: doc.tokenId,
  label: doc.label,
  createdAt: doc.createdAt,
  expiresAt: doc.expiresAt,
  revokedAt: doc.revokedAt,
});

/** The registry of issued tokens (by id only: the token itself is never stored). */
export class MongoTokenStore implements TokenStore {
  constructor(private readonly tokens: Collection<TokenDocument>) {}

  async create(record: TokenRecord): Promise<void> {
    // A copy: the driver adds _id to the document it inserts.
    await this.tokens.insertOne({ ...record });
  }

  async get(botId: string, tokenId: string): Promise<TokenRecord | null> {
    const doc = await this.tokens.findOne({ botId, tokenId });
    return doc ? toRecord(doc) : null;
  }

  async list(botId: string): Promise<TokenRecord[]> {
    const docs = await this.tokens.find({ botId }, { sort: { createdAt: -1, tokenId: 1 } }).toArray();
    return docs.map(toRecord);
  }

  async revoke(botId: string, tokenId: string, now: number): Promise<boolean> {
    // A pipeline update keeps the first revocation time, in one atomic step.
    const result = await this.tokens.updateOne({ botId, tokenId }, [{ $set: { revokedAt: { $ifNull: ['$revokedAt', now] } } }]);
    return result.matchedCount === 1;
  }

  async deleteAll(botId: string): Promise<number> {
    return (await this.tokens.deleteMany({ botId })).deletedCount;
  }
}
