import { botLimits, notFound, tokenLimits } from '@gi/domain';
import type { Quotas } from '@gi/domain';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { quotaBody, tokenBody } from '../control.schemas';
import { effectiveView, iso, tokenView } from '../control.views';

/** A bot's tokens (minted, listed, revoked) and the quotas of the bot and of each token. */
export function tokenRoutes({ routes, admin, deps, body }: ControlRoutes): void {
  const { store, clock, settings } = deps;

  routes.post('/bots/:botId/tokens', admin, async (ctx) => {
    const options = validate(tokenBody, await body(ctx));
    const minted = await deps.tokens.mint(ctx.params.botId, options);
    ctx.status = 201;
    ctx.body = { token: minted.token, tokenId: minted.tokenId, expiresAt: iso(minted.expiresAt) };
  });

  routes.get('/bots/:botId/tokens', admin, async (ctx) => {
    ctx.body = { tokens: (await store.tokens.list(ctx.params.botId)).map(tokenView) };
  });

  routes.delete('/bots/:botId/tokens/:tokenId', admin, async (ctx) => {
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

  routes.get('/bots/:botId/quotas', admin, async (ctx) => {
    ctx.body = await botQuotasView(ctx.params.botId);
  });

  routes.put('/bots/:botId/quotas', admin, async (ctx) => {
    const { botId } = ctx.params;
    await store.catalog.putQuotas(botId, null, validate(quotaBody, await body(ctx)), clock.now());
    ctx.body = await botQuotasView(botId);
  });

  routes.get('/bots/:botId/tokens/:tokenId/quotas', admin, async (ctx) => {
    const { botId, tokenId } = ctx.params;
    await knownToken(botId, tokenId);
    const quotas = (await store.catalog.getQuotas(botId)).tokens[tokenId] ?? { ratePerSecond: null, burst: null, maxInFlight: null };
    ctx.body = tokenQuotasView(botId, tokenId, quotas);
  });

  routes.put('/bots/:botId/tokens/:tokenId/quotas', admin, async (ctx) => {
    const { botId, tokenId } = ctx.params;
    await knownToken(botId, tokenId);
    const quotas = validate(quotaBody, await body(ctx));
    await store.catalog.putQuotas(botId, tokenId, quotas, clock.now());
    ctx.body = tokenQuotasView(botId, tokenId, quotas);
  });
}
