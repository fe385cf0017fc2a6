import { CliError, UsageError } from '../cli-errors';
import { writeLine } from '../cli-io';
import type { CommandContext, CommandSpec } from '../command';
import type { CommandInput } from '../command-input';
import { json } from '../format';
import { send } from '../http-send';
import { botTokenFor, MINTED_TOKEN_TTL_SECONDS } from '../invoke/bot-token';
import { parseHeaderItems, parseQueryItems, readBody, type InvokeRequest } from '../invoke/invoke-request';
import { pollInvocation, type FinalReply } from '../invoke/poll-invocation';
import { apiRootFor, apiRootFromWebhook, genericIntegrationUrl, pollUrl } from '../invoke/public-api';
import { ApiError, describeProblem, readProblem } from '../problem';
import { createProgressIndicator } from '../progress-indicator';
import { botOption, integrationOption } from './shared-options';

export const MINTED_TOKEN_LABEL = 'cli invoke';
const POLL_WAIT_SECONDS = 20;
const PLATFORM = /^[A-Za-z0-9_-]+$/;

export const invoke: CommandSpec = {
  path: ['invoke'],
  summary: 'Call an integration through the public webhook endpoint, as an external system would',
  args: [],
  options: {
    bot: botOption,
    integration: integrationOption,
    entity: { type: 'string', value: 'E', description: "The entity in the URL (default: the integration's entity)" },
    body: { type: 'string', value: 'JSON', description: 'Request body (JSON unless --content-type says otherwise)' },
    'body-file': { type: 'string', value: 'F', description: "Request body read from a file (type from its extension), or from stdin with '-' (JSON by default)" },
    'content-type': { type: 'string', value: 'T', description: 'Content-Type of the body (default application/json)' },
    query: { type: 'string', multiple: true, value: 'k=v', description: 'A query parameter; repeat for several' },
    header: { type: 'string', multiple: true, value: "'Name: value'", description: 'A request header; repeat for several' },
    async: { type: 'boolean', description: 'Start the run asynchronously, print its invocationId, then long-poll for the result' },
    token: { type: 'string', value: 'T', description: `Bot token to call with (default: mint one valid for ${MINTED_TOKEN_TTL_SECONDS / 60} minutes)` },
    platform: { type: 'string', value: 'SEGMENT', description: 'Platform path segment; given, URLs are built from --url without asking the service' },
  },
  details: [
    'Sync: prints the reply body. --async: prints the invocationId, shows progress on stderr, then prints the final body.',
    'A run that fails prints the error (title and detail) and exits 1.',
    'Example: gi invoke --bot acme --integration ack --body \'{"orderId": 42}\'',
  ].join('\n'),
  run: runInvoke,
};

async function runInvoke(ctx: CommandContext, input: CommandInput): Promise<void> {
  const botId = input.requiredName('bot');
  const integrationId = input.requiredName('integration');
  const entityOption = input.string('entity');
  if (entityOption !== undefined) input.name('--entity', entityOption);
  const platform = input.string('platform');
  if (platform !== undefined && !PLATFORM.test(platform)) throw input.usage(`--platform "${platform}" must be letters, digits, '_' or '-'`);
  const givenToken = input.string('token');
  if (givenToken !== undefined && givenToken.trim() === '') throw input.usage('--token must not be empty');

  const request: InvokeRequest = {
    ...(await readBody(
      { body: input.string('body'), bodyFile: input.string('body-file'), contentType: input.string('content-type') },
      { readStdin: () => ctx.io.readStdin() },
    )),
    query: parseQueryItems(input.list('query')),
    headers: parseHeaderItems(input.list('header')),
  };
  const { apiRoot, entityName } = await resolveTarget(ctx, { botId, integrationId, entityOption, platform, givenToken });
  const token = botTokenFor(ctx.control, botId, givenToken, MINTED_TOKEN_LABEL);
  const asyncMode = input.flag('async');

  const url = genericIntegrationUrl(apiRoot, { botId, entityName, integrationId }, request.query, asyncMode);
  const headers = new Headers(request.headers);
  headers.set('authorization', `Bearer ${await token.get()}`);
  if (request.contentType !== undefined) headers.set('content-type', request.contentType);
  const response = await send(url, { method: 'POST', headers, body: request.body });

  if (response.status === 202) {
    const invocationId = await readInvocationId(response);
    if (!ctx.json) writeLine(ctx.io.out, invocationId);
    const location = response.headers.get('location');
    const target = location ? new URL(location, url).href : pollUrl(apiRoot, botId, invocationId);
    const indicator = createProgressIndicator(ctx.io.err, invocationId, ctx.io.now);
    let reply: FinalReply;
    try {
      reply = await pollInvocation({ url: target, token, io: ctx.io, indicator, waitSeconds: POLL_WAIT_SECONDS });
    } finally {
      indicator.stop();
    }
    printReply(ctx, reply, invocationId);
    return;
  }
  if (!response.ok) {
    const problem = await readProblem(response);
    // A sync call that outlived the sync limit keeps running on the service: say where to find it.
    if (response.status === 504 && problem.invocationId) {
      throw new CliError(`${describeProblem(problem)}; the run goes on: gi invocations show --bot ${botId} ${problem.invocationId}`);
    }
    throw new ApiError(problem);
  }
  printReply(ctx, { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() });
}

interface TargetQuery {
  botId: string;
  integrationId: string;
  entityOption: string | undefined;
  platform: string | undefined;
  givenToken: string | undefined;
}

/** Where to send the call: from --platform, or from the bot's webhook configuration on the service. */
async function resolveTarget(ctx: CommandContext, q: TargetQuery): Promise<{ apiRoot: string; entityName: string }> {
  const needEntity = () => {
    if (q.entityOption === undefined) throw new UsageError('missing --entity (needed with --platform or without an admin token)', 'gi invoke --help');
    return q.entityOption;
  };
  if (q.platform !== undefined) return { apiRoot: apiRootFor(ctx.url, q.platform), entityName: needEntity() };
  // A caller holding only a bot token can still invoke; the URL is then built from --url.
  if (q.givenToken !== undefined && (await ctx.adminToken.find()) === null) {
    return { apiRoot: apiRootFor(ctx.url, 'Platform'), entityName: needEntity() };
  }
  const webhook = await ctx.control.webhook(q.botId);
  const integration = webhook.integrations.find((i) => i.integrationId === q.integrationId);
  const entityName = q.entityOption ?? integration?.entityName;
  if (entityName === undefined) {
    throw new CliError(`integration ${q.integrationId} is not deployed on bot ${q.botId}: gi connector deploy <file> --bot ${q.botId} --integration ${q.integrationId} --entity <E>`);
  }
  return { apiRoot: apiRootFromWebhook(webhook) ?? apiRootFor(webhook.baseUrl, 'Platform'), entityName };
}

async function readInvocationId(response: Response): Promise<string> {
  const body: unknown = await response.json().catch(() => null);
  const id = typeof body === 'object' && body !== null && 'invocationId' in body ? body.invocationId : undefined;
  if (typeof id !== 'string' || id === '') throw new CliError('unexpected reply: 202 without an invocationId');
  return id;
}

function printReply(ctx: CommandContext, reply: FinalReply, invocationId?: string): void {
  if (!ctx.json) {
    if (reply.text !== '') writeLine(ctx.io.out, reply.text);
    return;
  }
  let body: unknown = reply.text;
  if (/json/i.test(reply.contentType)) {
    try {
      body = JSON.parse(reply.text);
    } catch {
      // not JSON after all: keep the text
    }
  }
  writeLine(ctx.io.out, json({ ...(invocationId !== undefined && { invocationId }), status: reply.status, contentType: reply.contentType, body }));
}
