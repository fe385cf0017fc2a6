import type { Context } from 'koa';
import { verifyAdminBearer } from '@gi/auth';
import type { TokenService } from '@gi/auth';

/** Who may call a route: anyone, the operator (the admin token), or the bot named in the path (one of its tokens). */
export type Caller = 'public' | 'admin' | 'bot';

/**
 * The authorization of one route, decided after the route matched and before its handler runs. `grant`
 * throws the 401 or 403 problem when the request may not call the route, and otherwise returns what the
 * handler may rely on (the token id of a bot's call).
 */
export interface Access<Grant> {
  readonly caller: Caller;
  grant(ctx: Context): Grant | Promise<Grant>;
}

/** Anyone: the probes, the metrics and the console's static files (which hold no data). */
export const publicAccess: Access<void> = { caller: 'public', grant: () => undefined };

/** The operator: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function adminAccess(adminToken: string): Access<void> {
  return { caller: 'admin', grant: (ctx) => verifyAdminBearer(ctx.get('authorization') || undefined, adminToken) };
}

/** A token of the bot named by the path parameter `botId`: 401 without a valid one, 403 for another bot's. */
export function botAccess(tokens: Pick<TokenService, 'verify'>): Access<{ tokenId: string }> {
  return { caller: 'bot', grant: (ctx) => tokens.verify(ctx.get('authorization') || undefined, (ctx.params as Record<string, string>).botId) };
}
