import type { SecretPut, SecretRef, SecretScope, SecretStore, StoredSecret } from '@gi/domain';
import type { SqliteDatabase } from './sqlite-database';

interface SecretRow {
  bot_id: string;
  integration_id: string;
  name: string;
  sealed: string;
  created_at: number;
  updated_at: number;
}

const toSecret = (row: SecretRow): StoredSecret => ({
  botId: row.bot_id,
  integrationId: row.integration_id === '' ? null : row.integration_id,
  name: row.name,
  sealed: row.sealed,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** A bot's own secrets are stored under integration id '' (never a valid integration id). */
const scopeKey = (integrationId: string | null) => integrationId ?? '';

/** Connector secrets, sealed; one row per scope and name. */
export class SqliteSecretStore implements SecretStore {
  private readonly putSecret: (ref: SecretRef, sealed: string, now: number, maxPerScope: number) => SecretPut;
  /** Read at every run: prepared once. */
  private readonly forRunStatement;

  constructor(private readonly db: SqliteDatabase) {
    this.forRunStatement = db.prepare("SELECT * FROM secrets WHERE bot_id = ? AND integration_id IN ('', ?) ORDER BY integration_id, name");
    const update = db.prepare('UPDATE secrets SET sealed = ?, updated_at = ? WHERE bot_id = ? AND integration_id = ? AND name = ?');
    const count = db.prepare('SELECT COUNT(*) AS n FROM secrets WHERE bot_id = ? AND integration_id = ?');
    const insert = db.prepare('INSERT INTO secrets (bot_id, integration_id, name, sealed, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
    // One transaction: the count and the insert see the same rows.
    this.putSecret = db.transaction((ref: SecretRef, sealed: string, now: number, maxPerScope: number): SecretPut => {
      const scope = scopeKey(ref.integrationId);
      if (update.run(sealed, now, ref.botId, scope, ref.name).changes === 1) return 'updated';
      if ((count.get(ref.botId, scope) as { n: number }).n >= maxPerScope) return 'full';
      insert.run(ref.botId, scope, ref.name, sealed, now, now);
      return 'created';
    });
  }

  async put(ref: SecretRef, sealed: string, now: number, maxPerScope: number): Promise<SecretPut> {
    return this.putSecret(ref, sealed, now, maxPerScope);
  }

  async list({ botId, integrationId }: SecretScope): Promise<StoredSecret[]> {
    const rows = this.db.prepare('SELECT * FROM secrets WHERE bot_id = ? AND integration_id = ? ORDER BY name').all(botId, scopeKey(integrationId)) as SecretRow[];
    return rows.map(toSecret);
  }

  async listForRun(botId: string, integrationId: string): Promise<StoredSecret[]> {
    const rows = this.forRunStatement.all(botId, integrationId) as SecretRow[];
    return rows.map(toSecret);
  }

  async delete(ref: SecretRef): Promise<boolean> {
    return this.db.prepare('DELETE FROM secrets WHERE bot_id = ? AND integration_id = ? AND name = ?').run(ref.botId, scopeKey(ref.integrationId), ref.name).changes === 1;
  }

  async deleteAll(botId: string, integrationId?: string): Promise<number> {
    const { changes } =
      integrationId === undefined
        ? this.db.prepare('DELETE FROM secrets WHERE bot_id = ?').run(botId)
        : this.db.prepare('DELETE FROM secrets WHERE bot_id = ? AND integration_id = ?').run(botId, scopeKey(integrationId));
    return changes;
  }

  async page(after: SecretRef | null, limit: number): Promise<StoredSecret[]> {
    const rows = after
      ? this.db
          .prepare('SELECT * FROM secrets WHERE (bot_id, integration_id, name) > (?, ?, ?) ORDER BY bot_id, integration_id, name LIMIT ?')
          .all(after.botId, scopeKey(after.integrationId), after.name, limit)
      : this.db.prepare('SELECT * FROM secrets ORDER BY bot_id, integration_id, name LIMIT ?').all(limit);
    return (rows as SecretRow[]).map(toSecret);
  }

  async reseal(ref: SecretRef, expected: string, sealed: string): Promise<boolean> {
    const result = this.db
      .prepare('UPDATE secrets SET sealed = ? WHERE bot_id = ? AND integration_id = ? AND name = ? AND sealed = ?')
      .run(sealed, ref.botId, scopeKey(ref.integrationId), ref.name, expected);
    return result.changes === 1;
  }
}
