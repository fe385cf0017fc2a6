import { assertName, assertSecretName, assertSecretValue, describeScope, notFound } from '@gi/domain';
import type { SecretScope } from '@gi/domain';
import type { Context } from 'koa';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { secretBody } from '../control.schemas';
import { secretView } from '../control.views';

/**
 * Connector secrets of a bot (shared by its integrations) and of one integration: set (and rotate:
 * set again), list and delete. Write-only: no reply ever holds a value.
 */
export function secretRoutes({ routes, admin, deps, body }: ControlRoutes): void {
  const { clock, secrets } = deps;

  const scopes: Array<[string, (ctx: Context) => SecretScope]> = [
    ['/bots/:botId/secrets', (ctx) => ({ botId: ctx.params.botId, integrationId: null })],
    ['/bots/:botId/integrations/:integrationId/secrets', (ctx) => ({ botId: ctx.params.botId, integrationId: assertName('integrationId', ctx.params.integrationId) })],
  ];

  for (const [path, scopeOf] of scopes) {
    routes.get(path, admin, async (ctx) => {
      ctx.body = { secrets: (await secrets.list(scopeOf(ctx))).map(secretView) };
    });

    routes.put(`${path}/:name`, admin, async (ctx) => {
      const scope = scopeOf(ctx);
      const name = assertSecretName(ctx.params.name);
      const { value } = validate(secretBody, await body(ctx));
      const done = await secrets.set({ ...scope, name }, assertSecretValue(value), clock.now());
      const stored = (await secrets.list(scope)).find((s) => s.name === name);
      ctx.status = done === 'created' ? 201 : 200;
      ctx.body = stored ? secretView(stored) : { name };
    });

    routes.delete(`${path}/:name`, admin, async (ctx) => {
      const scope = scopeOf(ctx);
      const name = assertSecretName(ctx.params.name);
      if (!(await secrets.delete({ ...scope, name }))) throw notFound(`${describeScope(scope)} has no secret ${name}.`);
      ctx.status = 204;
    });
  }

  // After a key rotation: every value sealed under the previous key is sealed again under SECRETS_KEY.
  routes.post('/secrets/reseal', admin, async (ctx) => {
    ctx.body = await secrets.resealAll(clock.now());
  });
}
