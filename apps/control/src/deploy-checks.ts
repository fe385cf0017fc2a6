import { assertCanSignCallbacks, badRequest } from '@gi/domain';
import type { IntegrationSettings } from '@gi/domain';
import type { ControlDeps } from './control.deps';

/**
 * What a version must satisfy to be deployed, whether new or a rollback to an earlier one: its entity
 * is defined, the bot can sign its callbacks, its code compiles (400 or 409 naming what is missing).
 */
export async function assertDeployable(deps: ControlDeps, botId: string, settings: IntegrationSettings): Promise<void> {
  const { store, clock } = deps;
  if (!(await store.catalog.getEntity(botId, settings.entityName))) {
    throw badRequest(`Entity '${settings.entityName}' is not defined for bot '${botId}'; define it first (PUT /admin/bots/${botId}/entities/${settings.entityName}).`);
  }
  if (settings.callbackUrl !== null) {
    await assertCanSignCallbacks(store.catalog, botId, clock.now(), `create one first (POST /admin/bots/${botId}/callback-secret)`);
  }
  const compiled = deps.runtime.compile(settings.code);
  if (!compiled.ok) {
    throw badRequest(`The connector code does not compile: ${compiled.message} (line ${compiled.line}, column ${compiled.column}).`, {
      extensions: { line: compiled.line, column: compiled.column, message: compiled.message },
    });
  }
}
