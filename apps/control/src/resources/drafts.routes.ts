import { SecretUnreadable } from '@gi/auth';
import { connectorCodeSizeProblem, connectorSourcesSizeProblem, GiError, integrationSettingsOf, notFound, payloadTooLarge } from '@gi/domain';
import { replayDraft } from '@gi/use-cases';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { integrationBody, replayBody } from '../control.schemas';
import { deployedView, draftView, iso } from '../control.views';
import { assertDeployable } from '../deploy-checks';

/**
 * An integration's draft: deployed beside the live version (live calls keep using that one),
 * replayed against stored requests, and published as the next version. One draft per integration.
 */
export function draftRoutes({ routes, admin, deps, body }: ControlRoutes): void {
  const { store, clock } = deps;
  const noIntegration = (botId: string, integrationId: string) =>
    notFound(`No integration '${integrationId}' for bot '${botId}'; deploy its first version without --draft (a draft is tried against a live version).`);
  const noDraft = (botId: string, integrationId: string) =>
    notFound(`Integration '${integrationId}' of bot '${botId}' has no draft; deploy one first (gi connector deploy --draft).`);

  routes.put('/bots/:botId/integrations/:integrationId/draft', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const settings = validate(integrationBody, await body(ctx));
    const tooLarge = connectorCodeSizeProblem(settings.code) ?? connectorSourcesSizeProblem(settings.sources);
    if (tooLarge) throw payloadTooLarge(`Cannot deploy: ${tooLarge}.`);
    const live = await store.catalog.resolveIntegration(botId, integrationId);
    if (!live) throw noIntegration(botId, integrationId);
    await assertDeployable(deps, botId, settings);
    ctx.body = draftView(await store.catalog.putDraft(botId, integrationId, settings, clock.now()), live.version);
  });

  routes.get('/bots/:botId/integrations/:integrationId/draft', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const [draft, live] = await Promise.all([store.catalog.getDraft(botId, integrationId), store.catalog.resolveIntegration(botId, integrationId)]);
    if (!draft || !live) throw noDraft(botId, integrationId);
    ctx.body = { ...draftView(draft, live.version), code: draft.code, sources: draft.sources ?? [] };
  });

  routes.post('/bots/:botId/integrations/:integrationId/replay', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const request = validate(replayBody, await body(ctx));
    const report = await replayDraft({ store, runtime: deps.runtime, secretsForRun, files: deps.files, log: deps.log }, botId, integrationId, request);
    ctx.body = {
      ...report,
      draftedAt: iso(report.draftedAt),
      replayed: report.replayed.map((r) => ({ ...r, createdAt: iso(r.createdAt), draft: { ...r.draft, logs: r.draft.logs.map((l) => ({ ...l, at: iso(l.at) })) } })),
    };
  });

  routes.post('/bots/:botId/integrations/:integrationId/publish', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const draft = await store.catalog.getDraft(botId, integrationId);
    if (!draft) throw noDraft(botId, integrationId);
    // Checked again: the entity, the callback secret or the runtime may have changed since it was drafted.
    await assertDeployable(deps, botId, integrationSettingsOf(draft));
    const published = await store.catalog.publishDraft(botId, integrationId, draft.draftedAt, clock.now());
    // Published or replaced by another caller meanwhile: this caller's draft is no longer there.
    if (!published) throw noDraft(botId, integrationId);
    ctx.body = { ...deployedView(published), publishedDraftAt: iso(draft.draftedAt) };
  });

  async function secretsForRun(botId: string, integrationId: string) {
    try {
      return await deps.secrets.forRun(botId, integrationId);
    } catch (err) {
      if (!(err instanceof SecretUnreadable)) throw err;
      throw new GiError('secrets_not_configured', 'Secrets unreadable', `The integration's secrets cannot be decrypted with the service's key, so its draft cannot run: ${err.message}`);
    }
  }
}
