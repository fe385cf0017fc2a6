import { deleteBot, deleteEntity, deleteIntegration } from '@gi/use-cases';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { deleteQuery } from '../control.schemas';

/**
 * Deleting an integration (every version), an entity, or a whole bot. Refused (409 `in-use`) while
 * invocations of it are in flight unless `force=true`, which cancels them. An integration's or an
 * entity's stored invocations are kept until they expire; a bot's go with it, with its
 * Idempotency-Keys and files (docs/decisions.md).
 */
export function deletionRoutes({ routes, admin, deps }: ControlRoutes): void {
  const { store, clock, bus, files } = deps;
  const use = { store, clock, bus, files };

  routes.delete('/bots/:botId/integrations/:integrationId', admin, async (ctx) => {
    const { botId, integrationId } = ctx.params;
    const { force } = validate(deleteQuery, ctx.query);
    const { cancelled } = await deleteIntegration(use, botId, integrationId, force);
    ctx.body = { botId, integrationId, deleted: true, cancelledInvocations: cancelled };
  });

  routes.delete('/bots/:botId/entities/:entityName', admin, async (ctx) => {
    const { botId, entityName } = ctx.params;
    await deleteEntity(use, botId, entityName);
    ctx.body = { botId, entityName, deleted: true };
  });

  routes.delete('/bots/:botId', admin, async (ctx) => {
    const { botId } = ctx.params;
    const { force } = validate(deleteQuery, ctx.query);
    const { cancelled } = await deleteBot(use, botId, force);
    ctx.body = { botId, deleted: true, cancelledInvocations: cancelled };
  });
}
