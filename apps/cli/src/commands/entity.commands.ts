import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { formatTime, json, table } from '../format';
import { botOption } from './shared-options';

export const entityCreate: CommandSpec = {
  path: ['entity', 'create'],
  summary: 'Define an entity; the five webhook fields are always present',
  args: ['botId', 'entityName'],
  options: {
    field: { type: 'string', multiple: true, value: 'NAME', description: 'An extra field of the entity; repeat for several' },
  },
  details: 'Running it again replaces the extra fields. Example: gi entity create acme Order --field CustomerId',
  async run(ctx, input) {
    const botId = input.argName('botId');
    const entityName = input.argName('entityName');
    const entity = await ctx.control.putEntity(botId, entityName, input.list('field'));
    if (ctx.json) return void writeLine(ctx.io.out, json(entity));
    writeLine(ctx.io.out, `Entity ${entity.name} of bot ${entity.botId}: ${entity.fields.join(', ')}`);
  },
};

export const entityList: CommandSpec = {
  path: ['entity', 'list'],
  summary: "List a bot's entities",
  args: [],
  options: { bot: botOption },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const { entities } = await ctx.control.listEntities(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(entities));
    if (entities.length === 0) return void writeLine(ctx.io.err, `Bot ${botId} has no entities yet: gi entity create ${botId} <entityName>`);
    writeLine(ctx.io.out, table(['ENTITY', 'UPDATED', 'FIELDS'], entities.map((e) => [e.name, formatTime(e.updatedAt), e.fields.join(', ')])));
  },
};

