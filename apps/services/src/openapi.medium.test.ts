import type { CompletionEvent } from '@gi/contracts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Koa from 'koa';
import { parse } from 'yaml';
import { createTokenService } from '@gi/auth';
import { LocalJobBus } from '@gi/bus-local';
import { parseServiceConfig } from '@gi/config';
import { loadConsoleAssets } from '@gi/control';
import { CompletionWaiter, systemClock } from '@gi/domain';
import { DiskFileStore } from '@gi/files-disk';
import { createHttpApp, PROBLEM_TYPE_PREFIX, registeredRoutes, STATUS_OF } from '@gi/http';
import { createLogger, createMetrics } from '@gi/observability';
import type { Caller, RouteEntry } from '@gi/http';
import { createQuickJsRuntime } from '@gi/sandbox';
import type { QuickJsConnectorRuntime } from '@gi/sandbox';
import { createSqliteStore } from '@gi/store-sqlite';
import { embeddedRoutes } from './embedded-process';

/**
 * docs/openapi.yaml against the routes the service really registers. The routes are read from the
 * routers' stacks of the embedded app, which serves every route of every service (the distributed
 * services each serve a part of them), so a new route only needs its entry in openapi.yaml.
 */

type Json = Record<string, unknown>;
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const spec = parse(readFileSync(join(__dirname, '../../../docs/openapi.yaml'), 'utf8')) as Json & { paths: Record<string, Json>; components: Json };

/** `/api/:botId/*asset` in koa-router terms as an OpenAPI path: `/api/{botId}/{asset}`. */
const openApiPath = (path: string) => path.replace(/[:*](\w+)/g, '{$1}');

/** Every route of the app, as its route tables list them, with who may call it. */
function appRoutes(app: Koa): RouteEntry[] {
  return registeredRoutes(app.middleware).map((route) => ({ ...route, path: openApiPath(route.path) }));
}

const SCHEME_OF: Record<Caller, string | null> = { public: null, admin: 'adminToken', bot: 'botToken' };

/** Follows a local `$ref` (`#/components/...`). */
function resolve(node: unknown): Json {
  let current = node as Json;
  for (let depth = 0; typeof current?.$ref === 'string'; depth++) {
    if (depth > 20) throw new Error(`circular $ref ${String(current.$ref)}`);
    const ref = current.$ref as string;
    if (!ref.startsWith('#/')) throw new Error(`not a local $ref: ${ref}`);
    let target: unknown = spec;
    for (const part of ref.slice(2).split('/')) target = (target as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    current = target as Json;
  }
  return current;
}

function operations(): Array<{ path: string; method: string; item: Json; operation: Json }> {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    OPERATION_METHODS.filter((method) => item[method]).map((method) => ({ path, method, item, operation: item[method] as Json })),
  );
}

/** A schema that is the Problem schema, extends it (allOf), or is one of several that all do. */
function isProblem(schema: unknown): boolean {
  const resolved = resolve(schema);
  if (resolved === (spec.components.schemas as Json).Problem) return true;
  if (Array.isArray(resolved.allOf)) return resolved.allOf.some(isProblem);
  const choices = (resolved.oneOf ?? resolved.anyOf) as unknown[] | undefined;
  return Array.isArray(choices) && choices.length > 0 && choices.every(isProblem);
}

describe('docs/openapi.yaml', () => {
  let routes: RouteEntry[];
  let dir: string;
  let store: ReturnType<typeof createSqliteStore>;
  let bus: LocalJobBus;
  let runtime: QuickJsConnectorRuntime;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gi-openapi-'));
    const config = parseServiceConfig({ DATA_DIR: dir });
    store = createSqliteStore(join(dir, 'store.db'), systemClock);
    bus = new LocalJobBus();
    runtime = await createQuickJsRuntime({ workers: 0 });
    const base = { config, logger: createLogger('silent', 'openapi'), metrics: createMetrics(), clock: systemClock, store, files: new DiskFileStore(join(dir, 'files')) };
    const tokens = createTokenService({ secret: 'openapi-test-secret-0123456789abcdef', tokens: store.tokens, clock: systemClock });
    const parts = { base, bus, tokens, waiter: new CompletionWaiter<CompletionEvent>(), runtime, adminToken: 'openapi-test-admin-token-0123', consoleAssets: loadConsoleAssets() };
    routes = appRoutes(createHttpApp({ logger: base.logger, metrics: base.metrics, routes: embeddedRoutes(parts) }));
  });
  afterAll(async () => {
    await runtime.close();
    await bus.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is an OpenAPI 3.1 document with a unique operationId, a summary and a tag for every operation', () => {
    expect(spec.openapi).toMatch(/^3\.1\.\d+$/);
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, operation } of operations()) {
      expect([path, method, typeof operation.operationId, typeof operation.summary, Array.isArray(operation.tags)]).toEqual([path, method, 'string', 'string', true]);
    }
  });

  it('describes every route the service registers', () => {
    expect(routes.length).toBeGreaterThan(20);
    const missing = routes
      .filter(({ method, path }) => (method === '*' ? !spec.paths[path] : !spec.paths[path]?.[method.toLowerCase()]))
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });

  it('describes only routes the service registers', () => {
    const registered = new Set(routes.map(({ method, path }) => `${method} ${path}`));
    const phantom = operations()
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .filter((route) => !registered.has(route));
    expect(phantom).toEqual([]);
  });

  it('declares each path parameter, and no other', () => {
    for (const { path, method, item, operation } of operations()) {
      const declared = [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]
        .map(resolve)
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name)
        .sort();
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect([method, path, declared]).toEqual([method, path, templated]);
    }
  });

  it('answers every error status with a problem document (probes answer their own status)', () => {
    for (const { path, method, operation } of operations()) {
      if ((operation.tags as string[]).includes('Operations')) continue;
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (Number(status) < 400) continue;
        const content = resolve(response).content as Record<string, Json> | undefined;
        const schema = content?.['application/problem+json']?.schema;
        expect([method, path, status, schema !== undefined && isProblem(schema)]).toEqual([method, path, status, true]);
      }
    }
  });

  it('names every problem type of the service', () => {
    const problem = resolve((spec.components.schemas as Json).Problem) as { properties: { type: { enum: string[] } } };
    const types = Object.keys(STATUS_OF).map((code) => `${PROBLEM_TYPE_PREFIX}${code.replace(/_/g, '-')}`);
    expect([...problem.properties.type.enum].sort()).toEqual(types.sort());
  });

  it('secures each operation as its route declares: bot token, admin token or none, each token answering 401', () => {
    for (const { method, path, caller } of routes.filter((route) => route.method !== '*')) {
      const operation = spec.paths[path]?.[method.toLowerCase()] as Json | undefined;
      const scheme = SCHEME_OF[caller];
      // A webhook call may come with its integration's inbound credential instead of a bot token (docs/inbound.md).
      const inbound = method === 'POST' && /\/GenericIntegration(FileTransfer)?$/.test(path) ? [{ inboundAuth: [] }] : [];
      expect([method, path, operation?.security]).toEqual([method, path, scheme ? [{ [scheme]: [] }, ...inbound] : []]);
      if (scheme) expect([method, path, Object.keys(operation?.responses as Json)]).toEqual([method, path, expect.arrayContaining(['401'])]);
    }
    const schemes = (spec.components as { securitySchemes: Record<string, Json> }).securitySchemes;
    expect(schemes.botToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(schemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.inboundAuth).toMatchObject({ type: 'http', scheme: 'signature' });
  });

  it('resolves every $ref', () => {
    const refs: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else walk(value);
        }
      }
    };
    walk(spec);
    expect(refs.length).toBeGreaterThan(50);
    for (const ref of refs) expect(() => resolve({ $ref: ref })).not.toThrow();
  });
});
