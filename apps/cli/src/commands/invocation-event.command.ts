import { isValidEventName } from '@gi/domain';
import { CliError } from '../cli-errors';
import { writeLine } from '../cli-io';
import type { CommandContext, CommandSpec } from '../command';
import { eventReceiptSchema } from '../control-api';
import { json } from '../format';
import { send } from '../http-send';
import { botTokenFor, MINTED_TOKEN_TTL_SECONDS } from '../invoke/bot-token';
import { readBody } from '../invoke/invoke-request';
import { apiRootFor, apiRootFromWebhook, eventUrl } from '../invoke/public-api';
import { ApiError, readProblem } from '../problem';
import { botOption } from './shared-options';

const HELP = 'gi invocations event --help';
/** The longest invocation id the event URL takes (ids are UUIDs). */
const MAX_INVOCATION_ID_CHARS = 128;
const PLATFORM = /^[A-Za-z0-9_-]+$/;

export const invocationsEvent: CommandSpec = {
  path: ['invocations', 'event'],
  summary: 'Send a durable job the event it waits for (Context.WaitForEvent), through the public event URL, as an outside system would',
  args: ['invocationId'],
  options: {
    bot: botOption,
    name: { type: 'string', value: 'NAME', required: true, description: 'The event name the job waits for: Context.WaitForEvent(NAME)' },
    body: { type: 'string', value: 'JSON', description: "The event's payload (JSON unless --content-type says otherwise; 'null' for none)" },
    'body-file': { type: 'string', value: 'F', description: "The payload read from a file (type from its extension), or from stdin with '-' (JSON by default)" },
    'content-type': { type: 'string', value: 'T', description: 'Content-Type of the payload (default application/json)' },
    token: { type: 'string', value: 'T', description: `Bot token to send it with (default: mint one valid for ${MINTED_TOKEN_TTL_SECONDS / 60} minutes)` },
    platform: { type: 'string', value: 'SEGMENT', description: 'Platform path segment; given, the URL is built from --url without asking the service' },
  },
  details: [
    'POSTs the payload to GenericIntegrationEvent?invocationId=ID&name=NAME (the event URL of gi webhook) with a token of the bot.',
    'Prints whether the job resumed with it, or whether it was kept because the job does not wait for it yet (its next wait of that name takes it).',
    'A job that already finished refuses it (409); an unknown, expired or other bot\'s invocation is 404.',
    'Example: gi invocations event --bot acme 3f9c... --name approved --body \'{"by": "ada"}\'',
  ].join('\n'),
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const invocationId = input.arg('invocationId');
    if (invocationId.length > MAX_INVOCATION_ID_CHARS) throw input.usage(`<invocationId> is longer than ${MAX_INVOCATION_ID_CHARS} characters: no invocation has such an id`);
    const name = input.required('name');
    if (!isValidEventName(name)) throw input.usage('--name must be the event name the job waits for: 1 to 200 characters, no control characters');
    const platform = input.string('platform');
    if (platform !== undefined && !PLATFORM.test(platform)) throw input.usage(`--platform "${platform}" must be letters, digits, '_' or '-'`);
    const givenToken = input.string('token');
    if (givenToken !== undefined && givenToken.trim() === '') throw input.usage('--token must not be empty');
    const payload = await readBody(
      { body: input.string('body'), bodyFile: input.string('body-file'), contentType: input.string('content-type') },
      { readStdin: () => ctx.io.readStdin(), helpCommand: HELP },
    );
    if (payload.body === undefined) throw input.usage("give the event's payload: --body JSON or --body-file F (--body null sends none)");

    const url = eventUrl(await apiRoot(ctx, botId, platform, givenToken), botId, invocationId, name);
    const token = botTokenFor(ctx.control, botId, givenToken, 'cli event');
    const headers = { authorization: `Bearer ${await token.get()}`, 'content-type': payload.contentType ?? 'application/json', accept: 'application/json' };
    const response = await send(url, { method: 'POST', headers, body: payload.body });
    if (!response.ok) throw new ApiError(await readProblem(response));
    const receipt = eventReceiptSchema.safeParse(await response.json().catch(() => null));
    if (!receipt.success) throw new CliError(`unexpected reply to the event (HTTP ${response.status}): not a receipt`);
    if (ctx.json) return void writeLine(ctx.io.out, json(receipt.data));
    const event = `Event "${name}"`;
    writeLine(
      ctx.io.out,
      receipt.data.status === 'resumed'
        ? `${event} resumed invocation ${invocationId} of bot ${botId}`
        : `${event} kept for invocation ${invocationId} of bot ${botId}: it does not wait for it yet, its next wait for "${name}" takes it`,
    );
  },
};

/** Where the public API is: --platform under --url, --url when only a bot token is at hand, else where the service says it is. */
async function apiRoot(ctx: CommandContext, botId: string, platform: string | undefined, givenToken: string | undefined): Promise<string> {
  if (platform !== undefined) return apiRootFor(ctx.url, platform);
  if (givenToken !== undefined && (await ctx.adminToken.find()) === null) return apiRootFor(ctx.url, 'Platform');
  const webhook = await ctx.control.webhook(botId);
  return apiRootFromWebhook(webhook) ?? apiRootFor(webhook.baseUrl, 'Platform');
}
