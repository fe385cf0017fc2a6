import { QUOTA_CACHE_MS } from '@gi/domain';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import type { Limits } from '../control-api';
import { json, table } from '../format';
import { botOption } from './shared-options';

const tokenOption = { type: 'string' as const, value: 'TOKEN_ID', description: "One of the bot's tokens instead of the bot itself" };

const limit = (value: number | null, unit = '') => (value === null ? 'none' : `${value}${unit}`);
const own = (value: number | null, unit = '') => (value === null ? 'default' : `${value}${unit}`);

function rows(who: string, quotas: Limits, effective: Limits): string[][] {
  return [
    [who, 'rate', own(quotas.ratePerSecond, '/s'), limit(effective.ratePerSecond, '/s')],
    [who, 'burst', own(quotas.burst), limit(effective.burst)],
    [who, 'in flight', own(quotas.maxInFlight), limit(effective.maxInFlight)],
  ];
}

const HEADERS = ['FOR', 'QUOTA', 'SET', 'ENFORCED'];

export const quotaShow: CommandSpec = {
  path: ['quota', 'show'],
  summary: 'Show the quotas of a bot (and of its tokens that have their own) or of one token',
  args: [],
  options: { bot: botOption, token: tokenOption },
  details: 'SET is what was configured ("default": the service settings for a bot, no limit of its own for a token); ENFORCED is what applies.',
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const tokenText = input.string('token');
    if (tokenText !== undefined) {
      const token = await ctx.control.getTokenQuotas(botId, input.name('--token', tokenText));
      if (ctx.json) return void writeLine(ctx.io.out, json(token));
      return void writeLine(ctx.io.out, table(HEADERS, rows(`token ${token.tokenId}`, token.quotas, token.effective)));
    }
    const quotas = await ctx.control.getQuotas(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(quotas));
    const all = [...rows(`bot ${botId}`, quotas.quotas, quotas.effective), ...quotas.tokens.flatMap((t) => rows(`token ${t.tokenId}`, t.quotas, t.effective))];
    writeLine(ctx.io.out, table(HEADERS, all));
  },
};

export const quotaSet: CommandSpec = {
  path: ['quota', 'set'],
  summary: 'Set the quotas of a bot or of one of its tokens; over them the webhook calls get 429',
  args: [],
  options: {
    bot: botOption,
    token: tokenOption,
    rate: { type: 'string', value: 'N', description: 'Calls per second (0.5, 20, ...)' },
    burst: { type: 'string', value: 'N', description: 'Calls at once before the rate applies (needs --rate; default: the rate)' },
    'max-in-flight': { type: 'string', value: 'N', description: 'Invocations queued or running at once' },
  },
  details: `Replaces the quotas: a quota left out returns to its default. Gateways apply a change within ${QUOTA_CACHE_MS / 1000} seconds.`,
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const tokenText = input.string('token');
    const ratePerSecond = input.positive('rate', 1_000_000);
    const burst = input.int('burst', 1, 10_000_000);
    const maxInFlight = input.int('max-in-flight', 1, 1_000_000);
    if (burst !== undefined && ratePerSecond === undefined) throw input.usage('--burst needs --rate');
    const request = { ...(ratePerSecond !== undefined && { ratePerSecond }), ...(burst !== undefined && { burst }), ...(maxInFlight !== undefined && { maxInFlight }) };
    if (tokenText !== undefined) {
      const token = await ctx.control.putTokenQuotas(botId, input.name('--token', tokenText), request);
      if (ctx.json) return void writeLine(ctx.io.out, json(token));
      return void writeLine(ctx.io.out, table(HEADERS, rows(`token ${token.tokenId}`, token.quotas, token.effective)));
    }
    const quotas = await ctx.control.putQuotas(botId, request);
    if (ctx.json) return void writeLine(ctx.io.out, json(quotas));
    writeLine(ctx.io.out, table(HEADERS, rows(`bot ${botId}`, quotas.quotas, quotas.effective)));
  },
};
