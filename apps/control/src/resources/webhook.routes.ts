import { newSigningSecret } from '@gi/auth';
import { eventPath, inboundAuthOf, notFound, pollPath, webhookApiRoot, webhookCallPath } from '@gi/domain';
import type { ControlRoutes } from '../control-routes';
import { iso } from '../control.views';
import { inboundSetup } from '../inbound-setup';

/** After a rotation, callbacks carry the previous secret's signature too for this long, so receivers can switch over. */
export const SIGNING_SECRET_OVERLAP_MS = 24 * 3600_000;

/** What a bot's callers need: the callback signing secret, and the URLs of its webhooks. */
export function webhookRoutes({ routes, admin, deps }: ControlRoutes): void {
  const { store, clock, settings } = deps;

  // The secret is shown once, in this reply; afterwards only when it was made.
  routes.post('/bots/:botId/callback-secret', admin, async (ctx) => {
    const { botId } = ctx.params;
    const now = clock.now();
    const secret = newSigningSecret();
    const retireAt = now + SIGNING_SECRET_OVERLAP_MS;
    const hadOne = (await store.catalog.getSigningSecrets(botId, now)).length > 0;
    await store.catalog.rotateSigningSecret(botId, { secret: deps.secrets.sealSigningSecret(botId, secret), createdAt: now, expiresAt: null }, retireAt);
    ctx.status = 201;
    ctx.body = { botId, secret, createdAt: iso(now), previousSecretValidUntil: hadOne ? iso(retireAt) : null };
  });

  routes.get('/bots/:botId/callback-secret', admin, async (ctx) => {
    const { botId } = ctx.params;
    const [current, ...previous] = await store.catalog.getSigningSecrets(botId, clock.now());
    if (!current) throw notFound(`Bot '${botId}' has no callback signing secret; create one with POST /admin/bots/${botId}/callback-secret.`);
    ctx.body = { botId, createdAt: iso(current.createdAt), previousSecretValidUntil: previous.length > 0 ? iso(Math.max(...previous.map((p) => p.expiresAt ?? 0))) : null };
  });

  routes.get('/bots/:botId/webhook', admin, async (ctx) => {
    const { botId } = ctx.params;
    const baseUrl = (settings.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/$/, '');
    const root = webhookApiRoot(settings.platformSegment, baseUrl);
    const poll = `${root}${pollPath(botId)}?invocationId={invocationId}`;
    const event = `${root}${eventPath(botId)}?invocationId={invocationId}&name={name}`;
    const integrations = await store.catalog.listIntegrations(botId);
    // Which secrets are set (names only), read only for integrations whose scheme names some.
    const names = async (integrationId: string | null) => (await deps.secrets.list({ botId, integrationId })).map((secret) => secret.name);
    const signed = integrations.filter((i) => inboundAuthOf(i).scheme !== 'bearer');
    const botSecrets = signed.length > 0 ? await names(null) : [];
    const setups = await Promise.all(
      integrations.map(async (i) => {
        const set = new Set(signed.includes(i) ? [...botSecrets, ...(await names(i.integrationId))] : []);
        return inboundSetup(i, `${root}${webhookCallPath({ botId, entityName: i.entityName, integrationId: i.integrationId })}`, set);
      }),
    );
    ctx.body = {
      baseUrl,
      botId,
      platformSegment: settings.platformSegment,
      pollUrl: poll,
      eventUrl: event,
      integrations: integrations.map((i, index) => {
        const call = `${root}${webhookCallPath({ botId, entityName: i.entityName, integrationId: i.integrationId })}`;
        return {
          integrationId: i.integrationId,
          entityName: i.entityName,
          version: i.version,
          urls: {
            sync: call,
            async: `${call}?asyncResponse=true`,
            fileTransfer: `${root}${webhookCallPath({ botId, entityName: i.entityName, integrationId: i.integrationId }, 'GenericIntegrationFileTransfer')}`,
            poll,
            event,
          },
          inboundAuth: setups[index],
        };
      }),
    };
  });
}
