import { assertSecretName, GiError, MAX_SECRET_NAME_LENGTH, MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_SCOPE } from '@gi/domain';
import { writeLine } from '../cli-io';
import type { CommandSpec, OptionSpec } from '../command';
import type { CommandInput } from '../command-input';
import type { SecretScopeRef } from '../control-client';
import { formatTime, json, table } from '../format';
import { readLocalFile } from '../read-local-file';
import { botOption } from './shared-options';

const scopeOption: OptionSpec = { type: 'string', value: 'ID', description: "The integration's own secrets; without it the bot's, shared by its integrations" };

function scopeOf(input: CommandInput): SecretScopeRef {
  const botId = input.requiredName('bot');
  const integration = input.string('integration');
  return integration === undefined ? { botId } : { botId, integrationId: input.name('--integration', integration) };
}

const describe = ({ botId, integrationId }: SecretScopeRef) => (integrationId === undefined ? `bot ${botId}` : `integration ${integrationId} of bot ${botId}`);

/** The secret name argument, checked here with the server's rule. */
function nameOf(input: CommandInput): string {
  const name = input.arg('NAME');
  try {
    return assertSecretName(name);
  } catch (error) {
    throw input.usage(error instanceof GiError ? error.detail : String(error));
  }
}

/** The value: never from the command line (where `ps` shows it); one trailing newline is dropped (`echo x | gi secrets set ...`). */
async function readValue(ctx: Parameters<CommandSpec['run']>[0], input: CommandInput): Promise<string> {
  const file = input.string('value-file');
  const bytes = file === undefined || file === '-' ? await ctx.io.readStdin() : await readLocalFile(file, '--value-file');
  const value = bytes.toString('utf8').replace(/\r?\n$/, '');
  if (value === '') throw input.usage(`the secret value is empty: pipe it on stdin (printf %s "$VALUE" | gi secrets set ...) or name a file with --value-file`);
  return value;
}

export const secretsSet: CommandSpec = {
  path: ['secrets', 'set'],
  summary: 'Set or rotate a connector secret (Context.Secrets.NAME); the value is read from stdin or a file',
  args: ['NAME'],
  options: {
    bot: botOption,
    integration: scopeOption,
    'value-file': { type: 'string', value: 'F', description: "Read the value from this file ('-': stdin, the default); one trailing newline is dropped" },
  },
  details:
    `NAME: upper-case letters, digits and _, not starting with a digit (at most ${MAX_SECRET_NAME_LENGTH}). Values: at most ${MAX_SECRET_VALUE_BYTES / 1024} KiB; ` +
    `at most ${MAX_SECRETS_PER_SCOPE} secrets per bot and per integration. ` +
    'The value is never taken from the command line. Example: printf %s "$CRM_KEY" | gi secrets set --bot acme --integration crm CRM_API_KEY',
  async run(ctx, input) {
    const scope = scopeOf(input);
    const name = nameOf(input);
    const value = await readValue(ctx, input);
    const stored = await ctx.control.setSecret(scope, name, value);
    if (ctx.json) return void writeLine(ctx.io.out, json(stored));
    const rotated = stored.createdAt !== stored.updatedAt;
    writeLine(ctx.io.err, `secret ${name} of ${describe(scope)} ${rotated ? 'rotated' : 'set'} (${formatTime(stored.updatedAt)})`);
  },
};

export const secretsList: CommandSpec = {
  path: ['secrets', 'list'],
  summary: "List a bot's or an integration's secrets (names and dates, never the values)",
  args: [],
  options: { bot: botOption, integration: scopeOption },
  async run(ctx, input) {
    const scope = scopeOf(input);
    const { secrets } = await ctx.control.listSecrets(scope);
    if (ctx.json) return void writeLine(ctx.io.out, json(secrets));
    if (secrets.length === 0) return void writeLine(ctx.io.err, `${describe(scope)} has no secrets`);
    writeLine(ctx.io.out, table(['NAME', 'CREATED', 'UPDATED'], secrets.map((s) => [s.name, formatTime(s.createdAt), formatTime(s.updatedAt)])));
  },
};

export const secretsDelete: CommandSpec = {
  path: ['secrets', 'delete'],
  summary: 'Delete a connector secret',
  args: ['NAME'],
  options: { bot: botOption, integration: scopeOption },
  async run(ctx, input) {
    const scope = scopeOf(input);
    const name = nameOf(input);
    await ctx.control.deleteSecret(scope, name);
    if (ctx.json) return void writeLine(ctx.io.out, json({ name, deleted: true }));
    writeLine(ctx.io.err, `secret ${name} of ${describe(scope)} deleted`);
  },
};

export const secretsReseal: CommandSpec = {
  path: ['secrets', 'reseal'],
  summary: 'Re-encrypt every secret under the current SECRETS_KEY (after a key rotation)',
  args: [],
  options: {},
  details: 'Run once the service runs with the new key as SECRETS_KEY and the old one as SECRETS_KEY_PREVIOUS; then SECRETS_KEY_PREVIOUS can be removed (docs/operations.md).',
  async run(ctx) {
    const report = await ctx.control.resealSecrets();
    if (ctx.json) return void writeLine(ctx.io.out, json(report));
    writeLine(ctx.io.out, `${report.resealed} re-encrypted, ${report.current} already under the current key, ${report.unreadable} unreadable`);
  },
};
