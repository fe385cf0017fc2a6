import { readLocalFile } from '../read-local-file';
import { DEFAULT_POOL, MAX_TIMEOUT_SECONDS } from '@gi/domain';
import { CliError } from '../cli-errors';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { fields, formatTime, json, table } from '../format';
import { ApiError } from '../problem';
import { describeLimits, limitOptions, readLimits } from './limit-options';
import { botOption, integrationOption } from './shared-options';

export const connectorDeploy: CommandSpec = {
  path: ['connector', 'deploy'],
  summary: 'Deploy a Custom Code connector from a JavaScript file as a new version of an integration',
  args: ['file'],
  options: {
    bot: botOption,
    integration: integrationOption,
    entity: { type: 'string', required: true, value: 'E', description: 'The entity the integration runs on' },
    pool: { type: 'string', value: 'P', description: `Executor pool that runs it (default "${DEFAULT_POOL}")` },
    timeout: { type: 'string', value: 'SECONDS', description: 'Wall-time limit of one run' },
    'allowed-host': { type: 'string', multiple: true, value: 'H', description: 'A host the connector may call through Context.Http; repeat for several' },
    ...limitOptions,
    'callback-url': { type: 'string', value: 'URL', description: "Where every invocation's outcome is POSTed (signed), unless a call names its own" },
  },
  details: 'The new version takes effect at once. Code that does not compile is refused and reported as file:line:column. Limits left out take their defaults.',
  async run(ctx, input) {
    const file = input.arg('file');
    const botId = input.requiredName('bot');
    const integrationId = input.requiredName('integration');
    const entityName = input.requiredName('entity');
    const pool = input.string('pool');
    if (pool !== undefined) input.name('--pool', pool);
    const timeoutSeconds = input.int('timeout', 1, MAX_TIMEOUT_SECONDS);
    const allowedHosts = input.list('allowed-host');
    const limits = readLimits(input);
    const callbackUrl = input.string('callback-url');
    const code = await readSource(file);

    let deployed;
    try {
      deployed = await ctx.control.deploy(botId, integrationId, {
        entityName,
        code,
        ...(pool !== undefined && { pool }),
        ...(timeoutSeconds !== undefined && { timeoutSeconds }),
        ...(allowedHosts.length > 0 && { allowedHosts }),
        ...(Object.keys(limits).length > 0 && { limits }),
        ...(callbackUrl !== undefined && { callbackUrl }),
      });
    } catch (error) {
      throw compileError(file, error) ?? error;
    }
    if (ctx.json) return void writeLine(ctx.io.out, json(deployed));
    const hosts = deployed.allowedHosts.length > 0 ? deployed.allowedHosts.join(', ') : 'none';
    writeLine(
      ctx.io.out,
      `Deployed ${deployed.integrationId} version ${deployed.version} on bot ${deployed.botId}: entity ${deployed.entityName}, pool ${deployed.pool}, timeout ${deployed.timeoutSeconds}s, allowed hosts ${hosts}${deployed.callbackUrl ? `, callbacks to ${deployed.callbackUrl}` : ''}`,
    );
  },
};

export async function readSource(file: string): Promise<string> {
  return (await readLocalFile(file)).toString('utf8');
}

/** A 400 carrying line and column is a compile error: report it the way compilers do. */
function compileError(file: string, error: unknown): CliError | null {
  if (!(error instanceof ApiError) || error.problem.status !== 400) return null;
  const { line, column, message, detail, title } = error.problem;
  if (typeof line !== 'number') return null;
  const position = typeof column === 'number' ? `${line}:${column}` : `${line}`;
  // The compiler's own message when the problem carries it; the detail repeats the position.
  const text = typeof message === 'string' && message ? message : (detail ?? title);
  return new CliError(`${file}:${position}: ${text.replace(/\s+/g, ' ').trim()}`);
}

export const connectorShow: CommandSpec = {
  path: ['connector', 'show'],
  summary: 'Show the deployed connector of an integration: settings, versions and code',
  args: [],
  options: { bot: botOption, integration: integrationOption },
  async run(ctx, input) {
    const detail = await ctx.control.getIntegration(input.requiredName('bot'), input.requiredName('integration'));
    if (ctx.json) return void writeLine(ctx.io.out, json(detail));
    const versions = detail.versions.map((v) => `${v.version} (${formatTime(v.deployedAt)})`).join(', ');
    writeLine(
      ctx.io.out,
      [
        fields([
          ['integration', detail.integrationId],
          ['bot', detail.botId],
          ['version', `${detail.version} deployed ${formatTime(detail.deployedAt)}`],
          ['entity', detail.entityName],
          ['pool', detail.pool],
          ['timeout', `${detail.timeoutSeconds}s`],
          ['allowed hosts', detail.allowedHosts.length > 0 ? detail.allowedHosts.join(', ') : 'none'],
          ...(detail.limits ? [['limits', describeLimits(detail.limits)] as [string, string]] : []),
          ['versions', versions || String(detail.version)],
        ]),
        '',
        '--- code ---',
        detail.code,
      ].join('\n'),
    );
  },
};

export const connectorList: CommandSpec = {
  path: ['connector', 'list'],
  summary: "List a bot's integrations and their deployed versions",
  args: [],
  options: { bot: botOption },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const { integrations } = await ctx.control.listIntegrations(botId);
    if (ctx.json) return void writeLine(ctx.io.out, json(integrations));
    if (integrations.length === 0) return void writeLine(ctx.io.err, `Bot ${botId} has no integrations yet: gi connector deploy <file> --bot ${botId} ...`);
    const rows = integrations.map((i) => [i.integrationId, String(i.version), i.entityName, i.pool, `${i.timeoutSeconds}s`, formatTime(i.deployedAt)]);
    writeLine(ctx.io.out, table(['INTEGRATION', 'VERSION', 'ENTITY', 'POOL', 'TIMEOUT', 'DEPLOYED'], rows));
  },
};
