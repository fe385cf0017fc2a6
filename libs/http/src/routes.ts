import Router from '@koa/router';
import type { Layer } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import type { Access, Caller } from './access';

export type RouteHandler<Grant> = (ctx: Context, grant: Grant) => unknown;

/** A registered route: `*` as method for the answer to every other method of a path (405). */
export interface RouteEntry {
  method: string;
  path: string;
  caller: Caller;
}

export interface RoutesOptions {
  /** Prepended to every path, e.g. `/admin`. */
  prefix?: string;
  /** Checks of path parameters (400 when malformed), run once the caller is authorized. */
  params?: Record<string, (value: string) => void>;
}

/** The routes of a `Routes` middleware, for `registeredRoutes`. */
const TABLE = Symbol('routes');
type RoutesMiddleware = Middleware & { [TABLE]?: Routes };

/** A registered route: the router's layer (pattern, methods, parameter names) and what runs when it matches. */
interface Route {
  layer: Layer;
  run: (ctx: Context) => Promise<unknown>;
}

type MatchedContext = Context & { _matchedRoute?: string | RegExp };

/** What makes a prefix a pattern (parameters, wildcards, groups, escapes) rather than literal text. */
const PATTERN_SYNTAX = /[:*{}()[\]+?!\\]/;

/**
 * A set of routes, each registered with the access that decides who may call it: there is no way to add
 * a route without one, and no prefix-wide check that a path spelled another way could miss. Matching is
 * case-sensitive and strict (`/admin/bots/` and `/Admin/bots` are not `/admin/bots`), on the path exactly
 * as sent (no decoding, no dot-segment or slash folding): a path the router matches is the path whose
 * access is checked, and any other spelling matches nothing (404).
 */
export class Routes {
  private readonly router: Router;
  private readonly entries: RouteEntry[] = [];
  private readonly routes: Route[] = [];
  private readonly prefix: string;
  private readonly paramChecks: Array<[string, (value: string) => void]>;

  constructor(options: RoutesOptions = {}) {
    this.router = new Router({ prefix: options.prefix, sensitive: true, strict: true });
    // Matching is case-sensitive: a path not starting with a literal prefix matches none of the routes.
    this.prefix = options.prefix && !PATTERN_SYNTAX.test(options.prefix) ? options.prefix : '';
    this.paramChecks = Object.entries(options.params ?? {});
  }

  get<Grant>(path: string, access: Access<Grant>, handler: RouteHandler<Grant>): this {
    return this.add('get', path, access, handler);
  }

  post<Grant>(path: string, access: Access<Grant>, handler: RouteHandler<Grant>): this {
    return this.add('post', path, access, handler);
  }

  put<Grant>(path: string, access: Access<Grant>, handler: RouteHandler<Grant>): this {
    return this.add('put', path, access, handler);
  }

  delete<Grant>(path: string, access: Access<Grant>, handler: RouteHandler<Grant>): this {
    return this.add('delete', path, access, handler);
  }

  /** Every method of `path` that no route above took (registered after them): the 405 answer. */
  otherMethods<Grant>(path: string, access: Access<Grant>, handler: RouteHandler<Grant>): this {
    return this.add('all', path, access, handler);
  }

  /** The routes with who may call each; a GET route answers HEAD too. */
  list(): readonly RouteEntry[] {
    return this.entries;
  }

  /**
   * Tries the routes in the order registered and runs the first whose pattern (the router's, compiled
   * as above) and method match; otherwise passes the request on to the next table. It reads the router's
   * layers (`stack`, `regexp`, `methods`, `params`) instead of taking its dispatch, which builds a middleware
   * chain of the matching layers for every request and tries every table's routes: @koa/router is pinned to one
   * version, and routes-dispatch.test.ts holds this dispatch to the router's own answer for any path. A request tries the
   * tables in order until one takes it, so a path outside this table's prefix is passed on at once.
   */
  middleware(): Middleware {
    const { prefix, routes } = this;
    const middleware: RoutesMiddleware = (ctx: Context, next: Next) => {
      const path = ctx.path;
      if (!path.startsWith(prefix)) return next();
      const method = ctx.method;
      for (const route of routes) {
        const { layer } = route;
        if (!layer.methods.includes(method)) continue;
        const match = layer.regexp.exec(path);
        if (match === null) continue;
        // Parameters as the router decodes them (a malformed escape stays as sent).
        ctx.params = layer.params(path, match.slice(1), ctx.params);
        (ctx as MatchedContext)._matchedRoute = layer.path;
        return route.run(ctx);
      }
      return next();
    };
    middleware[TABLE] = this;
    return middleware;
  }

  private add<Grant>(method: 'get' | 'post' | 'put' | 'delete' | 'all', path: string, access: Access<Grant>, handler: RouteHandler<Grant>): this {
    if (access.caller === 'bot' && !path.includes(':botId')) throw new Error(`Route ${path} is for a bot but names none (:botId).`);
    const run = async (ctx: Context) => {
      const grant = await access.grant(ctx);
      const values = ctx.params as Record<string, string>;
      for (const [name, check] of this.paramChecks) if (values[name] !== undefined) check(values[name]);
      return handler(ctx, grant);
    };
    this.router[method](path, run);
    const layer = this.router.stack[this.router.stack.length - 1];
    this.routes.push({ layer, run });
    this.entries.push({ method: method === 'all' ? '*' : method.toUpperCase(), path: String(layer.path), caller: access.caller });
    return this;
  }
}

/** Every route an app serves, with who may call it, read from its middleware (in the order they are tried). */
export function registeredRoutes(middleware: readonly Middleware[]): RouteEntry[] {
  return middleware.flatMap((m) => (m as RoutesMiddleware)[TABLE]?.list() ?? []);
}
