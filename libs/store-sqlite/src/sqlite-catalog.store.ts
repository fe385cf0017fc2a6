import { integrationSettingsOf, WEBHOOK_FIELDS, withDefaultLimits, withoutEmptySources } from '@gi/domain';
import type { BotQuotas, CatalogStore, EntityDefinition, IntegrationDefinition, IntegrationDraft, IntegrationSettings, IntegrationTarget, Quotas, SigningSecret } from '@gi/domain';
import { CatalogCache, pairKey } from './catalog-cache';
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
  callback_url: string | null;
  sources: string | null;
  /** The inbound auth of a scheme other than bearer (JSON); null: a bot token. */
  inbound_auth: string | null;
}

const inboundAuthOfRow = (row: Pick<IntegrationRow, 'inbound_auth'>): Pick<IntegrationSettings, 'inboundAuth'> =>
  row.inbound_auth === null ? {} : { inboundAuth: JSON.parse(row.inbound_auth) };

/** What the column keeps: nothing for bearer, the default. */
const inboundAuthColumn = (settings: IntegrationSettings): string | null =>
  settings.inboundAuth && settings.inboundAuth.scheme !== 'bearer' ? JSON.stringify(settings.inboundAuth) : null;

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
  callbackUrl: row.callback_url,
  deployedAt: row.deployed_at,
  ...(row.sources !== null && { sources: JSON.parse(row.sources) }),
  ...inboundAuthOfRow(row),
});

interface QuotaRow {
  token_id: string;
  rate_per_second: number | null;
  burst: number | null;
  max_in_flight: number | null;
}

const toQuotas = (row: QuotaRow): Quotas => ({ ratePerSecond: row.rate_per_second, burst: row.burst, maxInFlight: row.max_in_flight });

/** The bot's own quotas are the row with an empty token id. */
const BOT_ROW = '';

const toEntity = (row: { bot_id: string; name: string; fields: string; updated_at: number }): EntityDefinition => ({
  botId: row.bot_id,
  name: row.name,
  fields: JSON.parse(row.fields),
  updatedAt: row.updated_at,
});

export class SqliteCatalogStore implements CatalogStore {
  private readonly statements;
  /** What every webhook call resolves, cached while the catalog generation is unchanged (catalog-cache.ts). */
  private readonly targets: CatalogCache<IntegrationTarget | null>;

  constructor(private readonly db: SqliteDatabase) {
    this.targets = new CatalogCache(db);
    this.statements = {
      latest: db.prepare('SELECT * FROM integrations WHERE bot_id = ? AND integration_id = ? ORDER BY version DESC LIMIT 1'),
      target: db.prepare(
        'SELECT integration_id, version, entity_name, pool, callback_url, inbound_auth FROM integrations WHERE bot_id = ? AND integration_id = ? ORDER BY version DESC LIMIT 1',
      ),
      version: db.prepare('SELECT * FROM integrations WHERE bot_id = ? AND integration_id = ? AND version = ?'),
      quotas: db.prepare('SELECT token_id, rate_per_second, burst, max_in_flight FROM quotas WHERE bot_id = ?'),
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

  async deleteEntity(botId: string, name: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM entities WHERE bot_id = ? AND name = ?').run(botId, name).changes === 1;
  }

  async deployIntegration(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDefinition> {
    return this.db.transaction(() => this.insertNextVersion(botId, integrationId, settings, now)).immediate();
  }

  /** Inserts the next version; called in a write transaction, so concurrent deploys get distinct versions. */
  private insertNextVersion(botId: string, integrationId: string, settings: IntegrationSettings, now: number): IntegrationDefinition {
    // Version numbers are never reused: a deleted integration's last one is where a new deploy goes on from.
    const { latest } = this.db
      .prepare(`SELECT MAX(
          (SELECT COALESCE(MAX(version), 0) FROM integrations WHERE bot_id = @botId AND integration_id = @integrationId),
          (SELECT COALESCE(MAX(last_version), 0) FROM deleted_integrations WHERE bot_id = @botId AND integration_id = @integrationId)) AS latest`)
      .get({ botId, integrationId }) as { latest: number };
    const definition: IntegrationDefinition = { botId, integrationId, version: latest + 1, deployedAt: now, ...withoutEmptySources(integrationSettingsOf(settings)) };
    this.db
      .prepare(`INSERT INTO integrations (bot_id, integration_id, version, entity_name, code, pool, timeout_seconds, allowed_hosts, limits, callback_url, deployed_at, sources, inbound_auth)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
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
        settings.callbackUrl,
        now,
        settings.sources?.length ? JSON.stringify(settings.sources) : null,
        inboundAuthColumn(settings),
      );
    return definition;
  }

  async putDraft(botId: string, integrationId: string, settings: IntegrationSettings, now: number): Promise<IntegrationDraft> {
    const stored = integrationSettingsOf(settings);
    const draft: IntegrationDraft = { botId, integrationId, draftedAt: now, ...stored };
    this.db
      .prepare(`INSERT INTO integration_drafts (bot_id, integration_id, settings, drafted_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (bot_id, integration_id) DO UPDATE SET settings = excluded.settings, drafted_at = excluded.drafted_at`)
      .run(botId, integrationId, JSON.stringify(stored), now);
    return draft;
  }

  async getDraft(botId: string, integrationId: string): Promise<IntegrationDraft | null> {
    const row = this.db.prepare('SELECT settings, drafted_at FROM integration_drafts WHERE bot_id = ? AND integration_id = ?').get(botId, integrationId) as
      | { settings: string; drafted_at: number }
      | undefined;
    if (!row) return null;
    const settings = JSON.parse(row.settings) as IntegrationSettings;
    return { botId, integrationId, draftedAt: row.drafted_at, ...settings, limits: withDefaultLimits(settings.limits) };
  }

  async publishDraft(botId: string, integrationId: string, draftedAt: number, now: number): Promise<IntegrationDefinition | null> {
    const publish = this.db.transaction(() => {
      const draft = this.db.prepare('SELECT settings FROM integration_drafts WHERE bot_id = ? AND integration_id = ? AND drafted_at = ?').get(botId, integrationId, draftedAt) as
        | { settings: string }
        | undefined;
      if (!draft) return null;
      this.db.prepare('DELETE FROM integration_drafts WHERE bot_id = ? AND integration_id = ?').run(botId, integrationId);
      const settings = JSON.parse(draft.settings) as IntegrationSettings;
      return this.insertNextVersion(botId, integrationId, { ...settings, limits: withDefaultLimits(settings.limits) }, now);
    });
    return publish.immediate();
  }

  async getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null> {
    const row =
      version === undefined
        ? this.statements.latest.get(botId, integrationId)
        : this.statements.version.get(botId, integrationId, version);
    return row ? toIntegration(row as IntegrationRow) : null;
  }

  async resolveIntegration(botId: string, integrationId: string): Promise<IntegrationTarget | null> {
    return this.targets.lookup(pairKey(botId, integrationId), () => {
      const row = this.statements.target.get(botId, integrationId) as
        | Pick<IntegrationRow, 'integration_id' | 'version' | 'entity_name' | 'pool' | 'callback_url' | 'inbound_auth'>
        | undefined;
      return row
        ? Object.freeze({ integrationId: row.integration_id, version: row.version, entityName: row.entity_name, pool: row.pool, callbackUrl: row.callback_url, ...inboundAuthOfRow(row) })
        : null;
    });
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

  async deleteIntegration(botId: string, integrationId: string): Promise<number> {
    const remove = this.db.transaction(() => {
      this.rememberLastVersions('bot_id = ? AND integration_id = ?', botId, integrationId);
      this.db.prepare('DELETE FROM integration_drafts WHERE bot_id = ? AND integration_id = ?').run(botId, integrationId);
      return this.db.prepare('DELETE FROM integrations WHERE bot_id = ? AND integration_id = ?').run(botId, integrationId).changes;
    });
    return remove.immediate();
  }

  /** Records the last version of the integrations `where` selects before they are deleted. */
  private rememberLastVersions(where: string, ...params: string[]): void {
    this.db
      .prepare(`INSERT INTO deleted_integrations (bot_id, integration_id, last_version)
        SELECT bot_id, integration_id, MAX(version) FROM integrations WHERE ${where} GROUP BY bot_id, integration_id
        ON CONFLICT (bot_id, integration_id) DO UPDATE SET last_version = MAX(last_version, excluded.last_version)`)
      .run(...params);
  }

  async deleteBot(botId: string): Promise<void> {
    const remove = this.db.transaction(() => {
      this.rememberLastVersions('bot_id = ?', botId);
      for (const table of ['entities', 'integrations', 'integration_drafts', 'quotas', 'signing_secrets']) this.db.prepare(`DELETE FROM ${table} WHERE bot_id = ?`).run(botId);
    });
    remove.immediate();
  }

  async listBots(): Promise<string[]> {
    const rows = this.db
      .prepare('SELECT bot_id FROM entities UNION SELECT bot_id FROM integrations UNION SELECT bot_id FROM tokens ORDER BY bot_id')
      .all() as Array<{ bot_id: string }>;
    return rows.map((row) => row.bot_id);
  }

  async getQuotas(botId: string): Promise<BotQuotas> {
    const quotas: BotQuotas = { bot: { ratePerSecond: null, burst: null, maxInFlight: null }, tokens: {} };
    for (const row of this.statements.quotas.all(botId) as QuotaRow[]) {
      if (row.token_id === BOT_ROW) quotas.bot = toQuotas(row);
      else quotas.tokens[row.token_id] = toQuotas(row);
    }
    return quotas;
  }

  async putQuotas(botId: string, tokenId: string | null, quotas: Quotas, now: number): Promise<void> {
    const key = tokenId ?? BOT_ROW;
    if (quotas.ratePerSecond === null && quotas.burst === null && quotas.maxInFlight === null) {
      this.db.prepare('DELETE FROM quotas WHERE bot_id = ? AND token_id = ?').run(botId, key);
      return;
    }
    this.db
      .prepare(`INSERT INTO quotas (bot_id, token_id, rate_per_second, burst, max_in_flight, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (bot_id, token_id) DO UPDATE SET rate_per_second = excluded.rate_per_second, burst = excluded.burst,
          max_in_flight = excluded.max_in_flight, updated_at = excluded.updated_at`)
      .run(botId, key, quotas.ratePerSecond, quotas.burst, quotas.maxInFlight, now);
  }

  async rotateSigningSecret(botId: string, secret: SigningSecret, retireAt: number): Promise<void> {
    const rotate = this.db.transaction(() => {
      this.db.prepare('UPDATE signing_secrets SET expires_at = ? WHERE bot_id = ? AND (expires_at IS NULL OR expires_at > ?)').run(retireAt, botId, retireAt);
      this.db.prepare('INSERT INTO signing_secrets (bot_id, secret, created_at, expires_at) VALUES (?, ?, ?, ?)').run(botId, secret.secret, secret.createdAt, secret.expiresAt);
    });
    rotate.immediate();
  }

  async getSigningSecrets(botId: string, now: number): Promise<SigningSecret[]> {
    const rows = this.db
      .prepare('SELECT secret, created_at, expires_at FROM signing_secrets WHERE bot_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, rowid DESC')
      .all(botId, now) as Array<{ secret: string; created_at: number; expires_at: number | null }>;
    return rows.map((row) => ({ secret: row.secret, createdAt: row.created_at, expiresAt: row.expires_at }));
  }

  async listSigningSecrets(now: number): Promise<Array<SigningSecret & { botId: string }>> {
    const rows = this.db
      .prepare('SELECT bot_id, secret, created_at, expires_at FROM signing_secrets WHERE expires_at IS NULL OR expires_at > ? ORDER BY bot_id, created_at DESC, rowid DESC')
      .all(now) as Array<{ bot_id: string; secret: string; created_at: number; expires_at: number | null }>;
    return rows.map((row) => ({ botId: row.bot_id, secret: row.secret, createdAt: row.created_at, expiresAt: row.expires_at }));
  }

  async resealSigningSecret(botId: string, expected: string, sealed: string): Promise<boolean> {
    return this.db.prepare('UPDATE signing_secrets SET secret = ? WHERE bot_id = ? AND secret = ?').run(sealed, botId, expected).changes === 1;
  }
}
