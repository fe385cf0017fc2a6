import type { SecretRef, SecretScope, StoredSecret } from '../secrets';

/** What `put` did: a new name, a new value for a name, or nothing because the scope is full. */
export type SecretPut = 'created' | 'updated' | 'full';

/** Connector secrets, sealed (the store never sees a value in clear). */
export interface SecretStore {
  /**
   * Sets the secret (a new one, or a new value for its name: `createdAt` stays); refused ('full') when
   * it is new and its scope already holds `maxPerScope`.
   */
  put(ref: SecretRef, sealed: string, now: number, maxPerScope: number): Promise<SecretPut>;
  /** The scope's own secrets, by name. */
  list(scope: SecretScope): Promise<StoredSecret[]>;
  /** What a run of the integration reads: the bot's secrets and the integration's, by name. */
  listForRun(botId: string, integrationId: string): Promise<StoredSecret[]>;
  /** False when there was no such secret. */
  delete(ref: SecretRef): Promise<boolean>;
  /** Deletes one integration's secrets, or (no `integrationId`) the bot's in every scope; returns how many. */
  deleteAll(botId: string, integrationId?: string): Promise<number>;
  /** Every stored secret after `after` (by bot, integration, name), at most `limit`: for re-encryption. */
  page(after: SecretRef | null, limit: number): Promise<StoredSecret[]>;
  /** Replaces the sealed value only while it is still `expected` (a re-encryption never undoes a write); false otherwise. */
  reseal(ref: SecretRef, expected: string, sealed: string): Promise<boolean>;
}
