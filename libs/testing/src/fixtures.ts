import { randomUUID } from 'node:crypto';
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
