import type { TokenRecord, TokenStore } from '@gi/domain';
import { CatalogCache, pairKey } from './catalog-cache';
import type { SqliteDatabase } from './sqlite-database';

interface TokenRow {
  bot_id: string;
  token_id: string;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

const toRecord = (row: TokenRow): TokenRecord => Object.freeze({
  botId: row.bot_id,
  tokenId: row.token_id,
  label: row.label,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

/**
 * The registry of issued tokens (by id only: the token itself is never stored). Every webhook call
 * checks its token here: the records are cached while the catalog generation is unchanged, so a
 * revocation from any process is seen by the next check (catalog-cache.ts).
 */
export class SqliteTokenStore implements TokenStore {
  private readonly getStatement;
  private readonly cache: CatalogCache<TokenRecord | null>;

  constructor(private readonly db: SqliteDatabase) {
    this.getStatement = db.prepare('SELECT * FROM tokens WHERE bot_id = ? AND token_id = ?');
    this.cache = new CatalogCache(db);
  }

  async create(record: TokenRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO tokens (bot_id, token_id, label, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(record.botId, record.tokenId, record.label, record.createdAt, record.expiresAt, record.revokedAt);
  }

  async get(botId: string, tokenId: string): Promise<TokenRecord | null> {
    return this.cache.lookup(pairKey(botId, tokenId), () => {
      const row = this.getStatement.get(botId, tokenId) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    });
  }

  async list(botId: string): Promise<TokenRecord[]> {
    const rows = this.db.prepare('SELECT * FROM tokens WHERE bot_id = ? ORDER BY created_at DESC, token_id').all(botId) as TokenRow[];
    return rows.map(toRecord);
  }

  async revoke(botId: string, tokenId: string, now: number): Promise<boolean> {
    const result = this.db
      .prepare('UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE bot_id = ? AND token_id = ?')
      .run(now, botId, tokenId);
    return result.changes === 1;
  }

  async deleteAll(botId: string): Promise<number> {
    return this.db.prepare('DELETE FROM tokens WHERE bot_id = ?').run(botId).changes;
  }
}
