import type { EntityDefinition, IntegrationDefinition, IntegrationDraft, IntegrationSettings, IntegrationTarget, SigningSecret } from '../catalog';
import type { BotQuotas, Quotas } from '../quotas';

/** Bots' entities, integrations (connectors and their versions), quotas and callback signing secrets. */
export interface CatalogStore {
  putEntity(botId: string, name: string, extraFields: string[], now: number): Promise<EntityDefinition>;
  getEntity(botId: string, name: string): Promise<EntityDefinition | null>;
  listEntities(botId: string): Promise<EntityDefinition[]>;
  /** False when the bot had no such entity. */
  deleteEntity(botId: string, name: string): Promise<boolean>;
  /** Stores a new version of the integration (1 for the first deploy). */
  deployIntegration(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDefinition>;
  /** The latest version, or the given one. */
  getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null>;
  /** The latest version's target of calls alone, neither reading its code nor decoding its settings; null when `getIntegration` is. */
  resolveIntegration(botId: string, integrationId: string): Promise<IntegrationTarget | null>;
  listIntegrations(botId: string): Promise<IntegrationDefinition[]>;
  listIntegrationVersions(botId: string, integrationId: string): Promise<Array<{ version: number; deployedAt: number }>>;
  /** Stores the integration's draft, replacing the one it had; live calls keep using the latest version. */
  putDraft(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDraft>;
  getDraft(botId: string, integrationId: string): Promise<IntegrationDraft | null>;
  /**
   * Deploys the draft as the next version and removes it (only the draft drafted at `draftedAt`, so a
   * draft that replaced it meanwhile is left alone); null when there is no such draft.
   */
  publishDraft(botId: string, integrationId: string, draftedAt: number, now: number): Promise<IntegrationDefinition | null>;
  /** Deletes every version of the integration and its draft; returns how many versions there were (0: no such integration). */
  deleteIntegration(botId: string, integrationId: string): Promise<number>;
  listBots(): Promise<string[]>;
  /** Deletes the bot's entities, integrations (every version and draft), quotas and signing secrets. */
  deleteBot(botId: string): Promise<void>;
  /** The quotas of the bot and of its tokens; all defaults when none were set. */
  getQuotas(botId: string): Promise<BotQuotas>;
  /** Replaces the quotas of the bot (`tokenId` null) or of one of its tokens; all-null returns them to the defaults. */
  putQuotas(botId: string, tokenId: string | null, quotas: Quotas, now: number): Promise<void>;
  /** Adds the bot's new signing secret; those before it that had no end stay valid until `retireAt`. */
  rotateSigningSecret(botId: string, secret: SigningSecret, retireAt: number): Promise<void>;
  /** The bot's signing secrets still valid at `now`, newest first. */
  getSigningSecrets(botId: string, now: number): Promise<SigningSecret[]>;
  /** Every bot's signing secrets still valid at `now` (for re-encryption). */
  listSigningSecrets(now: number): Promise<Array<SigningSecret & { botId: string }>>;
  /** Replaces the stored form of one signing secret (sealing it), only while it is still `expected`; false otherwise. */
  resealSigningSecret(botId: string, expected: string, sealed: string): Promise<boolean>;
}
