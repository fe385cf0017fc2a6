import { eventPath, pollPath, webhookApiRoot, webhookCallPath } from '@gi/domain';
import type { Webhook } from '../control-api';

/**
 * URLs of the public webhook API (their shapes: libs/domain webhook-urls.ts). The API root is
 * "{base}/api/{platform}"; it is read from the service's own webhook configuration when possible, so
 * a configured platform segment or public base URL is followed without extra options.
 */
export const apiRootFor = (baseUrl: string, platform: string) => webhookApiRoot(platform, baseUrl);

/** The API root the service advertises, or null when none of its URLs shows it. */
export function apiRootFromWebhook(webhook: Webhook): string | null {
  const { botId } = webhook;
  const suffixes: Array<[string | null | undefined, string]> = [
    [webhook.pollUrl, pollPath(botId)],
    [webhook.eventUrl, eventPath(botId)],
    ...webhook.integrations.flatMap(({ integrationId, entityName, urls }): Array<[string | null | undefined, string]> => [
      [urls.poll, pollPath(botId)],
      [urls.sync, webhookCallPath({ botId, entityName, integrationId })],
    ]),
  ];
  for (const [url, suffix] of suffixes) {
    if (!url) continue;
    const withoutQuery = url.split('?')[0];
    if (withoutQuery.endsWith(suffix)) return withoutQuery.slice(0, -suffix.length);
  }
  return null;
}

export function genericIntegrationUrl(
  apiRoot: string,
  target: { botId: string; entityName: string; integrationId: string },
  query: Array<[string, string]>,
  asyncResponse: boolean,
): string {
  const url = new URL(`${apiRoot}${webhookCallPath(target)}`);
  for (const [key, value] of query) url.searchParams.append(key, value);
  if (asyncResponse) url.searchParams.set('asyncResponse', 'true');
  return url.href;
}

export function pollUrl(apiRoot: string, botId: string, invocationId: string): string {
  const url = new URL(`${apiRoot}${pollPath(botId)}`);
  url.searchParams.set('invocationId', invocationId);
  return url.href;
}

/** Where an outside system sends a durable run the event it waits for (GenericIntegrationEvent). */
export function eventUrl(apiRoot: string, botId: string, invocationId: string, name: string): string {
  const url = new URL(`${apiRoot}${eventPath(botId)}`);
  url.searchParams.set('invocationId', invocationId);
  url.searchParams.set('name', name);
  return url.href;
}

/** The poll URL with the long-poll hold set. */
export function withWait(url: string, waitSeconds: number): string {
  const result = new URL(url);
  result.searchParams.set('waitSeconds', String(waitSeconds));
  return result.href;
}
