import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createTokenService } from '@gi/auth';
import { LocalJobBus } from '@gi/bus-local';
import { CompletionWaiter, DEFAULT_CONNECTOR_LIMITS, systemClock } from '@gi/domain';
import { gatewayRouter } from '@gi/gateway';
import { createHttpApp, createMetrics } from '@gi/http';
import { createSqliteStore } from '@gi/store-sqlite';

/** A bus whose broker raised a resource alarm. */
class BlockedBus extends LocalJobBus {
  override isBlocked(): boolean {
    return true;
  }
}

describe('gateway under broker back-pressure', () => {
  it('answers 503 with Retry-After and stores nothing while the broker is blocked', async () => {
    const store = createSqliteStore(':memory:');
    const bus = new BlockedBus();
    const logger = pino({ level: 'silent' });
    const tokens = createTokenService({ secret: 's'.repeat(40), tokens: store.tokens, clock: systemClock });
    await store.catalog.putEntity('acme', 'Order', [], Date.now());
    await store.catalog.deployIntegration('acme', 'ack', { entityName: 'Order', code: 'x', pool: 'default', timeoutSeconds: 5, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null }, Date.now());
    const { token } = await tokens.mint('acme', {});
    const router = gatewayRouter({
      store,
      bus,
      tokens,
      waiter: new CompletionWaiter(),
      clock: systemClock,
      logger,
      settings: { platformSegment: 'Platform', platformVersion: [9, 19], syncTimeoutMs: 1000, maxBodyBytes: 1024, invocationTtlMs: 60_000, idempotencyKeyTtlMs: 60_000 },
    });
    const server = createServer(createHttpApp({ logger, metrics: createMetrics(), ready: async () => true, routers: [router] }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const reply = await fetch(`http://127.0.0.1:${port}/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('10');
      expect(((await reply.json()) as { detail: string }).detail).toContain('nothing was accepted');
      expect(await store.invocations.list('acme', { limit: 10 })).toEqual([]);
    } finally {
      server.close();
      await bus.close();
      await store.close();
    }
  });
});
