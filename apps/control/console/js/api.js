// The control API (/admin), the same one the CLI uses. The admin token goes in the Authorization
// header of each call, never in a URL.

/**
 * @typedef {{ type: string, title: string, status: number, detail: string, errors?: { field: string, message: string }[], line?: number, column?: number, message?: string, invocationId?: string, inFlight?: number | string }} Problem
 * @typedef {{ botId: string, name: string, fields: string[], updatedAt: number }} Entity
 * @typedef {{ memoryMiB: number, cpuSeconds: number, responseBodyKiB: number, logKiB: number, pendingCalls: number }} RunLimits
 * @typedef {{ scheme: string, secret?: string, previousSecret?: string, allowBearer?: boolean, toleranceSeconds?: number, header?: string, algorithm?: string, encoding?: string, prefix?: string, timestampHeader?: string, deliveryIdHeader?: string }} InboundAuth
 * @typedef {{ entityName: string, code: string, sources?: { path: string, content: string }[], pool?: string, timeoutSeconds?: number, allowedHosts?: string[], limits?: Partial<RunLimits>, callbackUrl?: string | null, inboundAuth?: InboundAuth }} IntegrationSettings
 * @typedef {{ botId: string, integrationId: string, version: number, entityName: string, pool: string, timeoutSeconds: number, allowedHosts: string[], limits: RunLimits, callbackUrl: string | null, inboundAuth?: InboundAuth, deployedAt: string }} Integration
 * @typedef {Integration & { code: string, sources?: { path: string, content: string }[], versions: { version: number, deployedAt: string }[] }} IntegrationDetail
 * @typedef {{ from: number, to: number, code: string, sources: { path: string, diff: string }[], settings: { name: string, from: unknown, to: unknown }[] }} VersionDiff
 * @typedef {{ tokenId: string, label: string | null, createdAt: string, expiresAt: string | null, revokedAt: string | null }} TokenInfo
 * @typedef {{ token: string, tokenId: string, expiresAt: string | null }} CreatedToken
 * @typedef {{ sync: string, async: string, fileTransfer: string, poll: string, event?: string }} WebhookUrls
 * @typedef {{ baseUrl: string, botId: string, platformSegment: string, pollUrl: string, eventUrl?: string, integrations: { integrationId: string, entityName: string, version: number, urls: WebhookUrls, inboundAuth?: InboundSetup }[] }} Webhook
 * @typedef {'Queued' | 'Running' | 'Waiting' | 'Completed' | 'Failed' | 'Cancelled'} Status
 * @typedef {{ for: 'sleep' | 'event' | 'retry', name: string, until: string }} Wait
 * @typedef {{ name: string, occurrence: number, kind: 'step' | 'sleep' | 'event', status: 'done' | 'failed' | 'retrying' | 'waiting', attempts: number, startedAt: string, finishedAt: string | null, durationMs: number | null, until: string | null, resultBytes: number, error: { name: string, message: string } | null }} Step
 * @typedef {{ steps: Step[], nextBefore: string | null }} StepPage
 * @typedef {{ scheme: string, provider: string, fields: { label: string, value: string }[], secrets: { name: string, set: boolean }[], note: string }} InboundSetup
 * @typedef {{ code: string, title: string, detail: string }} InvocationError
 * @typedef {{ id: string, integrationId: string, integrationVersion: number, entityName: string, mode: 'sync' | 'async', status: Status, attempt: number, createdAt: string, startedAt: string | null, finishedAt: string | null, durationMs: number | null, error: InvocationError | null }} InvocationSummary
 * @typedef {{ Id: string, FileName: string, ContentType: string, Size: number, Sha256: string, PartName: string }} FileEntity
 * @typedef {{ RequestParams: string, RequestHeaders: string, RequestBody: unknown, ResponseBody: unknown, RequestFiles?: FileEntity[] }} WebhookEntity
 * @typedef {{ at: string, level: 'info' | 'error', message: string, attempt: number }} LogLine
 * @typedef {{ status: 'Completed', responseBody: unknown } | { status: 'Failed' | 'Cancelled', error: InvocationError }} Outcome
 * @typedef {InvocationSummary & { pool: string, endpoint: string, responseContentType: string, entity: WebhookEntity, outcome: Outcome | null, progress: { percent: number, message?: string } | null, logs: LogLine[], expireAt: string, waiting: Wait | null, steps: number, activeMs: number }} InvocationDetail
 * @typedef {{ perMinute: number[], failedPerMinute: number[], count: number, failed: number, p50Ms: number | null, p99Ms: number | null }} ActivitySeries
 * @typedef {{ invocations: InvocationSummary[], nextBefore: string | null }} InvocationPage
 * @typedef {{ ratePerSecond: number | null, burst: number | null, maxInFlight: number | null }} Quotas
 * @typedef {{ botId: string, quotas: Quotas, effective: Quotas, tokens: { tokenId: string, quotas: Quotas, effective: Quotas }[] }} BotQuotas
 * @typedef {{ botId: string, tokenId: string, quotas: Quotas, effective: Quotas }} TokenQuotas
 * @typedef {{ botId: string, createdAt: string, previousSecretValidUntil: string | null }} CallbackSecretInfo
 * @typedef {CallbackSecretInfo & { secret: string }} CreatedCallbackSecret
 * @typedef {{ name: string, createdAt: string, updatedAt: string }} SecretInfo
 * @typedef {{ from: string, to: string, minutes: number, truncated: boolean, total: ActivitySeries, integrations: (ActivitySeries & { integrationId: string })[] }} Activity
 * @typedef {Omit<Integration, 'version' | 'deployedAt'> & { draft: true, liveVersion: number, draftedAt: string }} Draft
 * @typedef {{ status: Status, responseBody: unknown, error: InvocationError | null, durationMs: number | null }} ReplaySide
 * @typedef {{ invocationId: string, createdAt: string, published: ReplaySide & { version: number }, draft: ReplaySide & { logs: { at: string, level: string, message: string }[] }, diff: string }} ReplayedRequest
 * @typedef {{ integrationId: string, publishedVersion: number, draftedAt: string, outbound: 'block' | 'send', changed: number, replayed: ReplayedRequest[] }} ReplayReport
 */

/** A problem-details answer of the control API. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Problem} problem
   */
  constructor(status, problem) {
    super(problem.detail || problem.title);
    this.status = status;
    this.problem = problem;
  }
}

/** @param {string} value */
const seg = (value) => encodeURIComponent(value);

/**
 * @param {string} bot
 * @param {string | null} integrationId
 */
const secretsPath = (bot, integrationId) => (integrationId === null ? `/bots/${seg(bot)}/secrets` : `/bots/${seg(bot)}/integrations/${seg(integrationId)}/secrets`);

/**
 * @param {Record<string, string | number | undefined>} params
 */
function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * @param {Response} response
 * @returns {Promise<Problem>}
 */
async function problemOf(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { type: 'about:blank', title: response.statusText || 'Error', status: response.status, detail: text.slice(0, 300) || `HTTP ${response.status}` };
  }
}

/**
 * @param {string} token the admin token
 * @param {() => void} onUnauthorized called when the service refuses the token
 */
export function createApi(token, onUnauthorized = () => {}) {
  /**
   * @param {string} method
   * @param {string} path under /admin
   * @param {unknown} [body]
   * @returns {Promise<any>}
   */
  async function call(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`/admin${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
    if (!response.ok) {
      const problem = await problemOf(response);
      if (response.status === 401) onUnauthorized();
      throw new ApiError(response.status, problem);
    }
    return response.status === 204 ? null : response.json();
  }

  return {
    /** @returns {Promise<string[]>} */
    bots: async () => (await call('GET', '/bots')).bots,
    /** @param {string} bot @returns {Promise<Entity[]>} */
    entities: async (bot) => (await call('GET', `/bots/${seg(bot)}/entities`)).entities,
    /** @param {string} bot @param {string} name @param {string[]} fields @returns {Promise<Entity>} */
    defineEntity: (bot, name, fields) => call('PUT', `/bots/${seg(bot)}/entities/${seg(name)}`, { fields }),
    /** @param {string} bot @returns {Promise<Integration[]>} */
    integrations: async (bot) => (await call('GET', `/bots/${seg(bot)}/integrations`)).integrations,
    /** @param {string} bot @param {string} id @param {number} [version] @returns {Promise<IntegrationDetail>} */
    integration: (bot, id, version) => call('GET', `/bots/${seg(bot)}/integrations/${seg(id)}${query({ version })}`),
    /** @param {string} bot @param {string} id @param {IntegrationSettings} settings @returns {Promise<Integration>} */
    deploy: (bot, id, settings) => call('PUT', `/bots/${seg(bot)}/integrations/${seg(id)}`, settings),
    /** @param {string} bot @param {string} id @param {number} from @param {number} to @returns {Promise<VersionDiff>} */
    diff: (bot, id, from, to) => call('GET', `/bots/${seg(bot)}/integrations/${seg(id)}/diff${query({ from, to })}`),
    /** @param {string} bot @param {string} id @param {number} to @returns {Promise<Integration & { rolledBackTo: number }>} */
    rollback: (bot, id, to) => call('POST', `/bots/${seg(bot)}/integrations/${seg(id)}/rollback`, { to }),
    /** The integration's draft, or null when it has none. @param {string} bot @param {string} id @returns {Promise<Draft | null>} */
    draft: async (bot, id) => {
      try {
        return await call('GET', `/bots/${seg(bot)}/integrations/${seg(id)}/draft`);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
    /** @param {string} bot @param {string} id @param {{ last?: number, ids?: string[], outbound: 'block' | 'send' }} request @returns {Promise<ReplayReport>} */
    replay: (bot, id, request) => call('POST', `/bots/${seg(bot)}/integrations/${seg(id)}/replay`, request),
    /** @param {string} bot @param {string} id @returns {Promise<Integration & { publishedDraftAt: string }>} */
    publish: (bot, id) => call('POST', `/bots/${seg(bot)}/integrations/${seg(id)}/publish`, {}),
    /** @param {string} bot @param {string} id @param {boolean} force @returns {Promise<{ deleted: true, cancelledInvocations: number }>} */
    deleteIntegration: (bot, id, force) => call('DELETE', `/bots/${seg(bot)}/integrations/${seg(id)}${query({ force: force ? 'true' : undefined })}`),
    /** @param {string} bot @param {string} name @returns {Promise<{ deleted: true }>} */
    deleteEntity: (bot, name) => call('DELETE', `/bots/${seg(bot)}/entities/${seg(name)}`),
    /** @param {string} bot @param {boolean} force @returns {Promise<{ deleted: true, cancelledInvocations: number }>} */
    deleteBot: (bot, force) => call('DELETE', `/bots/${seg(bot)}${query({ force: force ? 'true' : undefined })}`),
    /** @param {string} bot @returns {Promise<TokenInfo[]>} */
    tokens: async (bot) => (await call('GET', `/bots/${seg(bot)}/tokens`)).tokens,
    /** @param {string} bot @param {{ label?: string, ttlSeconds?: number }} options @returns {Promise<CreatedToken>} */
    createToken: (bot, options) => call('POST', `/bots/${seg(bot)}/tokens`, options),
    /** @param {string} bot @param {string} tokenId @returns {Promise<null>} */
    revokeToken: (bot, tokenId) => call('DELETE', `/bots/${seg(bot)}/tokens/${seg(tokenId)}`),
    /** @param {string} bot @returns {Promise<Webhook>} */
    webhook: (bot) => call('GET', `/bots/${seg(bot)}/webhook`),
    /** @param {string} bot @param {{ status?: string, integrationId?: string, limit?: number, before?: string }} filter @returns {Promise<InvocationPage>} */
    invocations: (bot, filter) => call('GET', `/bots/${seg(bot)}/invocations${query(filter)}`),
    /** @param {string} bot @param {string} id @returns {Promise<InvocationDetail>} */
    invocation: (bot, id) => call('GET', `/bots/${seg(bot)}/invocations/${seg(id)}`),
    /** A durable invocation's steps, newest first. @param {string} bot @param {string} id @param {{ limit?: number, before?: string }} page @returns {Promise<StepPage>} */
    steps: (bot, id, page) => call('GET', `/bots/${seg(bot)}/invocations/${seg(id)}/steps${query(page)}`),
    /** @param {string} bot @param {string} id @returns {Promise<{ invocationId: string, status: 'Cancelled' }>} */
    cancelInvocation: (bot, id) => call('DELETE', `/bots/${seg(bot)}/invocations/${seg(id)}`),
    /** @param {string} bot @returns {Promise<BotQuotas>} */
    quotas: (bot) => call('GET', `/bots/${seg(bot)}/quotas`),
    /** @param {string} bot @param {Quotas} quotas @returns {Promise<BotQuotas>} */
    setQuotas: (bot, quotas) => call('PUT', `/bots/${seg(bot)}/quotas`, quotas),
    /** @param {string} bot @param {string} tokenId @param {Quotas} quotas @returns {Promise<TokenQuotas>} */
    setTokenQuotas: (bot, tokenId, quotas) => call('PUT', `/bots/${seg(bot)}/tokens/${seg(tokenId)}/quotas`, quotas),
    /** @param {string} bot @returns {Promise<CallbackSecretInfo>} */
    callbackSecret: (bot) => call('GET', `/bots/${seg(bot)}/callback-secret`),
    /** @param {string} bot @returns {Promise<CreatedCallbackSecret>} */
    rotateCallbackSecret: (bot) => call('POST', `/bots/${seg(bot)}/callback-secret`),
    /** @param {string} bot @param {string | null} integrationId null: the bot's own, shared by its integrations @returns {Promise<SecretInfo[]>} */
    secrets: async (bot, integrationId) => (await call('GET', `${secretsPath(bot, integrationId)}`)).secrets,
    /** @param {string} bot @param {string | null} integrationId @param {string} name @param {string} value @returns {Promise<SecretInfo>} */
    setSecret: (bot, integrationId, name, value) => call('PUT', `${secretsPath(bot, integrationId)}/${seg(name)}`, { value }),
    /** @param {string} bot @param {string | null} integrationId @param {string} name @returns {Promise<null>} */
    deleteSecret: (bot, integrationId, name) => call('DELETE', `${secretsPath(bot, integrationId)}/${seg(name)}`),
    /** @param {string} bot @param {number} minutes @returns {Promise<Activity>} */
    activity: (bot, minutes) => call('GET', `/bots/${seg(bot)}/activity${query({ minutes })}`),
  };
}

/** @typedef {ReturnType<typeof createApi>} Api */
