import { assertName } from '@gi/domain';
import { adminAccess, Routes } from '@gi/http';
import type { ControlDeps } from './control.deps';
import { controlRoutes } from './control-routes';
import { botRoutes } from './resources/bots.routes';
import { deletionRoutes } from './resources/deletions.routes';
import { draftRoutes } from './resources/drafts.routes';
import { invocationRoutes } from './resources/invocations.routes';
import { secretRoutes } from './resources/secrets.routes';
import { tokenRoutes } from './resources/tokens.routes';
import { versionRoutes } from './resources/versions.routes';
import { webhookRoutes } from './resources/webhook.routes';

/**
 * The admin API under /admin (docs/openapi.yaml): the webhook configuration screen as an API, one file
 * per resource under resources/, what it shows in control.views.ts.
 */
export function controlRouter(deps: ControlDeps): Routes {
  // Every route is the operator's; the bot named in a path is checked once the caller is.
  const routes = new Routes({ prefix: '/admin', params: { botId: (botId) => assertName('botId', botId) } });
  const control = controlRoutes(routes, adminAccess(deps.settings.adminToken), deps);
  botRoutes(control);
  tokenRoutes(control);
  webhookRoutes(control);
  invocationRoutes(control);
  secretRoutes(control);
  versionRoutes(control);
  draftRoutes(control);
  deletionRoutes(control);
  return routes;
}
