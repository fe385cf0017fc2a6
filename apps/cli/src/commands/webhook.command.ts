import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import type { Webhook } from '../control-api';
import { fields, json } from '../format';
import { botOption } from './shared-options';

export const webhookShow: CommandSpec = {
  path: ['webhook'],
  summary: "Show a bot's webhook configuration: base URL, bot id, every integration's URLs, and how its calls are authenticated (what to paste into the provider)",
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
      blocks.push(`${integration.integrationId} (entity ${integration.entityName})\n${indented}${setupText(integration.inboundAuth)}`);
    }
    if (webhook.integrations.length === 0) blocks.push(`No integrations deployed yet: gi connector deploy <file> --bot ${botId} ...`);
    writeLine(ctx.io.out, blocks.join('\n\n'));
  },
};

/** How an integration's calls are authenticated, and what to paste into the provider's settings. */
function setupText(setup: NonNullable<Webhook['integrations'][number]['inboundAuth']> | undefined): string {
  if (!setup) return '';
  const secrets = setup.secrets.map((s) => `${s.name} (${s.set ? 'set' : 'NOT SET: gi secrets set'})`).join(', ');
  const lines = [
    `  inbound auth: ${setup.scheme}${setup.scheme === 'bearer' ? '' : ` from ${setup.provider}`}`,
    ...(setup.scheme === 'bearer' ? [] : [`  paste into ${setup.provider}:`, fields(setup.fields.map((f): [string, string] => [f.label, f.value])).replace(/^/gm, '    ')]),
    ...(secrets ? [`  key secrets: ${secrets}`] : []),
    `  ${setup.note}`,
  ];
  return `\n${lines.join('\n')}`;
}
