import type { CompletionEvent } from '@gi/contracts';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createTokenService, SecretVault } from '@gi/auth';
import { LocalJobBus } from '@gi/bus-local';
import { controlRouter } from '@gi/control';
import { CompletionWaiter, DEFAULT_CONNECTOR_LIMITS, DEFAULT_JOURNAL_LIMITS, MAX_STORED_ENTITY_BYTES, systemClock } from '@gi/domain';
import type { Store } from '@gi/domain';
import { gatewayRouter } from '@gi/gateway';
import { createHttpApp } from '@gi/http';
import { createMetrics } from '@gi/observability';
import type { Routes } from '@gi/http';
import { createMongoStore } from '@gi/store-mongo';
import { createSqliteStore } from '@gi/store-sqlite';
import { FakeMongod } from '@gi/testing';

const logger = pino({ level: 'silent' });
const bodyTimeouts = { idleMs: 10_000, totalMs: 60_000 };

async function serve(routes: Routes): Promise<{ url: string; server: Server }> {
  const server = createServer(createHttpApp({ logger, metrics: createMetrics(), routes: [routes] }).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** What callers get when an invocation is too large for the store, or the store cannot answer. */
describe('store limits over HTTP', () => {
  it('answers 413 for a call whose stored request is over the 4 MiB an invocation keeps, and stores nothing', async () => {
    const store = createSqliteStore(':memory:');
    const bus = new LocalJobBus();
    const tokens = createTokenService({ secret: 's'.repeat(40), tokens: store.tokens, clock: systemClock });
    await store.catalog.putEntity('acme', 'Order', [], Date.now());
    await store.catalog.deployIntegration('acme', 'ack', { entityName: 'Order', code: 'x', pool: 'default', timeoutSeconds: 5, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null }, Date.now());
    const { token } = await tokens.mint('acme', {});
    const settings = {
      platformSegment: 'Platform',
      platformVersion: [9, 19] as const,
      syncTimeoutMs: 1000,
      maxBodyBytes: MAX_STORED_ENTITY_BYTES,
      bodyTimeouts,
      maxJsonDepth: 64,
      invocationTtlMs: 60_000,
      idempotencyKeyTtlMs: 60_000,
      journalLimits: DEFAULT_JOURNAL_LIMITS,
    };
    const { url, server } = await serve(gatewayRouter({ store, bus, tokens, waiter: new CompletionWaiter<CompletionEvent>(), clock: systemClock, logger, settings }));
    try {
      // 3 MiB of text is within MAX_BODY_SIZE, but each quote is stored as \" in the entity's JSON: 6 MiB.
      const reply = await fetch(`${url}/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', 'idempotency-key': '"k1"' },
        body: '"'.repeat(3 * 1024 * 1024),
      });
      expect(reply.status).toBe(413);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      expect(await reply.json()).toMatchObject({ type: 'urn:gi:problem:payload-too-large', status: 413, detail: expect.stringContaining(`at most ${MAX_STORED_ENTITY_BYTES}`) });
      expect(await store.invocations.list('acme', { limit: 10 })).toEqual([]);
    } finally {
      server.close();
      await bus.close();
      await store.close();
    }
  });

  it('answers 503 with Retry-After, not 500, for any call while the MongoDB replica set has no primary', async () => {
    const fake = await FakeMongod.start({ replicaSet: true });
    let store: Store | undefined;
    let server: Server | undefined;
    try {
      store = await createMongoStore(fake.replicaSetUrl, { serverSelectionTimeoutMS: 300 });
      const bus = new LocalJobBus();
      const tokens = createTokenService({ secret: 's'.repeat(40), tokens: store.tokens, clock: systemClock });
      const adminToken = 'a'.repeat(32);
      const control = controlRouter({
        store,
        tokens,
        secrets: new SecretVault(store.secrets, null),
        runtime: { compile: () => ({ ok: true }), run: () => Promise.reject(new Error('no connector runs in this test')) },
        log: { error: () => undefined },
        bus,
        clock: systemClock,
        settings: { adminToken, platformSegment: 'Platform', maxBodyBytes: 1024, bodyTimeouts, maxJsonDepth: 64, quotaDefaults: { ratePerSecond: 0, burst: null, maxInFlight: 0 } },
      });
      const served = await serve(control);
      server = served.server;
      fake.stepDown();
      const reply = await fetch(`${served.url}/admin/bots/acme/invocations`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('5');
      expect(await reply.json()).toMatchObject({ type: 'urn:gi:problem:unavailable', status: 503, detail: expect.stringContaining('The store is not answering') });
      fake.stepUp();
      await bus.close();
    } finally {
      server?.close();
      await store?.close();
      await fake.stop();
    }
  });
});
