import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type Koa from 'koa';
import { createTokenService } from '@gi/auth';
import type { TokenService } from '@gi/auth';
import type { ControlDeps } from '@gi/control';
import { AmqpJobBus } from '@gi/bus-amqp';
import { loadOrCreateSecret, mongoUrlOf, parseServiceConfig, processEnvironment, sqlitePathOf } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import { CompletionWaiter, systemClock } from '@gi/domain';
import type { Clock, ConnectorRuntime, FileStore, JobBus, QuotaDefaults, Store } from '@gi/domain';
import { CallbackDispatcher, sweepFiles } from '@gi/executor';
import { HttpCallbackSender } from '@gi/egress';
import { DiskFileStore } from '@gi/files-disk';
import { createGridFsFileStore } from '@gi/files-gridfs';
import { QuotaGate } from '@gi/gateway';
import type { GatewayDeps, UploadLimits } from '@gi/gateway';
import { createLogger, createMetrics } from '@gi/http';
import type { Logger, Metrics } from '@gi/http';
import type { ResultsDeps } from '@gi/results';
import { createMongoStore } from '@gi/store-mongo';
import { createQuickJsRuntime } from '@gi/sandbox';
import { createSqliteStore } from '@gi/store-sqlite';

/** What every service process has: its configuration, logger, metrics, clock and store. */
export interface ServiceBase {
  config: ServiceConfig;
  logger: Logger;
  metrics: Metrics;
  clock: Clock;
  store: Store;
  /** Uploaded files: in GridFS beside a MongoDB store, else under DATA_DIR/files (one host). */
  files: FileStore;
}

/**
 * `claimsWhatItCreates`: the process runs the invocations it accepts (embedded), so a SQLite store
 * keeps what it created for the claim that follows.
 */
export async function openServiceBase(name: string, { claimsWhatItCreates = false } = {}): Promise<ServiceBase> {
  const config = parseServiceConfig(processEnvironment());
  const clock = systemClock;
  // STORE_URL picks the store: a mongodb:// URL is MongoDB, anything else a SQLite file.
  const mongoUrl = mongoUrlOf(config);
  const { store, files } = mongoUrl ? await openMongo(mongoUrl, clock, name) : openSqlite(config, clock, claimsWhatItCreates);
  return { config, logger: createLogger(config.LOG_LEVEL, name), metrics: createMetrics(), clock, store, files };
}

/** MongoDB keeps the files too (GridFS, same connection), so services on any host share them with no volume. */
async function openMongo(url: string, clock: Clock, name: string): Promise<{ store: Store; files: FileStore }> {
  const store = await createMongoStore(url, { clock, appName: `gi-${name}` });
  try {
    return { store, files: await createGridFsFileStore(store.database) };
  } catch (error) {
    await store.close();
    throw new Error(`Cannot open the GridFS file store: ${(error as Error).message}`, { cause: error });
  }
}

/** SQLite: the files on local disk beside it, shared by the processes of one host. */
function openSqlite(config: ServiceConfig, clock: Clock, claimsWhatItCreates: boolean): { store: Store; files: FileStore } {
  return { store: createSqliteStore(sqlitePathOf(config), clock, { claimsWhatItCreates }), files: new DiskFileStore(join(config.DATA_DIR, 'files')) };
}

/** The GenericIntegrationFileTransfer limits; all form fields together are held to MAX_BODY_SIZE like a text body. */
export function uploadLimits(config: ServiceConfig): UploadLimits {
  return {
    maxFileBytes: config.MAX_FILE_SIZE,
    maxFiles: config.MAX_FILES,
    maxUploadBytes: config.MAX_UPLOAD_SIZE,
    maxFields: config.MAX_FORM_FIELDS,
    maxFieldBytes: config.MAX_FIELD_SIZE,
    maxFieldsTotalBytes: config.MAX_BODY_SIZE,
    maxPartHeaderBytes: config.MAX_PART_HEADER_SIZE,
  };
}

/** How often expired invocations and their files are swept: what it frees is hours old. */
export const EXPIRY_SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Files are swept once older than the longest an upload can take (the server's request timeout) plus
 * this margin, for clocks of different hosts that disagree: an upload still running is never touched.
 */
const FILE_SWEEP_MARGIN_MS = 60 * 60_000;

/** Sync calls wait up to SYNC_TIMEOUT_SECONDS and long polls up to 60 s: the server's limits stay above both. */
export function requestTimeoutMs(config: Pick<ServiceConfig, 'SYNC_TIMEOUT_SECONDS'>): number {
  return (Math.max(config.SYNC_TIMEOUT_SECONDS, 60) + 30) * 1000;
}

/**
 * Deletes expired invocations (MongoDB's TTL monitor does too, about once a minute), then the files of
 * expired, deleted and never-stored invocations, and the leftovers of uploads a crash cut short.
 */
export async function sweepExpired(base: ServiceBase): Promise<void> {
  const now = base.clock.now();
  const invocations = await base.store.invocations.deleteExpired(now);
  const before = now - requestTimeoutMs(base.config) - FILE_SWEEP_MARGIN_MS;
  const files = await sweepFiles({ files: base.files, invocations: base.store.invocations }, before);
  if (invocations + files.owners + files.abandoned > 0) base.logger.info({ invocations, ...files }, 'deleted expired invocations and their files');
}

/** The Custom Code runtime of a service that runs connectors. */
export function openConnectorRuntime(base: ServiceBase) {
  const { SANDBOX_WORKERS, CONNECTOR_TRUSTED_ADDRESSES } = base.config;
  return createQuickJsRuntime({ workers: SANDBOX_WORKERS, http: { trustedAddresses: CONNECTOR_TRUSTED_ADDRESSES ?? [] } });
}

/**
 * The sender of callbacks of a process that runs executors. Its deliveries are claimed for twice the time
 * one POST may take, so a sender that dies mid-attempt leaves it to another soon after.
 */
export function callbackDispatcher(base: ServiceBase): CallbackDispatcher {
  const { config } = base;
  const timeoutMs = config.CALLBACK_TIMEOUT_SECONDS * 1000;
  return new CallbackDispatcher({
    store: base.store,
    sender: new HttpCallbackSender({ trustedAddresses: config.CALLBACK_TRUSTED_ADDRESSES ?? [], timeoutMs }),
    clock: base.clock,
    logger: base.logger,
    metrics: base.metrics,
    settings: { maxAttempts: config.CALLBACK_MAX_ATTEMPTS, retryBaseMs: config.CALLBACK_RETRY_SECONDS * 1000, leaseMs: 2 * timeoutMs + 5_000 },
  });
}

/** The token service; the signing secret comes from TOKEN_SECRET or the data directory. */
export function openTokenService(base: ServiceBase): TokenService {
  const secret = base.config.TOKEN_SECRET ?? loadOrCreateSecret(base.config.DATA_DIR, 'token-secret').value;
  return createTokenService({ secret, tokens: base.store.tokens, clock: base.clock });
}

/** The RabbitMQ bus of the distributed services (AMQP_URL is required there). */
export async function openAmqpBus(base: ServiceBase, role: string, pools: string[] = []): Promise<AmqpJobBus> {
  const { config, logger } = base;
  if (!config.AMQP_URL) throw new Error(`AMQP_URL is required to run the ${role} service (e.g. amqp://guest:guest@127.0.0.1:5672).`);
  return AmqpJobBus.connect({
    url: config.AMQP_URL,
    prefix: config.BUS_PREFIX,
    pools,
    maxDeliveries: config.MAX_ATTEMPTS + 1,
    connectionName: `gi-${role}-${process.pid}`,
    logger,
  });
}

/** What the gateway and results services share: the store, the bus, tokens and a completion waiter. */
export async function openPublicApi(name: 'gateway' | 'results') {
  const base = await openServiceBase(name);
  const bus = await openAmqpBus(base, name);
  const tokens = openTokenService(base);
  const waiter = await completionWaiter(bus);
  const ready = async () => (await base.store.ping()) && (await bus.ping());
  return { base, bus, tokens, waiter, ready };
}

/** Shutdown of a service with waiting requests: no new connections, every wait ends with what the store holds. */
export async function drain(server: Server, waiter: CompletionWaiter): Promise<void> {
  const stopped = stopListening(server);
  waiter.releaseAll();
  await stopped;
}

/** A completion waiter fed by the bus's completion events. */
export async function completionWaiter(bus: JobBus): Promise<CompletionWaiter> {
  const waiter = new CompletionWaiter();
  await bus.onCompletion((event) => waiter.notify(event));
  return waiter;
}

/** The quotas of a bot that has none of its own. */
export function quotaDefaults(config: ServiceConfig): QuotaDefaults {
  return { ratePerSecond: config.BOT_RATE_LIMIT_PER_SECOND, burst: config.BOT_RATE_LIMIT_BURST ?? null, maxInFlight: config.BOT_MAX_IN_FLIGHT };
}

/**
 * The quotas of the webhook endpoints. `peers` tells how many gateways share them (1 in the embedded
 * deployment); the service defaults come from the environment.
 */
export function quotaGate(base: ServiceBase, peers: () => number): QuotaGate {
  const { config, metrics } = base;
  return new QuotaGate({
    catalog: base.store.catalog,
    invocations: base.store.invocations,
    clock: base.clock,
    defaults: quotaDefaults(config),
    peers,
    onRefused: (scope, quota) => metrics.quotaRefusals.inc({ scope, quota }),
  });
}

export function gatewayDeps(base: ServiceBase, bus: JobBus, tokens: TokenService, waiter: CompletionWaiter, quotas: QuotaGate): GatewayDeps {
  const { config } = base;
  return {
    store: base.store,
    bus,
    tokens,
    waiter,
    clock: base.clock,
    logger: base.logger,
    uploads: { files: base.files, limits: uploadLimits(config) },
    quotas,
    afterPersist: config.FAULT_INJECTION === 'gateway-exit-after-persist' ? () => process.kill(process.pid, 'SIGKILL') : undefined,
    settings: {
      platformSegment: config.PLATFORM_SEGMENT,
      platformVersion: config.PLATFORM_VERSION,
      syncTimeoutMs: config.SYNC_TIMEOUT_SECONDS * 1000,
      maxBodyBytes: config.MAX_BODY_SIZE,
      invocationTtlMs: config.INVOCATION_TTL_HOURS * 3600_000,
      idempotencyKeyTtlMs: config.IDEMPOTENCY_KEY_TTL_SECONDS * 1000,
    },
  };
}

export function resultsDeps(base: ServiceBase, bus: JobBus, tokens: TokenService, waiter: CompletionWaiter): ResultsDeps {
  const { config } = base;
  return {
    store: base.store,
    tokens,
    waiter,
    bus,
    clock: base.clock,
    settings: { platformSegment: config.PLATFORM_SEGMENT, platformVersion: config.PLATFORM_VERSION, defaultWaitSeconds: config.POLL_DEFAULT_WAIT_SECONDS },
  };
}

export function controlDeps(base: ServiceBase, tokens: TokenService, runtime: Pick<ConnectorRuntime, 'compile'>, bus: JobBus, adminToken: string): ControlDeps {
  const { config } = base;
  return {
    store: base.store,
    tokens,
    runtime,
    bus,
    clock: base.clock,
    settings: {
      adminToken,
      platformSegment: config.PLATFORM_SEGMENT,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      maxBodyBytes: config.MAX_ADMIN_BODY_SIZE,
      quotaDefaults: quotaDefaults(config),
    },
  };
}

/** Listens on PORT/HOST and logs `listening` with the actual port (PORT=0 picks a free one). */
export async function listen(app: Koa, base: ServiceBase, fields: Record<string, unknown> = {}): Promise<Server> {
  const { config, logger } = base;
  const server = createServer(app.callback());
  server.requestTimeout = requestTimeoutMs(config);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port, platformVersion: config.PLATFORM_VERSION.join('.'), ...fields }, 'listening');
  return server;
}

/**
 * Stops taking new connections and resolves once open requests have finished: keep-alive connections are
 * closed as soon as they go idle, and any still open after `graceMs` are cut.
 */
export function stopListening(server: Server, graceMs = 70_000): Promise<void> {
  return new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Runs `steps` in order on the first SIGTERM or SIGINT: stop taking work, finish or hand back what is
 * in flight, then close connections.
 */
export function onShutdown(logger: Logger, steps: Array<() => Promise<unknown> | unknown>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        logger.error({ err }, 'shutdown step failed');
      }
    }
    logger.info('stopped');
    logger.flush();
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
