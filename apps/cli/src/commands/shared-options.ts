import type { OptionSpec } from '../command';

export const botOption: OptionSpec = { type: 'string', required: true, value: 'BOT', description: 'Bot id' };
export const integrationOption: OptionSpec = { type: 'string', required: true, value: 'ID', description: 'Integration id (the connector)' };
