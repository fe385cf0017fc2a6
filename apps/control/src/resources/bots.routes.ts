import { assertName, connectorCodeSizeProblem, connectorSourcesSizeProblem, inboundAuthOf, notFound, payloadTooLarge } from '@gi/domain';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { entityBody, integrationBody } from '../control.schemas';
import { deployedView, iso } from '../control.views';
import { assertDeployable } from '../deploy-checks';

/** The bots, their entities and their integrations (connectors, deployed as new versions). */
export function botRoutes({ routes, admin, deps, body }: ControlRoutes): void {
  const { store, clock } = deps;

  routes.get('/bots', admin, async (ctx) => {
    ctx.body = { bots: await store.catalog.listBots() };
  });

  routes.put('/bots/:botId/entities/:entityName', admin, async (ctx) => {
    const { botId, entityName } = ctx.params;
    assertName('entityName', entityName);
    const { fields } = validate(entityBody, await body(ctx));
    ctx.body = await store.catalog.putEntity(botId, entityName, fields, clock.now());
  });

  routes.get('/bots/:botId/entities', admin, async (ctx) => {
    ctx.body = { entities: await store.catalog.listEntities(ctx.params.botId) };
  });

  routes.put('/bots/:botId/integrations/:integrationId', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    assertName('integrationId', integrationId);
    const settings = validate(integrationBody, await body(ctx));
    const tooLarge = connectorCodeSizeProblem(settings.code) ?? connectorSourcesSizeProblem(settings.sources);
    if (tooLarge) throw payloadTooLarge(`Cannot deploy: ${tooLarge}.`);
    await assertDeployable(deps, botId, settings);
    ctx.body = deployedView(await store.catalog.deployIntegration(botId, integrationId, settings, clock.now()));
  });

  routes.get('/bots/:botId/integrations', admin, async (ctx) => {
    const list = await store.catalog.listIntegrations(ctx.params.botId);
    ctx.body = { integrations: list.map(deployedView) };
  });

  routes.get('/bots/:botId/integrations/:integrationId', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const version = ctx.query.version === undefined ? undefined : Number(ctx.query.version);
    const integration = await store.catalog.getIntegration(botId, integrationId, version);
    if (!integration) throw notFound(`No integration '${integrationId}' for bot '${botId}'.`);
    const versions = await store.catalog.listIntegrationVersions(botId, integrationId);
    ctx.body = { ...integration, inboundAuth: inboundAuthOf(integration), sources: integration.sources ?? [], deployedAt: iso(integration.deployedAt), versions: versions.map((v) => ({ version: v.version, deployedAt: iso(v.deployedAt) })) };
  });
}
