import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { z } from 'zod';
import { verifyAdminBearer } from '@gi/auth';
import { assertName, badRequest, durationMs, GiError, notFound, parseJson } from '@gi/domain';
import type { Invocation, InvocationSummary, TokenRecord } from '@gi/domain';
import { readTextBody } from '@gi/http';
import type { ControlDeps } from './control.deps';
import { activityQuery, entityBody, integrationBody, invocationListQuery, tokenBody } from './control.schemas';
import { activityStart, summarizeActivity } from './invocation-activity';

/** The most invocations the activity chart reads; a busier window is reported as truncated. */
const ACTIVITY_LIMIT = 50_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

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

  return router;
}

function detailView(inv: Invocation) {
  return {
    ...summaryView({ ...inv, error: inv.outcome?.status === 'Failed' ? inv.outcome.error : null }),
    pool: inv.pool,
    endpoint: inv.endpoint,
    responseContentType: inv.responseContentType,
    entity: inv.entity,
    outcome: inv.outcome,
    progress: inv.progress,
    logs: inv.logs.map((l) => ({ ...l, at: iso(l.at) })),
    expireAt: iso(inv.expireAt),
  };
}
