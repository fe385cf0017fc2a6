import type { Context } from 'koa';
import { badRequest, GiError } from '@gi/domain';
import { adminAccess, publicAccess } from './access';
import type { Access } from './access';
import { createHttpApp } from './http-app';
import { createHttpServer } from './http-server';
import { callInProcess } from './in-process-client';
import { createLogger, createMetrics } from '@gi/observability';
import { registeredRoutes, Routes } from './routes';

const ADMIN = 'routes-test-admin-token-0123456789';

/** An access that records that it ran and lets the `x-pass` header through. */
function recordingAccess(log: string[]): Access<{ who: string }> {
  return {
    caller: 'bot',
    grant: (ctx) => {
      log.push(`access ${ctx.path}`);
      if (ctx.get('x-pass') !== 'yes') throw new GiError('unauthorized', 'Unauthorized', 'No.');
      return { who: 'caller' };
    },
  };
}

function serve(...routes: Routes[]) {
  const app = createHttpApp({ logger: createLogger('silent', 'test'), metrics: createMetrics(), routes });
  const server = createHttpServer(app, { headersMs: 10_000, requestMs: 60_000 });
  return { app, call: (path: string, init: { method?: string; headers?: Record<string, string> } = {}) => callInProcess(server, { path, ...init }) };
}

describe('Routes', () => {
  it('runs the access of a route before its handler, and not the handler when the access refuses', async () => {
    const log: string[] = [];
    const routes = new Routes({ prefix: '/p' }).get('/:botId/x', recordingAccess(log), (ctx, grant) => {
      log.push(`handler ${grant.who}`);
      ctx.body = { ok: true };
    });
    const { call } = serve(routes);
    expect((await call('/p/acme/x')).status).toBe(401);
    expect((await call('/p/acme/x', { headers: { 'x-pass': 'yes' } })).status).toBe(200);
    expect(log).toEqual(['access /p/acme/x', 'access /p/acme/x', 'handler caller']);
  });

  it('matches only the path as registered: case, trailing slash, escapes, doubled slashes and dot segments are other paths', async () => {
    const { call } = serve(new Routes({ prefix: '/admin' }).get('/bots', adminAccess(ADMIN), (ctx) => (ctx.body = [])));
    const authorization = `Bearer ${ADMIN}`;
    expect((await call('/admin/bots', { headers: { authorization } })).status).toBe(200);
    for (const path of ['/Admin/bots', '/admin/BOTS', '/admin/bots/', '/%61dmin/bots', '/admin//bots', '//admin/bots', '/admin/./bots', '/x/../admin/bots']) {
      for (const headers of [{}, { authorization }] as Array<Record<string, string>>) expect([path, (await call(path, { headers })).status]).toEqual([path, 404]);
    }
  });

  it('checks path parameters once the caller is authorized: 401 before 400', async () => {
    const botId = (value: string) => {
      if (value === 'bad') throw badRequest('bad bot');
    };
    const routes = new Routes({ params: { botId } });
    routes.get('/admin/:botId', adminAccess(ADMIN), (ctx) => (ctx.body = { botId: ctx.params.botId }));
    const { call } = serve(routes);
    expect((await call('/admin/bad')).status).toBe(401);
    expect((await call('/admin/bad', { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(400);
    expect((await call('/admin/good', { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
  });

  it('refuses to register a route for a bot whose path names none', () => {
    expect(() => new Routes().get('/api/x', recordingAccess([]), () => undefined)).toThrow(/names none/);
  });

  it('lists every route of an app with who may call it, the operations routes first', () => {
    const routes = new Routes({ prefix: '/api' })
      .post('/:botId/hook', recordingAccess([]), () => undefined)
      .otherMethods('/:botId/hook', recordingAccess([]), () => undefined)
      .get('/open', publicAccess, () => undefined);
    expect(registeredRoutes(serve(routes).app.middleware)).toEqual([
      { method: 'GET', path: '/healthz', caller: 'public' },
      { method: 'GET', path: '/readyz', caller: 'public' },
      { method: 'GET', path: '/metrics', caller: 'public' },
      { method: 'POST', path: '/api/:botId/hook', caller: 'bot' },
      { method: '*', path: '/api/:botId/hook', caller: 'bot' },
      { method: 'GET', path: '/api/open', caller: 'public' },
    ]);
  });

  it('answers every reply, errors and unmatched paths included, with Cache-Control: no-store unless the route says otherwise', async () => {
    const routes = new Routes()
      .get('/plain', publicAccess, (ctx) => (ctx.body = 'x'))
      .get('/cached', publicAccess, (ctx) => {
        ctx.set('Cache-Control', 'no-cache');
        ctx.body = 'x';
      })
      .get('/:botId/failing', recordingAccess([]), () => undefined);
    const { call } = serve(routes);
    expect((await call('/plain')).headers['cache-control']).toBe('no-store');
    expect((await call('/cached')).headers['cache-control']).toBe('no-cache');
    expect((await call('/acme/failing')).headers['cache-control']).toBe('no-store');
    expect((await call('/nowhere')).headers['cache-control']).toBe('no-store');
  });

  describe('dispatch', () => {
    const echo = (name: string) => (ctx: Context) => {
      ctx.body = { route: name, method: ctx.method, params: ctx.params };
    };

    it('runs the first route registered whose path and method match; a GET route answers HEAD', async () => {
      const routes = new Routes({ prefix: '/p' })
        .get('/fixed', publicAccess, echo('fixed'))
        .get('/:name', publicAccess, echo('named'))
        .post('/:name', publicAccess, echo('post'))
        .otherMethods('/:name', publicAccess, echo('other'));
      const { call } = serve(routes);
      expect(JSON.parse((await call('/p/fixed')).body)).toEqual({ route: 'fixed', method: 'GET', params: {} });
      expect(JSON.parse((await call('/p/x')).body)).toEqual({ route: 'named', method: 'GET', params: { name: 'x' } });
      expect(JSON.parse((await call('/p/x', { method: 'POST' })).body)).toEqual({ route: 'post', method: 'POST', params: { name: 'x' } });
      expect(JSON.parse((await call('/p/fixed', { method: 'PUT' })).body)).toEqual({ route: 'other', method: 'PUT', params: { name: 'fixed' } });
      const head = await call('/p/x', { method: 'HEAD' });
      expect([head.status, head.body]).toEqual([200, '']);
    });

    it('decodes path parameters as @koa/router does: escapes decoded, a malformed escape kept as sent', async () => {
      const { call } = serve(new Routes().get('/p/:name', publicAccess, echo('named')));
      expect(JSON.parse((await call('/p/a%20b')).body).params).toEqual({ name: 'a b' });
      expect(JSON.parse((await call('/p/a%zz')).body).params).toEqual({ name: 'a%zz' });
    });

    it('matches under a prefix that names a parameter', async () => {
      const { call } = serve(new Routes({ prefix: '/t/:name' }).get('/x', publicAccess, echo('x')));
      expect(JSON.parse((await call('/t/acme/x')).body)).toEqual({ route: 'x', method: 'GET', params: { name: 'acme' } });
      expect((await call('/t/acme/y')).status).toBe(404);
    });

    it('passes a path no route of a table takes to the next table, and answers 404 when none does', async () => {
      const first = new Routes({ prefix: '/a' }).get('/x', publicAccess, echo('a'));
      const second = new Routes().get('/a/y', publicAccess, echo('second-a')).get('/b/x', publicAccess, echo('b'));
      const { call } = serve(first, second);
      expect(JSON.parse((await call('/a/x')).body).route).toBe('a');
      expect(JSON.parse((await call('/a/y')).body).route).toBe('second-a');
      expect(JSON.parse((await call('/b/x')).body).route).toBe('b');
      expect((await call('/a/x', { method: 'POST' })).status).toBe(404);
      expect((await call('/c')).status).toBe(404);
    });
  });
});
