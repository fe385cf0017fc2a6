import type { Endpoint } from './invocation';

/**
 * The shapes of the public webhook API's URLs, in one place: the gateway and results routes, the
 * `Location` of an async start, the control API's webhook screen and the CLI all build them here.
 * Path segments are percent-encoded; the routers decode them back.
 */
const seg = encodeURIComponent;

/** The root of the webhook API: `{baseUrl}/api/{platformSegment}` (a path alone without a base URL). */
export const webhookApiRoot = (platformSegment: string, baseUrl = ''): string => `${baseUrl.replace(/\/+$/, '')}/api/${seg(platformSegment)}`;

/** Under the API root: the endpoint of one integration. */
export const webhookCallPath = (target: { botId: string; entityName: string; integrationId: string }, endpoint: Endpoint = 'GenericIntegration'): string =>
  `/${seg(target.botId)}/${seg(target.entityName)}/${seg(target.integrationId)}/${endpoint}`;

/** Under the API root: where a bot's invocations are polled (GET) and cancelled (DELETE), `?invocationId=` added. */
export const pollPath = (botId: string): string => `/${seg(botId)}/GetGenericIntegrationResponse`;

/** Under the API root: where an outside system sends a durable run the event it waits for (POST), `?invocationId=&name=` added. */
export const eventPath = (botId: string): string => `/${seg(botId)}/GenericIntegrationEvent`;

/** The `Location` of an invocation: its poll URL, as a path from the server's root. */
export const pollLocation = (platformSegment: string, botId: string, invocationId: string): string =>
  `${webhookApiRoot(platformSegment)}${pollPath(botId)}?invocationId=${invocationId}`;
