import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { z } from 'zod';
import { newSigningSecret, verifyAdminBearer } from '@gi/auth';
import { assertName, badRequest, botLimits, cancelInvocation, durationMs, GiError, notFound, outcomeError, parseJson, tokenLimits } from '@gi/domain';
import type { EffectiveLimits, Invocation, InvocationSummary, Quotas, TokenRecord } from '@gi/domain';
import { readTextBody } from '@gi/http';
import type { ControlDeps } from './control.deps';
import { activityQuery, entityBody, integrationBody, invocationListQuery, quotaBody, tokenBody } from './control.schemas';
import { activityStart, summarizeActivity } from './invocation-activity';

/** The most invocations the activity chart reads; a busier window is reported as truncated. */
const ACTIVITY_LIMIT = 50_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** After a rotation, callbacks carry the previous secret's signature too for this long, so receivers can switch over. */
export const SIGNING_SECRET_OVERLAP_MS = 24 * 3600_000;

function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const errors = result.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
    throw badRequest(errors.map((e) => `${e.field}: ${e.message}`).join('; '), { extensions: { errors } });
  }
  return result.data;
}

const summaryView = (s: InvocationSummary) => ({
  id: s.id,
  integrationId: s.integrationId,
  integrationVersion: s.integrationVersion,
  entityName: s.entityName,
  mode: s.mode,
  status: s.status,
  attempt: s.attempt,
  createdAt: iso(s.createdAt),
  startedAt: iso(s.startedAt),
  finishedAt: iso(s.finishedAt),
  durationMs: durationMs(s),
  error: s.error,
});

/** What is enforced; null: no limit. */
const effectiveView = ({ rate, maxInFlight }: EffectiveLimits) => ({ ratePerSecond: rate?.perSecond ?? null, burst: rate?.burst ?? null, maxInFlight });

const tokenView = (t: TokenRecord) => ({
  tokenId: t.tokenId,
  label: t.label,
  createdAt: iso(t.createdAt),
  expiresAt: iso(t.expiresAt),
  revokedAt: iso(t.revokedAt),
});

/** The admin API: the webhook configuration screen as an API (DESIGN 4). */
export function controlRouter(deps: ControlDeps): Router {
  const { store, settings, clock } = deps;
  const router = new Router({ prefix: '/admin' });

  router.use(async (ctx: Context, next: Next) => {
    // Admin replies hold request data and connector code: never kept by a browser or proxy cache.
    ctx.set('Cache-Control', 'no-store');
    verifyAdminBearer(ctx.get('authorization') || undefined, settings.adminToken);
    await next();
  });
  router.param('botId', (botId, ctx, next) => {
    assertName('botId', botId);
    return next();
  });
  const body = async (ctx: Context) => {
    if (!ctx.is('application/json')) throw new GiError('unsupported_media_type', 'Unsupported media type', 'Send a JSON body (Content-Type: application/json).');
    const text = await readTextBody(ctx, settings.maxBodyBytes);
    return text ? parseJson(text) : {};
  };

  router.get('/bots', async (ctx) => {
    ctx.body = { bots: await store.catalog.listBots() };
  });

  router.put('/bots/:botId/entities/:entityName', async (ctx) => {
    const { botId, entityName } = ctx.params;
    assertName('entityName', entityName);
    const { fields } = validate(entityBody, await body(ctx));
    ctx.body = await store.catalog.putEntity(botId, entityName, fields, clock.now());
  });

  router.get('/bots/:botId/entities', async (ctx) => {
    ctx.body = { entities: await store.catalog.listEntities(ctx.params.botId) };
  });

  router.put('/bots/:botId/integrations/:integrationId', async (ctx) => {
    const { botId, integrationId } = ctx.params;
    assertName('integrationId', integrationId);
    const settingsOfIntegration = validate(integrationBody, await body(ctx));
    if (!(await store.catalog.getEntity(botId, settingsOfIntegration.entityName))) {
      throw badRequest(`Entity '${settingsOfIntegration.entityName}' is not defined for bot '${botId}'; define it first (PUT /admin/bots/${botId}/entities/${settingsOfIntegration.entityName}).`);
    }
    if (settingsOfIntegration.callbackUrl !== null && (await store.catalog.getSigningSecrets(botId, clock.now())).length === 0) {
      throw badRequest(`Callbacks are signed with the bot's signing secret, and bot '${botId}' has none yet; create one first (POST /admin/bots/${botId}/callback-secret).`);
    }
    const compiled = deps.runtime.compile(settingsOfIntegration.code);
    if (!compiled.ok) {
      throw badRequest(`The connector code does not compile: ${compiled.message} (line ${compiled.line}, column ${compiled.column}).`, {
        extensions: { line: compiled.line, column: compiled.column, message: compiled.message },
      });
    }
    const { code: _code, ...deployed } = await store.catalog.deployIntegration(botId, integrationId, settingsOfIntegration, clock.now());
    ctx.body = { ...deployed, deployedAt: iso(deployed.deployedAt) };
  });

  router.get('/bots/:botId/integrations', async (ctx) => {
    const list = await store.catalog.listIntegrations(ctx.params.botId);
    ctx.body = { integrations: list.map(({ code: _code, ...i }) => ({ ...i, deployedAt: iso(i.deployedAt) })) };
  });

  router.get('/bots/:botId/integrations/:integrationId', async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const version = ctx.query.version === undefined ? undefined : Number(ctx.query.version);
    const integration = await store.catalog.getIntegration(botId, integrationId, version);
    if (!integration) throw notFound(`No integration '${integrationId}' for bot '${botId}'.`);
    const versions = await store.catalog.listIntegrationVersions(botId, integrationId);
    ctx.body = { ...integration, deployedAt: iso(integration.deployedAt), versions: versions.map((v) => ({ version: v.version, deployedAt: iso(v.deployedAt) })) };
  });

  router.post('/bots/:botId/tokens', async (ctx) => {
    const options = validate(tokenBody, await body(ctx));
    const minted = await deps.tokens.mint(ctx.params.botId, options);
    ctx.status = 201;
    ctx.body = { token: minted.token, tokenId: minted.tokenId, expiresAt: iso(minted.expiresAt) };
  });

  router.get('/bots/:botId/tokens', async (ctx) => {
    ctx.body = { tokens: (await store.tokens.list(ctx.params.botId)).map(tokenView) };
  });

  router.delete('/bots/:botId/tokens/:tokenId', async (ctx) => {
    const { botId, tokenId } = ctx.params;
    if (!(await store.tokens.revoke(botId, tokenId, clock.now()))) throw notFound(`No token '${tokenId}' for bot '${botId}'.`);
    ctx.status = 204;
  });

  const botQuotasView = async (botId: string) => {
    const quotas = await store.catalog.getQuotas(botId);
    return {
      botId,
      quotas: quotas.bot,
      effective: effectiveView(botLimits(quotas.bot, settings.quotaDefaults)),
      tokens: Object.entries(quotas.tokens).map(([tokenId, own]) => ({ tokenId, quotas: own, effective: effectiveView(tokenLimits(own)) })),
    };
  };
  const tokenQuotasView = (botId: string, tokenId: string, quotas: Quotas) => ({ botId, tokenId, quotas, effective: effectiveView(tokenLimits(quotas)) });
  const knownToken = async (botId: string, tokenId: string) => {
    if (!(await store.tokens.get(botId, tokenId))) throw notFound(`No token '${tokenId}' for bot '${botId}'.`);
  };

  router.get('/bots/:botId/quotas', async (ctx) => {
    ctx.body = await botQuotasView(ctx.params.botId);
  });

  router.put('/bots/:botId/quotas', async (ctx) => {
    const { botId } = ctx.params;
    await store.catalog.putQuotas(botId, null, validate(quotaBody, await body(ctx)), clock.now());
    ctx.body = await botQuotasView(botId);
  });

  router.get('/bots/:botId/tokens/:tokenId/quotas', async (ctx) => {
    const { botId, tokenId } = ctx.params;
    await knownToken(botId, tokenId);
    const quotas = (await store.catalog.getQuotas(botId)).tokens[tokenId] ?? { ratePerSecond: null, burst: null, maxInFlight: null };
    ctx.body = tokenQuotasView(botId, tokenId, quotas);
  });

  router.put('/bots/:botId/tokens/:tokenId/quotas', async (ctx) => {
    const { botId, tokenId } = ctx.params;
    await knownToken(botId, tokenId);
    const quotas = validate(quotaBody, await body(ctx));
    await store.catalog.putQuotas(botId, tokenId, quotas, clock.now());
    ctx.body = tokenQuotasView(botId, tokenId, quotas);
  });

  // The secret is shown once, in this reply; afterwards only when it was made.
  router.post('/bots/:botId/callback-secret', async (ctx) => {
    const { botId } = ctx.params;
    const now = clock.now();
    const secret = newSigningSecret();
    const retireAt = now + SIGNING_SECRET_OVERLAP_MS;
    const hadOne = (await store.catalog.getSigningSecrets(botId, now)).length > 0;
    await store.catalog.rotateSigningSecret(botId, { secret, createdAt: now, expiresAt: null }, retireAt);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { botId, secret, createdAt: iso(now), previousSecretValidUntil: hadOne ? iso(retireAt) : null };
  });

  router.get('/bots/:botId/callback-secret', async (ctx) => {
    const { botId } = ctx.params;
    const [current, ...previous] = await store.catalog.getSigningSecrets(botId, clock.now());
    if (!current) throw notFound(`Bot '${botId}' has no callback signing secret; create one with POST /admin/bots/${botId}/callback-secret.`);
    ctx.body = { botId, createdAt: iso(current.createdAt), previousSecretValidUntil: previous.length > 0 ? iso(Math.max(...previous.map((p) => p.expiresAt ?? 0))) : null };
  });

  router.get('/bots/:botId/webhook', async (ctx) => {
    const { botId } = ctx.params;
    const baseUrl = (settings.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/$/, '');
    const prefix = `${baseUrl}/api/${settings.platformSegment}/${encodeURIComponent(botId)}`;
    const integrations = await store.catalog.listIntegrations(botId);
    ctx.body = {
      baseUrl,
      botId,
      platformSegment: settings.platformSegment,
      pollUrl: `${prefix}/GetGenericIntegrationResponse?invocationId={invocationId}`,
      integrations: integrations.map((i) => {
        const base = `${prefix}/${encodeURIComponent(i.entityName)}/${encodeURIComponent(i.integrationId)}`;
        return {
          integrationId: i.integrationId,
          entityName: i.entityName,
          version: i.version,
          urls: {
            sync: `${base}/GenericIntegration`,
            async: `${base}/GenericIntegration?asyncResponse=true`,
            fileTransfer: `${base}/GenericIntegrationFileTransfer`,
            poll: `${prefix}/GetGenericIntegrationResponse?invocationId={invocationId}`,
          },
        };
      }),
    };
  });

  router.get('/bots/:botId/invocations', async (ctx) => {
    const filter = validate(invocationListQuery, ctx.query);
    ctx.body = { invocations: (await store.invocations.list(ctx.params.botId, filter)).map(summaryView) };
  });

  router.get('/bots/:botId/activity', async (ctx) => {
    const { minutes } = validate(activityQuery, ctx.query);
    const now = clock.now();
    const timings = await store.invocations.timings(ctx.params.botId, activityStart(now, minutes), ACTIVITY_LIMIT);
    const activity = summarizeActivity(timings, now, minutes);
    ctx.body = { ...activity, from: iso(activity.from), to: iso(activity.to), minutes, truncated: timings.length === ACTIVITY_LIMIT };
  });

  router.get('/bots/:botId/invocations/:invocationId', async (ctx) => {
    const { botId, invocationId } = ctx.params;
    const invocation = await store.invocations.get({ botId, id: invocationId });
    if (!invocation) throw notFound(`No invocation '${invocationId}' for bot '${botId}'.`);
    ctx.body = detailView(invocation);
  });

  router.delete('/bots/:botId/invocations/:invocationId', async (ctx) => {
    const { botId, invocationId } = ctx.params;
    await cancelInvocation({ invocations: store.invocations, bus: deps.bus, clock }, { botId, id: invocationId }, 'control-api');
    ctx.body = { invocationId, status: 'Cancelled' };
  });

  return router;
}

function detailView(inv: Invocation) {
  return {
    ...summaryView({ ...inv, error: outcomeError(inv.outcome) }),
    pool: inv.pool,
    endpoint: inv.endpoint,
    responseContentType: inv.responseContentType,
    entity: inv.entity,
    outcome: inv.outcome,
    progress: inv.progress,
    logs: inv.logs.map((l) => ({ ...l, at: iso(l.at) })),
    callback: inv.callback && { ...inv.callback, nextAttemptAt: iso(inv.callback.nextAttemptAt), deliveredAt: iso(inv.callback.deliveredAt) },
    expireAt: iso(inv.expireAt),
  };
}
