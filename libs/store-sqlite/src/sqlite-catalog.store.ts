import { WEBHOOK_FIELDS, withDefaultLimits } from '@gi/domain';
import type { CatalogStore, EntityDefinition, IntegrationDefinition, IntegrationSettings } from '@gi/domain';
import type { SqliteDatabase } from './sqlite-database';

interface IntegrationRow {
  bot_id: string;
  integration_id: string;
  version: number;
  entity_name: string;
  code: string;
  pool: string;
  timeout_seconds: number;
  allowed_hosts: string;
  limits: string | null;
  deployed_at: number;
}

const toIntegration = (row: IntegrationRow): IntegrationDefinition => ({
  botId: row.bot_id,
  integrationId: row.integration_id,
  version: row.version,
  entityName: row.entity_name,
  code: row.code,
  pool: row.pool,
  timeoutSeconds: row.timeout_seconds,
  allowedHosts: JSON.parse(row.allowed_hosts),
  limits: withDefaultLimits(row.limits === null ? null : JSON.parse(row.limits)),
  deployedAt: row.deployed_at,
});

const toEntity = (row: { bot_id: string; name: string; fields: string; updated_at: number }): EntityDefinition => ({
  botId: row.bot_id,
  name: row.name,
  fields: JSON.parse(row.fields),
  updatedAt: row.updated_at,
});

export class SqliteCatalogStore implements CatalogStore {
  private readonly statements;

  constructor(private readonly db: SqliteDatabase) {
    this.statements = {
      latest: db.prepare('SELECT * FROM integrations WHERE bot_id = ? AND integration_id = ? ORDER BY version DESC LIMIT 1'),
      version: db.prepare('SELECT * FROM integrations WHERE bot_id = ? AND integration_id = ? AND version = ?'),
    };
  }

  async putEntity(botId: string, name: string, extraFields: string[], now: number): Promise<EntityDefinition> {
    const fields = [...WEBHOOK_FIELDS, ...extraFields.filter((f) => !(WEBHOOK_FIELDS as readonly string[]).includes(f))];
    this.db
      .prepare(`INSERT INTO entities (bot_id, name, fields, updated_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (bot_id, name) DO UPDATE SET fields = excluded.fields, updated_at = excluded.updated_at`)
      .run(botId, name, JSON.stringify(fields), now);
    return { botId, name, fields, updatedAt: now };
  }

  async getEntity(botId: string, name: string): Promise<EntityDefinition | null> {
    const row = this.db.prepare('SELECT * FROM entities WHERE bot_id = ? AND name = ?').get(botId, name);
    return row ? toEntity(row as Parameters<typeof toEntity>[0]) : null;
  }

  async listEntities(botId: string): Promise<EntityDefinition[]> {
    const rows = this.db.prepare('SELECT * FROM entities WHERE bot_id = ? ORDER BY name').all(botId);
    return rows.map((row) => toEntity(row as Parameters<typeof toEntity>[0]));
  }

  async deployIntegration(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDefinition> {
    // The next version number and the insert happen in one write transaction, so concurrent deploys get distinct versions.
    const deploy = this.db.transaction(() => {
      const { latest } = this.db
        .prepare('SELECT COALESCE(MAX(version), 0) AS latest FROM integrations WHERE bot_id = ? AND integration_id = ?')
        .get(botId, integrationId) as { latest: number };
      const definition: IntegrationDefinition = { botId, integrationId, version: latest + 1, deployedAt: now, ...settings };
      this.db
        .prepare(`INSERT INTO integrations (bot_id, integration_id, version, entity_name, code, pool, timeout_seconds, allowed_hosts, limits, deployed_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(
          botId,
          integrationId,
          definition.version,
          settings.entityName,
          settings.code,
          settings.pool,
          settings.timeoutSeconds,
          JSON.stringify(settings.allowedHosts),
          JSON.stringify(settings.limits),
          now,
        );
      return definition;
    });
    return deploy.immediate();
  }

  async getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null> {
    const row =
      version === undefined
        ? this.statements.latest.get(botId, integrationId)
        : this.statements.version.get(botId, integrationId, version);
    return row ? toIntegration(row as IntegrationRow) : null;
  }

  async listIntegrations(botId: string): Promise<IntegrationDefinition[]> {
    const rows = this.db
      .prepare(`SELECT i.* FROM integrations i
        JOIN (SELECT integration_id, MAX(version) AS version FROM integrations WHERE bot_id = ? GROUP BY integration_id) latest
          ON latest.integration_id = i.integration_id AND latest.version = i.version
        WHERE i.bot_id = ? ORDER BY i.integration_id`)
      .all(botId, botId) as IntegrationRow[];
    return rows.map(toIntegration);
  }

  async listIntegrationVersions(botId: string, integrationId: string): Promise<Array<{ version: number; deployedAt: number }>> {
    const rows = this.db
      .prepare('SELECT version, deployed_at FROM integrations WHERE bot_id = ? AND integration_id = ? ORDER BY version DESC')
      .all(botId, integrationId) as Array<{ version: number; deployed_at: number }>;
    return rows.map((row) => ({ version: row.version, deployedAt: row.deployed_at }));
  }

  async listBots(): Promise<string[]> {
    const rows = this.db
      .prepare('SELECT bot_id FROM entities UNION SELECT bot_id FROM integrations UNION SELECT bot_id FROM tokens ORDER BY bot_id')
      .all() as Array<{ bot_id: string }>;
    return rows.map((row) => row.bot_id);
  }
}
