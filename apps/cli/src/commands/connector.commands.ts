import { DEFAULT_POOL, DEFAULT_TIMEOUT_SECONDS, MAX_CONNECTOR_CODE_BYTES, MAX_TIMEOUT_SECONDS } from '@gi/domain';
import { CliError } from '../cli-errors';
import { buildConnector, ENTRY_EXTENSIONS } from '../connector-build';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { fields, formatTime, json, table } from '../format';
import { ApiError } from '../problem';
import { describeInboundAuth, inboundOptions, readInboundAuth } from './inbound-options';
import { describeLimits, limitOptions, readLimits } from './limit-options';
import { botOption, integrationOption } from './shared-options';

export const connectorDeploy: CommandSpec = {
  path: ['connector', 'deploy'],
  summary: 'Deploy a Custom Code connector (a JavaScript file, or a TypeScript or module entry bundled with its imports) as a new version of an integration',
  args: ['file'],
  options: {
    bot: botOption,
    integration: integrationOption,
    entity: { type: 'string', required: true, value: 'E', description: 'The entity the integration runs on' },
    pool: { type: 'string', value: 'P', description: `Executor pool that runs it (default "${DEFAULT_POOL}")` },
    timeout: { type: 'string', value: 'SECONDS', description: `Wall-time limit of one run, in seconds (default ${DEFAULT_TIMEOUT_SECONDS}, 1-${MAX_TIMEOUT_SECONDS})` },
    'allowed-host': { type: 'string', multiple: true, value: 'H', description: 'A host the connector may call through Context.Http; repeat for several' },
    ...limitOptions,
    'callback-url': { type: 'string', value: 'URL', description: "Where every invocation's outcome is POSTed (signed), unless a call names its own" },
    ...inboundOptions,
    draft: { type: 'boolean', description: 'Deploy it as the draft: live calls keep the live version; try it with gi connector replay, then gi connector publish' },
  },
  details: [
    'The new version takes effect at once. Code that does not compile is refused and reported as file:line:column. Limits left out take their defaults.',
    `The code sent (the script, or the bundle) may be up to ${MAX_CONNECTOR_CODE_BYTES / 1024} KiB.`,
    `A ${ENTRY_EXTENSIONS.filter((e) => e !== '.js').join(', ')} entry, or a .js file with import or export statements, is bundled with its local imports and the packages of`,
    "its project's node_modules (esbuild) into one script; the project's own files are kept with the version (gi connector show).",
    'Types are not checked: run tsc --noEmit (npm run typecheck in a project from gi connector init). A plain .js file is sent as written.',
    'With --draft the integration keeps answering calls with its live version; one draft per integration, a new one replaces it.',
    'Each deploy states the whole version: its inbound auth too (bearer unless --inbound-auth names a scheme; docs/inbound.md).',
    'Example: gi connector deploy src/index.ts --bot shop --integration orders --entity Order',
    'Example: gi connector deploy hook.js --bot shop --integration gh --entity Push --inbound-auth github --inbound-secret GITHUB_WEBHOOK_SECRET',
  ].join('\n'),
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
    const inboundAuth = readInboundAuth(input);
    const { code, sources } = await buildConnector(file);

    const request = {
      entityName,
      code,
      ...(sources.length > 0 && { sources }),
      ...(pool !== undefined && { pool }),
      ...(timeoutSeconds !== undefined && { timeoutSeconds }),
      ...(allowedHosts.length > 0 && { allowedHosts }),
      ...(Object.keys(limits).length > 0 && { limits }),
      ...(callbackUrl !== undefined && { callbackUrl }),
      ...(inboundAuth !== undefined && { inboundAuth }),
    };
    let deployed;
    try {
      deployed = input.flag('draft') ? await ctx.control.deployDraft(botId, integrationId, request) : await ctx.control.deploy(botId, integrationId, request);
    } catch (error) {
      throw compileError(file, error, sources.length > 0) ?? error;
    }
    if (ctx.json) return void writeLine(ctx.io.out, json(deployed));
    const hosts = deployed.allowedHosts.length > 0 ? deployed.allowedHosts.join(', ') : 'none';
    const what =
      'liveVersion' in deployed && typeof deployed.liveVersion === 'number'
        ? `a draft of ${deployed.integrationId} on bot ${deployed.botId} (version ${deployed.liveVersion} stays live until gi connector publish)`
        : `${deployed.integrationId} version ${deployed.version} on bot ${deployed.botId}`;
    writeLine(
      ctx.io.out,
      `Deployed ${what}: entity ${deployed.entityName}, pool ${deployed.pool}, timeout ${deployed.timeoutSeconds}s, allowed hosts ${hosts}${deployed.callbackUrl ? `, callbacks to ${deployed.callbackUrl}` : ''}${deployed.inboundAuth && deployed.inboundAuth.scheme !== 'bearer' ? `, inbound auth ${describeInboundAuth(deployed.inboundAuth)}` : ''}`,
    );
  },
};

/** A 400 carrying line and column is a compile error: report it the way compilers do. */
function compileError(file: string, error: unknown, bundled: boolean): CliError | null {
  if (!(error instanceof ApiError) || error.problem.status !== 400) return null;
  const { line, column, message, detail, title } = error.problem;
  if (typeof line !== 'number') return null;
  // The compiler's own message when the problem carries it; the detail repeats the position.
  const text = typeof message === 'string' && message ? message : (detail ?? title);
  return new CliError(compileErrorText(file, line, typeof column === 'number' ? column : undefined, text, bundled));
}

/** Where the sandbox's compiler stopped: in the file itself, or in the bundle made of it (`gi connector show --bundle`). */
export function compileErrorText(file: string, line: number, column: number | undefined, text: string, bundled: boolean): string {
  const position = column === undefined ? `${line}` : `${line}:${column}`;
  const where = bundled ? `${file}: the bundle does not compile, at ${position} of the bundle` : `${file}:${position}`;
  return `${where}: ${text.replace(/\s+/g, ' ').trim()}`;
}

export const connectorShow: CommandSpec = {
  path: ['connector', 'show'],
  summary: 'Show the deployed connector of an integration: settings, versions and code (the source files of a bundle)',
  args: [],
  options: {
    bot: botOption,
    integration: integrationOption,
    bundle: { type: 'boolean', description: 'Print the bundle the sandbox runs instead of the source files it was built from' },
    at: { type: 'string', value: 'N', description: 'Version N, an earlier one (gi connector versions lists them); the latest when left out' },
  },
  async run(ctx, input) {
    const version = input.int('at', 1, Number.MAX_SAFE_INTEGER);
    const detail = await ctx.control.getIntegration(input.requiredName('bot'), input.requiredName('integration'), version);
    if (ctx.json) return void writeLine(ctx.io.out, json(detail));
    const versions = detail.versions.map((v) => `${v.version} (${formatTime(v.deployedAt)})`).join(', ');
    const bundled = detail.sources.length > 0;
    const code =
      bundled && !input.flag('bundle')
        ? detail.sources.flatMap((source) => [`--- ${source.path} ---`, source.content.replace(/\n$/, '')])
        : [bundled ? '--- bundle ---' : '--- code ---', detail.code];
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
          ['inbound auth', describeInboundAuth(detail.inboundAuth)],
          ...(detail.limits ? [['limits', describeLimits(detail.limits)] as [string, string]] : []),
          ['versions', versions || String(detail.version)],
          ...(bundled ? [['sources', `${detail.sources.map((s) => s.path).join(', ')} (bundled; --bundle shows the bundle)`] as [string, string]] : []),
        ]),
        '',
        ...code,
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
