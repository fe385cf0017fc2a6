import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { fields, json } from '../format';
import { botOption } from './shared-options';

export const webhookShow: CommandSpec = {
  path: ['webhook'],
  summary: "Show a bot's webhook configuration: base URL, bot id and every integration's URLs",
  args: [],
  options: { bot: botOption },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const webhook = await ctx.control.webhook(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(webhook));
    const blocks = [
      fields([
        ['base URL', webhook.baseUrl],
        ['bot id', webhook.botId],
      ]),
    ];
    for (const integration of webhook.integrations) {
      const { sync, async, fileTransfer, poll, event } = integration.urls;
      const urls: Array<[string, string]> = [['sync', sync]];
      if (async) urls.push(['async', async]);
      if (fileTransfer) urls.push(['file transfer', fileTransfer]);
      if (poll) urls.push(['poll', poll]);
      if (event) urls.push(['event', event]);
      const indented = fields(urls).replace(/^/gm, '  ');
      blocks.push(`${integration.integrationId} (entity ${integration.entityName})\n${indented}`);
    }
    if (webhook.integrations.length === 0) blocks.push(`No integrations deployed yet: gi connector deploy <file> --bot ${botId} ...`);
    writeLine(ctx.io.out, blocks.join('\n\n'));
  },
};
