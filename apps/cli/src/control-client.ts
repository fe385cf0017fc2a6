import type { z } from 'zod';
import type { AdminTokenSource } from './admin-token';
import { CliError } from './cli-errors';
import {
  botQuotasSchema,
  cancelledSchema,
  createdSecretSchema,
  deletedSchema,
  draftSchema,
  publishedSchema,
  replaySchema,
  createdTokenSchema,
  entityListSchema,
  entitySchema,
  integrationDetailSchema,
  integrationListSchema,
  integrationSchema,
  invocationDetailSchema,
  invocationListSchema,
  resealSchema,
  stepPageSchema,
  rolledBackSchema,
  secretInfoSchema,
  secretListSchema,
  secretSchema,
  tokenListSchema,
  tokenQuotasSchema,
  versionDiffSchema,
  versionListSchema,
  webhookSchema,
  type DeployRequest,
  type InvocationQuery,
  type QuotaRequest,
  type StepQuery,
} from './control-api';
import { send } from './http-send';
import { ApiError, readProblem } from './problem';

const seg = encodeURIComponent;

/** A bot's secrets, or one integration's. */
export interface SecretScopeRef {
  botId: string;
  integrationId?: string;
}
const secretsPath = ({ botId, integrationId }: SecretScopeRef) =>
  integrationId === undefined ? `/admin/bots/${seg(botId)}/secrets` : `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/secrets`;

/** The admin API of the service: one method per endpoint, replies checked against their schema. */
export class ControlClient {
  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: AdminTokenSource,
  ) {}

  putEntity(botId: string, entityName: string, fields: string[]) {
    return this.call('PUT', `/admin/bots/${seg(botId)}/entities/${seg(entityName)}`, entitySchema, { fields });
  }

  listEntities(botId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/entities`, entityListSchema);
  }

  deploy(botId: string, integrationId: string, request: DeployRequest) {
    return this.call('PUT', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}`, integrationSchema, request);
  }

  listIntegrations(botId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/integrations`, integrationListSchema);
  }

  /** The latest version, or the one given. */
  getIntegration(botId: string, integrationId: string, version?: number) {
    const query = version === undefined ? '' : `?version=${version}`;
    return this.call('GET', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}${query}`, integrationDetailSchema);
  }

  listVersions(botId: string, integrationId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/versions`, versionListSchema);
  }

  diffVersions(botId: string, integrationId: string, from: number, to: number) {
    return this.call('GET', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/diff?from=${from}&to=${to}`, versionDiffSchema);
  }

  deployDraft(botId: string, integrationId: string, request: DeployRequest) {
    return this.call('PUT', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/draft`, draftSchema, request);
  }

  publishDraft(botId: string, integrationId: string) {
    return this.call('POST', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/publish`, publishedSchema, {});
  }

  replayDraft(botId: string, integrationId: string, request: { last?: number; ids?: string[]; outbound: string }) {
    return this.call('POST', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/replay`, replaySchema, request);
  }

  rollback(botId: string, integrationId: string, to: number) {
    return this.call('POST', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}/rollback`, rolledBackSchema, { to });
  }

  deleteIntegration(botId: string, integrationId: string, force: boolean) {
    return this.call('DELETE', `/admin/bots/${seg(botId)}/integrations/${seg(integrationId)}${force ? '?force=true' : ''}`, deletedSchema);
  }

  deleteEntity(botId: string, entityName: string) {
    return this.call('DELETE', `/admin/bots/${seg(botId)}/entities/${seg(entityName)}`, deletedSchema);
  }

  deleteBot(botId: string, force: boolean) {
    return this.call('DELETE', `/admin/bots/${seg(botId)}${force ? '?force=true' : ''}`, deletedSchema);
  }

  createToken(botId: string, request: { ttlSeconds?: number; label?: string }) {
    return this.call('POST', `/admin/bots/${seg(botId)}/tokens`, createdTokenSchema, request);
  }

  listTokens(botId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/tokens`, tokenListSchema);
  }

  async revokeToken(botId: string, tokenId: string): Promise<void> {
    await this.call('DELETE', `/admin/bots/${seg(botId)}/tokens/${seg(tokenId)}`, null);
  }

  getQuotas(botId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/quotas`, botQuotasSchema);
  }

  putQuotas(botId: string, quotas: QuotaRequest) {
    return this.call('PUT', `/admin/bots/${seg(botId)}/quotas`, botQuotasSchema, quotas);
  }

  getTokenQuotas(botId: string, tokenId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/tokens/${seg(tokenId)}/quotas`, tokenQuotasSchema);
  }

  putTokenQuotas(botId: string, tokenId: string, quotas: QuotaRequest) {
    return this.call('PUT', `/admin/bots/${seg(botId)}/tokens/${seg(tokenId)}/quotas`, tokenQuotasSchema, quotas);
  }

  rotateCallbackSecret(botId: string) {
    return this.call('POST', `/admin/bots/${seg(botId)}/callback-secret`, createdSecretSchema);
  }

  callbackSecret(botId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/callback-secret`, secretInfoSchema);
  }

  /** PUT: sets (or rotates) a secret; the value travels in the body only. */
  setSecret(scope: SecretScopeRef, name: string, value: string) {
    return this.call('PUT', `${secretsPath(scope)}/${seg(name)}`, secretSchema, { value });
  }

  listSecrets(scope: SecretScopeRef) {
    return this.call('GET', secretsPath(scope), secretListSchema);
  }

  async deleteSecret(scope: SecretScopeRef, name: string): Promise<void> {
    await this.call('DELETE', `${secretsPath(scope)}/${seg(name)}`, null);
  }

  resealSecrets() {
    return this.call('POST', '/admin/secrets/reseal', resealSchema, {});
  }

  webhook(botId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/webhook`, webhookSchema);
  }

  listInvocations(botId: string, query: InvocationQuery) {
    const params = new URLSearchParams();
    if (query.status) params.set('status', query.status);
    if (query.integrationId) params.set('integrationId', query.integrationId);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.before) params.set('before', query.before);
    const search = params.size > 0 ? `?${params}` : '';
    return this.call('GET', `/admin/bots/${seg(botId)}/invocations${search}`, invocationListSchema);
  }

  getInvocation(botId: string, invocationId: string) {
    return this.call('GET', `/admin/bots/${seg(botId)}/invocations/${seg(invocationId)}`, invocationDetailSchema);
  }

  /** A page of a durable run's steps, newest first. */
  listSteps(botId: string, invocationId: string, query: StepQuery = {}) {
    const params = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.before) params.set('before', query.before);
    const search = params.size > 0 ? `?${params}` : '';
    return this.call('GET', `/admin/bots/${seg(botId)}/invocations/${seg(invocationId)}/steps${search}`, stepPageSchema);
  }

  cancelInvocation(botId: string, invocationId: string) {
    return this.call('DELETE', `/admin/bots/${seg(botId)}/invocations/${seg(invocationId)}`, cancelledSchema);
  }

  private async call(method: string, path: string, schema: null, body?: unknown): Promise<void>;
  private async call<S extends z.ZodType>(method: string, path: string, schema: S, body?: unknown): Promise<z.infer<S>>;
  private async call<S extends z.ZodType>(method: string, path: string, schema: S | null, body?: unknown): Promise<z.infer<S> | void> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${await this.adminToken.get()}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await send(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      const problem = await readProblem(response);
      if (response.status === 401) {
        throw new CliError(`the service refused the admin token from ${this.adminToken.describeSource()} (${problem.title})`);
      }
      throw new ApiError(problem);
    }
    if (schema === null) {
      await response.arrayBuffer();
      return;
    }
    let json: unknown;
    try {
      json = await response.json();
    } catch {
      throw new CliError(`unexpected reply to ${method} ${path}: not JSON`);
    }
    const result = schema.safeParse(json);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      throw new CliError(`unexpected reply to ${method} ${path}: ${where}${issue?.message ?? 'invalid'}`);
    }
    return result.data;
  }
}
