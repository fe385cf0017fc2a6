import fc from 'fast-check';
import Koa from 'koa';
import type { Context } from 'koa';
import Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { publicAccess } from './access';
import { Routes } from './routes';

/**
 * `Routes` dispatches on @koa/router's compiled layers (their pattern, methods and parameter decoding)
 * rather than through the router's own dispatch: @koa/router is pinned to one version for that, and
 * this test holds the two to the same answer for any path and method, so an upgrade that changes what
 * a layer exposes fails here.
 */
const PATHS = ['/bots/:botId/things', '/bots/:botId/things/:thingId', '/bots/:botId/things/:thingId/parts', '/fixed', '/fixed/:name'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];

type Answer = { route: string; params: Record<string, string> } | null;

const app = new Koa();

async function answerOf(middleware: Koa.Middleware, method: string, path: string): Promise<Answer> {
  // A Koa context of a request line alone: no socket, no body.
  const request = { url: path, method, headers: {}, socket: {} } as unknown as Parameters<typeof app.createContext>[0];
  const ctx = app.createContext(request, {} as Parameters<typeof app.createContext>[1]) as Context & { answer?: Answer };
  await middleware(ctx, async () => undefined);
  return ctx.answer ?? null;
}

const answer = (route: string) => (ctx: Context & { answer?: Answer }) => {
  ctx.answer = { route, params: { ...ctx.params } };
};

function both() {
  const ours = new Routes({ prefix: '/api' });
  const theirs = new Router({ prefix: '/api', sensitive: true, strict: true });
  for (const path of PATHS) {
    ours.get(path, publicAccess, answer(`GET ${path}`)).post(path, publicAccess, answer(`POST ${path}`));
    theirs.get(path, answer(`GET ${path}`) as RouterMiddleware).post(path, answer(`POST ${path}`) as RouterMiddleware);
  }
  return { ours: ours.middleware(), theirs: theirs.routes() as unknown as Koa.Middleware };
}

describe('Routes dispatch against @koa/router', () => {
  const { ours, theirs } = both();
  const segment = fc.oneof(
    fc.constantFrom('bots', 'things', 'parts', 'fixed', 'api', 'Bots', 'acme', '', '.', '..', '%20', '%zz', '%2F', 'a%2Fb', ':botId', 'x y'),
    fc.string({ unit: fc.constantFrom('a', 'B', '%', '2', 'F', '.', '-', '_', '~', 'é'), maxLength: 6 }),
  );
  const path = fc.array(segment, { maxLength: 6 }).map((parts) => `/${parts.join('/')}`);
  const apiPath = fc.oneof(path, path.map((p) => `/api${p}`), fc.constantFrom('/api/bots/acme/things', '/api/bots/acme/things/', '/api/bots/acme/things/t%201/parts', '/api/fixed/a%zz'));

  it('answers every path and method as the router itself does: the same route, the same parameters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), apiPath, async (method, p) => {
        expect(await answerOf(ours, method, p)).toEqual(await answerOf(theirs, method, p));
      }),
      { numRuns: 2000 },
    );
  });

  it('matches what it should (the property above is not only about 404s)', async () => {
    expect(await answerOf(ours, 'GET', '/api/bots/acme/things/t%201')).toEqual({ route: 'GET /bots/:botId/things/:thingId', params: { botId: 'acme', thingId: 't 1' } });
    expect(await answerOf(ours, 'HEAD', '/api/fixed')).toEqual({ route: 'GET /fixed', params: {} });
  });
});
