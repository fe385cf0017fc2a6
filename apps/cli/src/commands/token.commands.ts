import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import type { TokenInfo } from '../control-api';
import { formatTime, json, table, toMillis } from '../format';
import { botOption } from './shared-options';

const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

export const tokenCreate: CommandSpec = {
  path: ['token', 'create'],
  summary: "Create a bearer token for a bot's webhook endpoints",
  args: [],
  options: {
    bot: botOption,
    ttl: { type: 'string', value: 'SECONDS', description: 'Lifetime; without it the token is permanent until revoked' },
    label: { type: 'string', value: 'L', description: 'A note shown by gi token list' },
  },
  details: 'The token alone is printed on stdout (TOKEN=$(gi token create --bot acme)); its id and expiry go to stderr.',
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const ttlSeconds = input.int('ttl', 1, MAX_TTL_SECONDS);
    const label = input.string('label');
    const created = await ctx.control.createToken(botId, {
      ...(ttlSeconds !== undefined && { ttlSeconds }),
      ...(label !== undefined && { label }),
    });
    if (ctx.json) return void writeLine(ctx.io.out, json(created));
    writeLine(ctx.io.out, created.token);
    const expiry = created.expiresAt == null ? 'never expires' : `expires ${formatTime(created.expiresAt)}`;
    writeLine(ctx.io.err, `token ${created.tokenId} for bot ${botId}, ${expiry}`);
  },
};

export function tokenState(token: TokenInfo, now: number): string {
  if (token.revokedAt != null) return 'revoked';
  const expiresAt = toMillis(token.expiresAt);
  return expiresAt !== null && expiresAt <= now ? 'expired' : 'active';
}

export const tokenList: CommandSpec = {
  path: ['token', 'list'],
  summary: "List a bot's tokens (ids and state, never the token values)",
  args: [],
  options: { bot: botOption },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const { tokens } = await ctx.control.listTokens(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(tokens));
    if (tokens.length === 0) return void writeLine(ctx.io.err, `Bot ${botId} has no tokens: gi token create --bot ${botId}`);
    const now = ctx.io.now();
    const rows = tokens.map((t) => [
      t.tokenId,
      tokenState(t, now),
      formatTime(t.createdAt),
      t.expiresAt == null ? 'never' : formatTime(t.expiresAt),
      t.label ?? '',
    ]);
    writeLine(ctx.io.out, table(['TOKEN ID', 'STATE', 'CREATED', 'EXPIRES', 'LABEL'], rows));
  },
};

export const tokenRevoke: CommandSpec = {
  path: ['token', 'revoke'],
  summary: 'Revoke a token at once',
  args: ['tokenId'],
  options: { bot: botOption },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const tokenId = input.argName('tokenId');
    await ctx.control.revokeToken(botId, tokenId);
    if (ctx.json) return void writeLine(ctx.io.out, json({ botId, tokenId, revoked: true }));
    writeLine(ctx.io.out, `Revoked token ${tokenId} of bot ${botId}`);
  },
};
