import { randomUUID } from 'node:crypto';
import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { NewInvocation, WebhookEntity } from '@gi/domain';

/** A new invocation; `entity` (an object, for tests' convenience) becomes its `entityJson`. */
export function newInvocation({ entity, ...overrides }: Partial<NewInvocation> & { createdAt: number; entity?: WebhookEntity }): NewInvocation {
  return {
    id: randomUUID(),
    botId: 'bot-a',
    tokenId: null,
    entityName: 'Order',
    integrationId: 'ack',
    integrationVersion: 1,
    pool: 'default',
    mode: 'async',
    endpoint: 'GenericIntegration',
    responseContentType: 'application/json',
    entityJson: JSON.stringify(entity ?? { RequestParams: 'a=1', RequestHeaders: 'Host=x', RequestBody: { orderId: 7 }, ResponseBody: null }),
    rawBody: '{"orderId": 7}',
    expireAt: overrides.createdAt + 3600_000,
    callbackUrl: null,
    ...overrides,
  };
}

/** Durable-run settings for executors under test: waits over 1 s suspend, the default lifetime, TTL and journal limits. */
export const TEST_DURABLE_SETTINGS = {
  suspendAfterMs: 1000,
  maxLifetimeMs: 30 * 86_400_000,
  invocationTtlMs: 72 * 3_600_000,
  limits: DEFAULT_JOURNAL_LIMITS,
};
