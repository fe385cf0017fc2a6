import type { Context } from 'koa';
import { assertName, assertTextMediaType, CALLBACK_HEADER, GiError, notFound, parseIdempotencyKey, requestBodyJson, supportsAsync, supportsFileTransfer, webhookApiRoot } from '@gi/domain';
import type { Endpoint } from '@gi/domain';
import { botAccess, noteInvocation, readExactTextBody, Routes, setReplyHeader } from '@gi/http';
import { parseEventQuery } from './event-query';
import { fileTransferReader } from './file-transfer';
import type { GatewayDeps } from './gateway.deps';
import { handleWebhookCall } from './handle-webhook-call';
import type { BodyReader } from './webhook-call';
import { webhookAccess } from './inbound-access';
import type { InboundCheck, WebhookGrant } from './inbound-access';
import { parsePrefer } from './prefer';
import { renderAnswer } from './render-answer';
import { sendEvent } from './send-event';

const methodNotAllowed = (ctx: Context) => {
  throw new GiError('method_not_allowed', 'Method not allowed', `${ctx.method} is not supported here; use POST.`, { headers: { Allow: 'POST' } });
};

/**
 * POST .../GenericIntegration and .../GenericIntegrationFileTransfer (docs/openapi.yaml), for a token of
 * the bot in the path or, where the integration says so, its inbound scheme's credential
 * (inbound-access.ts): reads the call from the request line and headers, hands it to handleWebhookCall
 * and renders its answer. POST .../GenericIntegrationEvent (a bot token) resumes a durable run that
 * waits for an event.
 */
export function gatewayRouter(deps: GatewayDeps): Routes {
  const { settings } = deps;
  const routes = new Routes({ prefix: webhookApiRoot(settings.platformSegment) });
  const bot = botAccess(deps.tokens);
  const inboundDeps = { store: deps.store, tokens: deps.tokens, secrets: deps.secrets, clock: deps.clock, logger: deps.logger, publicBaseUrl: settings.publicBaseUrl };

  const handle = (endpoint: Endpoint) => async (ctx: Context, { tokenId, integration, inbound, credentialHeaders }: WebhookGrant) => {
    const { botId, entityName, integrationId } = ctx.params as Record<string, string>;
    if (endpoint === 'GenericIntegrationFileTransfer' && !supportsFileTransfer(settings.platformVersion)) {
      throw notFound('GenericIntegrationFileTransfer needs platform version 9.19 or later.');
    }
    assertName('entityName', entityName);
    assertName('integrationId', integrationId);
    const idempotencyKey = parseIdempotencyKey(headerValues(ctx.req, 'idempotency-key'));
    // Without async mode (below 9.10) there is nothing to poll: respond-async is not honoured.
    const prefer = parsePrefer(ctx.get('prefer') || undefined);
    if (!supportsAsync(settings.platformVersion)) prefer.respondAsync = false;
    const callbackValues = headerValues(ctx.req, CALLBACK_HEADER.toLowerCase());
    const callbackHeader = callbackValues.length === 0 ? undefined : callbackValues;

    const answer = await handleWebhookCall(
      deps,
      {
        botId,
        tokenId,
        integration,
        inbound,
        credentialHeaders,
        entityName,
        integrationId,
        endpoint,
        rawQuery: ctx.querystring,
        rawHeaders: ctx.req.rawHeaders,
        contentType: ctx.get('content-type') || undefined,
        idempotencyKey,
        prefer,
        callbackHeader,
        prepareBody: () => (endpoint === 'GenericIntegrationFileTransfer' ? fileTransferReader(ctx, deps, botId) : textBodyReader(ctx, settings, inbound)),
      },
      { stored: (invocationId) => setReplyHeader(ctx, 'X-Invocation-Id', invocationId), hangUp: (stop) => ctx.res.once('close', stop) },
    );
    renderAnswer(ctx, answer);
  };

  for (const endpoint of ['GenericIntegration', 'GenericIntegrationFileTransfer'] as const) {
    const path = `/:botId/:entityName/:integrationId/${endpoint}`;
    routes.post(path, webhookAccess(inboundDeps, endpoint), handle(endpoint));
    // No other method carries a body to check a signature over: they answer 405 to a token of the bot.
    routes.otherMethods(path, bot, methodNotAllowed);
  }

  const eventPath = '/:botId/GenericIntegrationEvent';
  routes.post(eventPath, bot, async (ctx: Context) => {
    // Durable runs are jobs of async mode: before it (9.10) there is nothing to resume.
    if (!supportsAsync(settings.platformVersion)) throw notFound('GenericIntegrationEvent needs platform version 9.10 or later.');
    const { botId } = ctx.params as Record<string, string>;
    const { invocationId, name } = parseEventQuery(ctx.query);
    noteInvocation(ctx, invocationId);
    const contentType = ctx.get('content-type') || undefined;
    const text = await readExactTextBody(ctx, { maxBytes: settings.journalLimits.maxResultBytes, ...settings.bodyTimeouts });
    // The payload as JSON text, checked like a webhook call's body (JSON kept as sent, text and forms converted); none is null.
    const payloadJson = text.length === 0 ? 'null' : requestBodyJson(contentType, text, settings.maxJsonDepth);
    ctx.status = 202;
    ctx.body = await sendEvent(deps, { botId, id: invocationId }, name, payloadJson);
  });
  routes.otherMethods(eventPath, bot, methodNotAllowed);
  return routes;
}

/**
 * The reader of a text body, exactly as sent, once its Content-Type is known to be text (415 otherwise);
 * a signed body's bytes go through the integration's inbound check first.
 */
function textBodyReader(ctx: Context, settings: GatewayDeps['settings'], inbound: InboundCheck | null): BodyReader {
  assertTextMediaType(ctx.get('content-type') || undefined);
  const checkBytes = inbound?.signsBody ? inbound.checkBody : undefined;
  return () => readExactTextBody(ctx, { maxBytes: settings.maxBodyBytes, ...settings.bodyTimeouts }, checkBytes);
}

/** Every value of a request header (`name` in lower case), one per header line (Node would join them with commas). */
function headerValues(req: Context['req'], name: string): string[] {
  const values: string[] = [];
  // Node keeps every header it received (maxHeadersCount 0): one it does not hold was not sent.
  if (req.headers[name] === undefined) return values;
  const { rawHeaders } = req;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) values.push(rawHeaders[i + 1]);
  return values;
}
