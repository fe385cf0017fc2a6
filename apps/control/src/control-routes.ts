import type { Context } from 'koa';
import type { z } from 'zod';
import { badRequest, GiError, parseJson } from '@gi/domain';
import { readTextBody } from '@gi/http';
import type { Access, Routes } from '@gi/http';
import type { ControlDeps } from './control.deps';

/** What every resource of the admin API registers its routes with. */
export interface ControlRoutes {
  routes: Routes;
  /** The operator's access: every route of the admin API has it. */
  admin: Access<void>;
  deps: ControlDeps;
  /** The request's JSON body (415 unless JSON; size, time and depth limits of the settings); `{}` when empty. */
  body(ctx: Context): Promise<unknown>;
}

export function controlRoutes(routes: Routes, admin: Access<void>, deps: ControlDeps): ControlRoutes {
  const { settings } = deps;
  const body = async (ctx: Context) => {
    if (!ctx.is('application/json')) throw new GiError('unsupported_media_type', 'Unsupported media type', 'Send a JSON body (Content-Type: application/json).');
    const text = await readTextBody(ctx, { maxBytes: settings.maxBodyBytes, ...settings.bodyTimeouts });
    return text ? parseJson(text, settings.maxJsonDepth) : {};
  };
  return { routes, admin, deps, body };
}

/** The value when it has the schema's shape, else 400 listing every field that is wrong. */
export function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const errors = result.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
    throw badRequest(errors.map((e) => `${e.field}: ${e.message}`).join('; '), { extensions: { errors } });
  }
  return result.data;
}
