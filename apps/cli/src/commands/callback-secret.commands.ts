import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { formatTime, json } from '../format';
import { botOption } from './shared-options';

export const callbackSecretRotate: CommandSpec = {
  path: ['callback-secret', 'rotate'],
  summary: "Create or replace a bot's callback signing secret (shown this once)",
  args: [],
  options: { bot: botOption },
  details:
    'The secret alone is printed on stdout (SECRET=$(gi callback-secret rotate --bot acme)). After a rotation, callbacks carry the previous secret\'s signature too for 24 hours, so receivers can switch over.',
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const created = await ctx.control.rotateCallbackSecret(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(created));
    writeLine(ctx.io.out, created.secret);
    const previous = created.previousSecretValidUntil ? `; the previous one signs too until ${formatTime(created.previousSecretValidUntil)}` : '';
    writeLine(ctx.io.err, `callback signing secret of bot ${botId}, created ${formatTime(created.createdAt)}${previous}`);
  },
};

export const callbackSecretShow: CommandSpec = {
  path: ['callback-secret', 'show'],
  summary: "Show when a bot's callback signing secret was made (never the secret)",
  args: [],
  options: { bot: botOption },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const info = await ctx.control.callbackSecret(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(info));
    const previous = info.previousSecretValidUntil ? `; the previous one signs too until ${formatTime(info.previousSecretValidUntil)}` : '';
    writeLine(ctx.io.out, `Bot ${botId} signs callbacks with a secret created ${formatTime(info.createdAt)}${previous}`);
  },
};
