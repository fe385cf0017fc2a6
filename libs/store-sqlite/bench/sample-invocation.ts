import { v7 as timeOrderedUuid } from 'uuid';
import { requestEntityJson } from '@gi/domain';
import type { NewInvocation } from '@gi/domain';

const BODY = '{"orderId":42,"customer":{"id":7,"name":"Ada"},"lines":[{"sku":"A-1","qty":2}]}';

/** A typical small JSON webhook call as the gateway stores it: what the store benchmarks write. */
export function sampleInvocation(now: number): NewInvocation {
  return {
    // Time-ordered, as the gateway names invocations (docs/decisions.md).
    id: timeOrderedUuid(),
    botId: 'acme',
    tokenId: 't1',
    entityName: 'Order',
    integrationId: 'ack',
    integrationVersion: 1,
    pool: 'default',
    mode: 'sync',
    endpoint: 'GenericIntegration',
    responseContentType: 'application/json',
    entityJson: requestEntityJson({ RequestParams: 'source=crm', RequestHeaders: 'Host=localhost%3A8080&Content-Type=application%2Fjson&Content-Length=79', ResponseBody: null }, BODY),
    rawBody: BODY,
    createdAt: now,
    expireAt: now + 72 * 3600_000,
    callbackUrl: null,
  };
}
