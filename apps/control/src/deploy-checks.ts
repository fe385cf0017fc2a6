import { assertCanSignCallbacks, badRequest, inboundAuthOf, URL_SIGNING_SCHEMES } from '@gi/domain';
import type { IntegrationSettings } from '@gi/domain';
import type { ControlDeps } from './control.deps';
import { firstSourceSyntaxError } from './source-syntax';

/**
 * What a version must satisfy to be deployed, whether new or a rollback to an earlier one: its entity
 * is defined, the bot can sign its callbacks, an inbound scheme that signs the URL has a public base
 * URL to rebuild it from, its code compiles (400 or 409 naming what is missing).
 */
export async function assertDeployable(deps: ControlDeps, botId: string, settings: IntegrationSettings): Promise<void> {
  const { store, clock } = deps;
  const { scheme } = inboundAuthOf(settings);
  if (URL_SIGNING_SCHEMES.includes(scheme) && !deps.settings.publicBaseUrl) {
    throw badRequest(
      `The ${scheme} scheme signs the URL the producer calls, which the service rebuilds from PUBLIC_BASE_URL (never from the Host header); set PUBLIC_BASE_URL to the URL producers reach it at, then deploy again.`,
    );
  }
  if (!(await store.catalog.getEntity(botId, settings.entityName))) {
    throw badRequest(`Entity '${settings.entityName}' is not defined for bot '${botId}'; define it first (PUT /admin/bots/${botId}/entities/${settings.entityName}).`);
  }
  if (settings.callbackUrl !== null) {
    await assertCanSignCallbacks(store.catalog, botId, clock.now(), `create one first (POST /admin/bots/${botId}/callback-secret)`);
  }
  const compiled = deps.runtime.compile(settings.code);
  if (!compiled.ok) {
    // A bundle's lines are not the author's: point into the file they wrote when one of them is at fault.
    const sources = settings.sources ?? [];
    const inSource = sources.length > 0 ? await firstSourceSyntaxError(sources) : null;
    if (inSource) {
      const { file, line, column, message } = inSource;
      throw badRequest(`The connector code does not compile: ${file}:${line}:${column}: ${message}.`, { extensions: { file, line, column, message } });
    }
    const of = sources.length > 0 ? ' of the bundle' : '';
    throw badRequest(`The connector code does not compile: ${compiled.message} (line ${compiled.line}, column ${compiled.column}${of}).`, {
      extensions: { line: compiled.line, column: compiled.column, message: compiled.message },
    });
  }
}
