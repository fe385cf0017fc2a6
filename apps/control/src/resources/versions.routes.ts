import { diffVersions, notFound } from '@gi/domain';
import type { IntegrationDefinition, Versioned } from '@gi/domain';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { rollbackBody, versionDiffQuery } from '../control.schemas';
import { deployedView, iso } from '../control.views';
import { assertDeployable } from '../deploy-checks';

/**
 * An integration's versions: listed, compared, and rolled back. A rollback deploys an earlier
 * version's code, sources and settings again as a new version: history is never rewritten.
 */
export function versionRoutes({ routes, admin, deps, body }: ControlRoutes): void {
  const { store, clock } = deps;
  const compare = deps.diffVersions ?? (async (from: Versioned, to: Versioned) => JSON.stringify(await diffVersions(from, to)));

  async function versionOf(botId: string, integrationId: string, version: number): Promise<IntegrationDefinition> {
    const found = await store.catalog.getIntegration(botId, integrationId, version);
    if (found) return found;
    const exists = await store.catalog.resolveIntegration(botId, integrationId);
    throw notFound(exists ? `Integration '${integrationId}' of bot '${botId}' has no version ${version} (latest: ${exists.version}).` : `No integration '${integrationId}' for bot '${botId}'.`);
  }

  routes.get('/bots/:botId/integrations/:integrationId/versions', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const [versions, draft] = await Promise.all([store.catalog.listIntegrationVersions(botId, integrationId), store.catalog.getDraft(botId, integrationId)]);
    if (versions.length === 0) throw notFound(`No integration '${integrationId}' for bot '${botId}'.`);
    ctx.body = {
      integrationId,
      latest: versions[0].version,
      versions: versions.map((v) => ({ version: v.version, deployedAt: iso(v.deployedAt) })),
      // Not a version: live calls never use it; publishing deploys it as the next one.
      draft: draft && { draftedAt: iso(draft.draftedAt) },
    };
  });

  routes.get('/bots/:botId/integrations/:integrationId/diff', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const { from, to } = validate(versionDiffQuery, ctx.query);
    const diff = await compare(await versionOf(botId, integrationId, from), await versionOf(botId, integrationId, to));
    // The diff's JSON as it came (it may be megabytes): the integration id goes in front of its members.
    ctx.type = 'application/json';
    ctx.body = `{"integrationId":${JSON.stringify(integrationId)},${diff.slice(1)}`;
  });

  routes.post('/bots/:botId/integrations/:integrationId/rollback', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const { to } = validate(rollbackBody, await body(ctx));
    const { botId: _bot, integrationId: _id, version: _version, deployedAt: _at, ...settings } = await versionOf(botId, integrationId, to);
    await assertDeployable(deps, botId, settings);
    const deployed = await store.catalog.deployIntegration(botId, integrationId, settings, clock.now());
    ctx.body = { ...deployedView(deployed), rolledBackTo: to };
  });
}
