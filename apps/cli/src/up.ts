import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createTokenService } from '@gi/auth';
import { ALL_POOLS, LocalJobBus } from '@gi/bus-local';
import { loadOrCreateSecret, parseServiceConfig, processEnvironment } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import { controlRouter } from '@gi/control';
import { CompletionWaiter, RateLimiter, systemClock } from '@gi/domain';
import { recoverInvocations, startExecutor } from '@gi/executor';
import { gatewayRouter } from '@gi/gateway';
import { createHttpApp, createLogger, createMetrics } from '@gi/http';
import { resultsRouter } from '@gi/results';
import { createQuickJsRuntime } from '@gi/sandbox';
import { createSqliteStore } from '@gi/store-sqlite';

const LEASE_MS = 30_000;
const MAX_ATTEMPTS = 5;
const EXPIRY_SWEEP_MS = 10 * 60_000;

/**
 * The embedded deployment: gateway, results, control and an executor pool in one process on one port,
 * with the SQLite store under DATA_DIR and the in-process bus.
 */
export async function runUp(_argv: string[]): Promise<void> {
  const config = parseServiceConfig(processEnvironment());
  const logger = createLogger(config.LOG_LEVEL, 'generic-integration');
  const adminToken = config.ADMIN_TOKEN ?? announceGenerated(config, 'admin-token', 'admin token');
  const secret = config.TOKEN_SECRET ?? loadOrCreateSecret(config.DATA_DIR, 'token-secret').value;

  const clock = systemClock;
  const store = createSqliteStore(join(config.DATA_DIR, 'store.db'), clock);
  const bus = new LocalJobBus();
  const runtime = await createQuickJsRuntime();
  const metrics = createMetrics();
  const tokens = createTokenService({ secret, tokens: store.tokens, clock });
  const waiter = new CompletionWaiter();
  await bus.onCompletion((event) => waiter.notify(event));

  const executor = await startExecutor(
    { store, bus, runtime, clock, logger, metrics, ownerId: `embedded-${randomUUID()}`, leaseMs: LEASE_MS, maxAttempts: MAX_ATTEMPTS },
    [ALL_POOLS],
    config.EXECUTOR_CONCURRENCY,
  );
  // This process is the only executor: whatever a previous run left unfinished is picked up again.
  const recovered = await recoverInvocations({ store, bus, clock }, { leaseBefore: Number.MAX_SAFE_INTEGER, publishedBefore: clock.now() + 1 });
  if (recovered.republished > 0) logger.info(recovered, 'recovered unfinished invocations');
  const expirySweep = setInterval(() => {
    store.invocations.deleteExpired(clock.now()).catch((err) => logger.warn({ err }, 'expiry sweep failed'));
  }, EXPIRY_SWEEP_MS);
  expirySweep.unref();

  const platform = { platformSegment: config.PLATFORM_SEGMENT, platformVersion: config.PLATFORM_VERSION };
  const app = createHttpApp({
    logger,
    metrics,
    ready: () => store.ping(),
    routers: [
      gatewayRouter({
        store,
        bus,
        tokens,
        waiter,
        clock,
        logger,
        rateLimiter: config.BOT_RATE_LIMIT_PER_SECOND > 0
          ? new RateLimiter(config.BOT_RATE_LIMIT_PER_SECOND, config.BOT_RATE_LIMIT_BURST ?? Math.ceil(config.BOT_RATE_LIMIT_PER_SECOND))
          : undefined,
        settings: {
          ...platform,
          syncTimeoutMs: config.SYNC_TIMEOUT_SECONDS * 1000,
          maxBodyBytes: config.MAX_BODY_SIZE,
          invocationTtlMs: config.INVOCATION_TTL_HOURS * 3600_000,
        },
      }),
      resultsRouter({ store, tokens, waiter, settings: { ...platform, defaultWaitSeconds: config.POLL_DEFAULT_WAIT_SECONDS } }),
      controlRouter({
        store,
        tokens,
        runtime,
        clock,
        settings: { adminToken, platformSegment: config.PLATFORM_SEGMENT, publicBaseUrl: config.PUBLIC_BASE_URL, maxBodyBytes: config.MAX_ADMIN_BODY_SIZE },
      }),
    ],
  });

  const server = createServer(app.callback());
  // Long polls hold requests for up to 60 s; keep the server's own timeouts above that.
  server.requestTimeout = (config.SYNC_TIMEOUT_SECONDS + 30) * 1000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port, dataDir: config.DATA_DIR, platformVersion: config.PLATFORM_VERSION.join('.'), sandbox: runtime.isolation }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests, finishing running jobs');
    clearInterval(expirySweep);
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    await executor.stop();
    await bus.close();
    server.closeAllConnections();
    await closed;
    await runtime.close();
    await store.close();
    logger.info('stopped');
    logger.flush();
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

function announceGenerated(config: ServiceConfig, file: string, what: string): string {
  const secret = loadOrCreateSecret(config.DATA_DIR, file);
  process.stderr.write(`${secret.created ? 'Generated the' : 'Using the'} ${what} stored in ${secret.path}\n`);
  return secret.value;
}
