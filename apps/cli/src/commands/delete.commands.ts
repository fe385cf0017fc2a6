import { writeLine } from '../cli-io';
import type { CommandSpec, OptionSpec } from '../command';
import { json } from '../format';
import { botOption, integrationOption } from './shared-options';

const forceOption: OptionSpec = { type: 'boolean', description: 'Cancel the invocations in flight instead of refusing' };
const cancelledText = (n: number | undefined) => (n ? `; ${n} invocation(s) in flight cancelled` : '');

export const connectorDelete: CommandSpec = {
  path: ['connector', 'delete'],
  summary: 'Delete an integration: every version and its own secrets',
  args: [],
  options: { bot: botOption, integration: integrationOption, force: forceOption },
  details: [
    'Refused while invocations of it are Queued or Running, unless --force (which cancels them).',
    'Its stored invocations stay readable (gi invocations) until they expire. A later deploy under the same id goes on from the last version number.',
  ].join('\n'),
  async run(ctx, input) {
    const deleted = await ctx.control.deleteIntegration(input.requiredName('bot'), input.requiredName('integration'), input.flag('force'));
    if (ctx.json) return void writeLine(ctx.io.out, json(deleted));
    writeLine(ctx.io.out, `Deleted integration ${String(deleted.integrationId)} of bot ${deleted.botId}${cancelledText(deleted.cancelledInvocations)}`);
  },
};

export const entityDelete: CommandSpec = {
  path: ['entity', 'delete'],
  summary: 'Delete an entity that no integration uses',
  args: ['botId', 'entityName'],
  options: {},
  details: 'Refused while an integration uses it (the error names them): delete those or deploy them on another entity first.',
  async run(ctx, input) {
    const deleted = await ctx.control.deleteEntity(input.argName('botId'), input.argName('entityName'));
    if (ctx.json) return void writeLine(ctx.io.out, json(deleted));
    writeLine(ctx.io.out, `Deleted entity ${String(deleted.entityName)} of bot ${deleted.botId}`);
  },
};

export const botDelete: CommandSpec = {
  path: ['bot', 'delete'],
  summary: 'Delete a bot: its entities, integrations, tokens, quotas, secrets, callback secrets, invocations and uploaded files',
  args: [],
  options: { bot: botOption, force: forceOption },
  details: [
    'Refused while invocations of the bot are Queued or Running, unless --force (which cancels them). Its tokens stop working at once.',
    'Its stored invocations, Idempotency-Keys and uploaded files are deleted too: a bot created again under the same id starts with none of them.',
  ].join('\n'),
  async run(ctx, input) {
    const deleted = await ctx.control.deleteBot(input.requiredName('bot'), input.flag('force'));
    if (ctx.json) return void writeLine(ctx.io.out, json(deleted));
    writeLine(ctx.io.out, `Deleted bot ${deleted.botId}${cancelledText(deleted.cancelledInvocations)}`);
  },
};
