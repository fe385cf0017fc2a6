import type { TokenRecord } from '../catalog';

/** The registry of bot tokens: every token id, so any token can be revoked at once. */
export interface TokenStore {
  create(record: TokenRecord): Promise<void>;
  get(botId: string, tokenId: string): Promise<TokenRecord | null>;
  list(botId: string): Promise<TokenRecord[]>;
  /** False when there is no such token. */
  revoke(botId: string, tokenId: string, now: number): Promise<boolean>;
  /** Removes every token of the bot from the registry (they no longer authenticate); returns how many. */
  deleteAll(botId: string): Promise<number>;
}
