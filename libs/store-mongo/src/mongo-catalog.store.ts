import type { Collection } from 'mongodb';
import { integrationSettingsOf, WEBHOOK_FIELDS, withDefaultLimits, withoutEmptySources } from '@gi/domain';
import type { BotQuotas, CatalogStore, EntityDefinition, IntegrationDefinition, IntegrationDraft, IntegrationSettings, IntegrationTarget, Quotas, SigningSecret } from '@gi/domain';
import type { DeletedIntegrationDocument, EntityDocument, IntegrationDocument, IntegrationDraftDocument, QuotaDocument, SigningSecretDocument, TokenDocument } from './mongo-documents';
import { isDuplicateKey, retriedOnFailover } from './mongo-errors';

/** Concurrent deploys of one integration retry on the unique version index; this many tries is plenty. */
const DEPLOY_ATTEMPTS = 20;

const toEntity = (doc: EntityDocument): EntityDefinition => ({ botId: doc.botId, name: doc.name, fields: doc.fields, updatedAt: doc.updatedAt });

const toIntegration = (doc: IntegrationDocument): IntegrationDefinition => ({
  botId: doc.botId,
  integrationId: doc.integrationId,
  version: doc.version,
  entityName: doc.entityName,
  code: doc.code,
  pool: doc.pool,
  timeoutSeconds: doc.timeoutSeconds,
  allowedHosts: doc.allowedHosts,
  limits: withDefaultLimits(doc.limits),
  callbackUrl: doc.callbackUrl ?? null,
  deployedAt: doc.deployedAt,
  ...(doc.sources && { sources: doc.sources }),
  ...(doc.inboundAuth && { inboundAuth: doc.inboundAuth }),
});

/** The bot's own quotas are the document with an empty token id. */
const BOT_QUOTAS = '';

const toQuotas = (doc: QuotaDocument): Quotas => ({ ratePerSecond: doc.ratePerSecond, burst: doc.burst, maxInFlight: doc.maxInFlight });

/** Entities, versioned integrations and quotas; every query is scoped to one bot except the bot listing. */
export class MongoCatalogStore implements CatalogStore {
  constructor(
    private readonly entities: Collection<EntityDocument>,
    private readonly integrations: Collection<IntegrationDocument>,
    private readonly tokens: Collection<TokenDocument>,
    private readonly quotas: Collection<QuotaDocument>,
    private readonly signingSecrets: Collection<SigningSecretDocument>,
    private readonly deleted: Collection<DeletedIntegrationDocument>,
    private readonly drafts: Collection<IntegrationDraftDocument>,
  ) {}

  async putEntity(botId: string, name: string, extraFields: string[], now: number): Promise<EntityDefinition> {
    const fields = [...WEBHOOK_FIELDS, ...extraFields.filter((f) => !(WEBHOOK_FIELDS as readonly string[]).includes(f))];
    // An upsert on the unique (botId, name) key: the server retries a concurrent upsert's duplicate-key race itself.
    await this.entities.updateOne({ botId, name }, { $set: { fields, updatedAt: now } }, { upsert: true });
    return { botId, name, fields, updatedAt: now };
  }

  async getEntity(botId: string, name: string): Promise<EntityDefinition | null> {
    const doc = await this.entities.findOne({ botId, name });
    return doc ? toEntity(doc) : null;
  }

  async listEntities(botId: string): Promise<EntityDefinition[]> {
    const docs = await this.entities.find({ botId }, { sort: { name: 1 } }).toArray();
    return docs.map(toEntity);
  }

  async deleteEntity(botId: string, name: string): Promise<boolean> {
    return (await this.entities.deleteOne({ botId, name })).deletedCount === 1;
  }

  async deployIntegration(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDefinition> {
    // Read the latest version, insert the next one; the unique index turns a concurrent deploy that took
    // the same number into a duplicate-key error, and that deploy tries a later number.
    // Version numbers are never reused: a deleted integration's last one is where a new deploy goes on from.
    let tried = (await this.deleted.findOne({ botId, integrationId }))?.lastVersion ?? 0;
    for (let attempt = 0; attempt < DEPLOY_ATTEMPTS; attempt++) {
      const latest = await this.integrations.findOne({ botId, integrationId }, { sort: { version: -1 }, projection: { version: 1 } });
      // Past the number that just collided too, even if the read does not show its holder yet.
      const version = Math.max((latest?.version ?? 0) + 1, tried + 1);
      tried = version;
      const definition: IntegrationDefinition = { botId, integrationId, version, deployedAt: now, ...withoutEmptySources(integrationSettingsOf(settings)) };
      try {
        // A copy: the driver adds _id to the document it inserts.
        await this.integrations.insertOne({
          ...definition,
          allowedHosts: [...settings.allowedHosts],
          limits: { ...settings.limits },
          ...(definition.sources && { sources: definition.sources.map((source) => ({ ...source })) }),
          ...(definition.inboundAuth && { inboundAuth: { ...definition.inboundAuth } }),
        });
        return definition;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
    throw new Error(`Integration ${integrationId} of bot ${botId} is being deployed by too many callers at once; try again.`);
  }

  async putDraft(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDraft> {
    const stored = integrationSettingsOf(settings);
    // A replacement on the unique (botId, integrationId) key: a new draft replaces the one before.
    await this.drafts.replaceOne(
      { botId, integrationId },
      { botId, integrationId, draftedAt: now, ...stored, allowedHosts: [...stored.allowedHosts], limits: { ...stored.limits } },
      { upsert: true },
    );
    return { botId, integrationId, draftedAt: now, ...stored };
  }

  async getDraft(botId: string, integrationId: string): Promise<IntegrationDraft | null> {
    const doc = await this.drafts.findOne({ botId, integrationId }, { projection: { _id: 0 } });
    if (!doc) return null;
    return { ...integrationSettingsOf({ ...doc, limits: withDefaultLimits(doc.limits), callbackUrl: doc.callbackUrl ?? null }), botId, integrationId, draftedAt: doc.draftedAt };
  }

  async publishDraft(botId: string, integrationId: string, draftedAt: number, now: number): Promise<IntegrationDefinition | null> {
    // Deploy, then remove that very draft. Without a transaction: a failure in between leaves the draft,
    // and publishing it again deploys it once more, as a later version (history is never rewritten).
    const draft = await this.getDraft(botId, integrationId);
    if (!draft || draft.draftedAt !== draftedAt) return null;
    const published = await this.deployIntegration(botId, integrationId, integrationSettingsOf(draft), now);
    await this.drafts.deleteOne({ botId, integrationId, draftedAt });
    return published;
  }

  async getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null> {
    const doc =
      version === undefined
        ? await this.integrations.findOne({ botId, integrationId }, { sort: { version: -1 } })
        : await this.integrations.findOne({ botId, integrationId, version });
    return doc ? toIntegration(doc) : null;
  }

  async resolveIntegration(botId: string, integrationId: string): Promise<IntegrationTarget | null> {
    const doc = await this.integrations.findOne(
      { botId, integrationId },
      { sort: { version: -1 }, projection: { _id: 0, integrationId: 1, version: 1, entityName: 1, pool: 1, callbackUrl: 1, inboundAuth: 1 } },
    );
    return doc
      ? { integrationId: doc.integrationId, version: doc.version, entityName: doc.entityName, pool: doc.pool, callbackUrl: doc.callbackUrl ?? null, ...(doc.inboundAuth && { inboundAuth: doc.inboundAuth }) }
      : null;
  }

  async listIntegrations(botId: string): Promise<IntegrationDefinition[]> {
    // Walks the (botId, integrationId, version desc) index and keeps the first document of each integration.
    const docs = await this.integrations
      .aggregate<IntegrationDocument>(
        [
          { $match: { botId } },
          { $sort: { integrationId: 1, version: -1 } },
          { $group: { _id: '$integrationId', latest: { $first: '$$ROOT' } } },
          { $replaceWith: '$latest' },
          { $sort: { integrationId: 1 } },
        ],
        { allowDiskUse: true },
      )
      .toArray();
    return docs.map(toIntegration);
  }

  async listIntegrationVersions(botId: string, integrationId: string): Promise<Array<{ version: number; deployedAt: number }>> {
    const docs = await this.integrations
      .find({ botId, integrationId }, { projection: { _id: 0, version: 1, deployedAt: 1 }, sort: { version: -1 } })
      .toArray();
    return docs.map((doc) => ({ version: doc.version, deployedAt: doc.deployedAt }));
  }

  async deleteIntegration(botId: string, integrationId: string): Promise<number> {
    await this.rememberLastVersions(botId, integrationId);
    await this.drafts.deleteOne({ botId, integrationId });
    return (await this.integrations.deleteMany({ botId, integrationId })).deletedCount;
  }

  /** Records the last version of the bot's integrations (or of one) before they are deleted. */
  private async rememberLastVersions(botId: string, integrationId?: string): Promise<void> {
    const latest = await this.integrations
      .aggregate<{ _id: string; lastVersion: number }>([
        { $match: integrationId === undefined ? { botId } : { botId, integrationId } },
        { $group: { _id: '$integrationId', lastVersion: { $max: '$version' } } },
      ])
      .toArray();
    for (const { _id, lastVersion } of latest) {
      await this.deleted.updateOne({ botId, integrationId: _id }, { $max: { lastVersion } }, { upsert: true });
    }
  }

  async deleteBot(botId: string): Promise<void> {
    // One collection after the other, without a transaction: each step is idempotent, so a deletion
    // cut short (a failover) is completed by repeating it.
    await this.entities.deleteMany({ botId });
    await this.rememberLastVersions(botId);
    await this.integrations.deleteMany({ botId });
    await this.drafts.deleteMany({ botId });
    await this.quotas.deleteMany({ botId });
    await this.signingSecrets.deleteMany({ botId });
  }

  async listBots(): Promise<string[]> {
    const lists = await Promise.all([this.entities.distinct('botId'), this.integrations.distinct('botId'), this.tokens.distinct('botId')]);
    return [...new Set(lists.flat())].sort();
  }

  async getQuotas(botId: string): Promise<BotQuotas> {
    const quotas: BotQuotas = { bot: { ratePerSecond: null, burst: null, maxInFlight: null }, tokens: {} };
    for (const doc of await this.quotas.find({ botId }).toArray()) {
      if (doc.tokenId === BOT_QUOTAS) quotas.bot = toQuotas(doc);
      else quotas.tokens[doc.tokenId] = toQuotas(doc);
    }
    return quotas;
  }

  async putQuotas(botId: string, tokenId: string | null, quotas: Quotas, now: number): Promise<void> {
    const key = { botId, tokenId: tokenId ?? BOT_QUOTAS };
    if (quotas.ratePerSecond === null && quotas.burst === null && quotas.maxInFlight === null) {
      await this.quotas.deleteOne(key);
      return;
    }
    const { ratePerSecond, burst, maxInFlight } = quotas;
    await this.quotas.updateOne(key, { $set: { ratePerSecond, burst, maxInFlight, updatedAt: now } }, { upsert: true });
  }

  async rotateSigningSecret(botId: string, secret: SigningSecret, retireAt: number): Promise<void> {
    // Retire first: a crash in between leaves the old secrets with an end and no new one, and the
    // caller (who never saw the new secret) simply rotates again. Not a retryable write (many
    // documents): sent again after a failover, it retires those the first try left.
    await retriedOnFailover(() =>
      this.signingSecrets.updateMany({ botId, $or: [{ expiresAt: null }, { expiresAt: { $gt: retireAt } }] }, { $set: { expiresAt: retireAt } }),
    );
    await this.signingSecrets.insertOne({ botId, ...secret });
  }

  async getSigningSecrets(botId: string, now: number): Promise<SigningSecret[]> {
    const docs = await this.signingSecrets
      .find({ botId, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] }, { sort: { createdAt: -1, _id: -1 } })
      .toArray();
    return docs.map((doc) => ({ secret: doc.secret, createdAt: doc.createdAt, expiresAt: doc.expiresAt }));
  }

  async listSigningSecrets(now: number): Promise<Array<SigningSecret & { botId: string }>> {
    const docs = await this.signingSecrets.find({ $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] }, { sort: { botId: 1, createdAt: -1, _id: -1 } }).toArray();
    return docs.map((doc) => ({ botId: doc.botId, secret: doc.secret, createdAt: doc.createdAt, expiresAt: doc.expiresAt }));
  }

  async resealSigningSecret(botId: string, expected: string, sealed: string): Promise<boolean> {
    return (await this.signingSecrets.updateOne({ botId, secret: expected }, { $set: { secret: sealed } })).matchedCount === 1;
  }
}
