import type { Context } from 'koa';

/**
 * Sets one header of the reply, as `ctx.set(name, value)` does for a single value (nothing once the
 * reply has started), without the arrays Koa builds on each call: for the headers every call carries.
 */
export function setReplyHeader(ctx: Context, name: string, value: string): void {
  if (!ctx.res.headersSent) ctx.res.setHeader(name, value);
}
