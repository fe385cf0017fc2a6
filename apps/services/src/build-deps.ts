import { createTokenService, SecretCipher, SecretVault } from '@gi/auth';
import type { TokenService } from '@gi/auth';
import { AmqpJobBus } from '@gi/bus-amqp';
import { loadOrCreateSecret } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import type { ControlDeps } from '@gi/control';
import { CompletionWaiter, parseSecretKey, shareOfCapacity, WaitLimit } from '@gi/domain';
import type { ConnectorRuntime, JournalLimits, QuotaDefaults, WebhookEntity } from '@gi/domain';
import { HttpCallbackSender } from '@gi/egress';
import { CallbackDispatcher, EXPIRY_SWEEP_INTERVAL_MS, quarantineInHand } from '@gi/executor';
import type { DurableSettings, ExecutorDeps, SweeperSettings } from '@gi/executor';
import { QuotaGate, StorageGuard, UnpublishedJobs } from '@gi/gateway';
import { tracedJobBus, tracingEnabled } from '@gi/observability';
import type { GatewayDeps, UploadLimits } from '@gi/gateway';
import type { ResultsDeps } from '@gi/results';
import { createQuickJsRuntime, DiffThread } from '@gi/sandbox';
import type { ServiceBase, ServiceProcessBase } from './open-store';
import { bodyTimeouts, serverTimeouts, uploadTimeouts } from './serve-http';

// The second step of every service (after open-store.ts): the parts its routers and workers are given,
// built from the configuration and the store. The third, serving them over HTTP, is serve-http.ts.

/** The token service; the signing secret comes from TOKEN_SECRET or the data directory. */
export function openTokenService(base: ServiceBase): TokenService {
  const secret = base.config.TOKEN_SECRET ?? loadOrCreateSecret(base.config.DATA_DIR, 'token-secret').value;
  return createTokenService({ secret, tokens: base.store.tokens, clock: base.clock });
}

/**
 * Connector secrets, sealed with SECRETS_KEY (SECRETS_KEY_PREVIOUS still opens values during a key
 * rotation). Without a key, writes are refused (docs/decisions.md): the key is never kept beside the data.
 */
export function secretVault(base: ServiceBase): SecretVault {
  let vault = vaults.get(base);
  if (!vault) {
    const { SECRETS_KEY, SECRETS_KEY_PREVIOUS } = base.config;
    const cipher = SECRETS_KEY ? new SecretCipher(parseSecretKey(SECRETS_KEY), SECRETS_KEY_PREVIOUS ? parseSecretKey(SECRETS_KEY_PREVIOUS) : null) : null;
    vault = new SecretVault(base.store.secrets, cipher, base.store.catalog);
    vaults.set(base, vault);
  }
  return vault;
}

/** One vault per process: a change the admin API makes reaches the runs of the same process at once. */
const vaults = new WeakMap<ServiceBase, SecretVault>();

/**
 * At the start of a process serving the admin API, with a key configured: seals what is not sealed under
 * it yet (callback signing secrets stored in clear before SECRETS_KEY was set, values of the previous key
 * after a rotation). In the background; a failure is logged, and `gi secrets reseal` does it again.
 */
export function sealStoredSecrets(base: ServiceBase): void {
  const vault = secretVault(base);
  if (!vault.configured) return;
  vault.resealAll(base.clock.now()).then(
    (report) => {
      if (report.resealed > 0 || report.unreadable > 0) base.logger.info(report, 'stored secrets sealed under SECRETS_KEY');
      if (report.unreadable > 0) base.logger.warn({ unreadable: report.unreadable }, 'some stored secrets open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS');
    },
    (err) => base.logger.warn({ err }, 'stored secrets could not be sealed at start; run gi secrets reseal'),
  );
}

/** The RabbitMQ bus of the distributed services (AMQP_URL is required there). */
export async function openAmqpBus(base: ServiceBase, role: string, pools: string[] = []): Promise<AmqpJobBus> {
  const { config, logger } = base;
  if (!config.AMQP_URL) throw new Error(`AMQP_URL is required to run the ${role} service (e.g. amqp://guest:guest@127.0.0.1:5672).`);
  const bus = await AmqpJobBus.connect({
    url: config.AMQP_URL,
    prefix: config.BUS_PREFIX,
    pools,
    maxDeliveries: config.MAX_ATTEMPTS + 1,
    connectionName: `gi-${role}-${process.pid}`,
    logger,
    onMalformed: () => base.metrics.deadLetters.inc({ reason: 'malformed' }),
  });
  return tracingEnabled() ? tracedJobBus(bus, 'rabbitmq') : bus;
}

/** A completion waiter fed by the bus's completion events, routed here for the invocations it waits for. */
export async function completionWaiter(bus: JobBus): Promise<CompletionWaiter<CompletionEvent>> {
  const waiter = new CompletionWaiter<CompletionEvent>((invocationId, options) => bus.watchCompletion(invocationId, options));
  await bus.onCompletion((event) => waiter.notify(event));
  return waiter;
}

/**
 * The Custom Code runtime of a service that runs connectors; its load is read at each scrape.
 * `defaultWorkers`: the threads when SANDBOX_WORKERS is unset (the runtime's own default otherwise).
 */
export async function openConnectorRuntime(base: ServiceBase, defaultWorkers?: number) {
  const { SANDBOX_WORKERS, CONNECTOR_TRUSTED_ADDRESSES, EXECUTOR_BOT_SHARE_PERCENT } = base.config;
  const runtime = await createQuickJsRuntime({
    workers: SANDBOX_WORKERS ?? defaultWorkers,
    tenantSharePercent: EXECUTOR_BOT_SHARE_PERCENT,
    http: { trustedAddresses: CONNECTOR_TRUSTED_ADDRESSES ?? [] },
  });
  base.metrics.sources.sandbox = () => runtime.load();
  return runtime;
}

/**
 * The runtime of the control API in a process that also runs live calls (embedded): compile checks
 * and replays on a sandbox thread of their own, so a replay never waits for a live call's thread nor
 * holds one. Its load is not the live runtime's (gi_sandbox_* metrics).
 */
export function openReplayRuntime(base: ServiceBase) {
  return createQuickJsRuntime({ workers: REPLAY_SANDBOX_WORKERS, http: { trustedAddresses: base.config.CONNECTOR_TRUSTED_ADDRESSES ?? [] } });
}

/** Sandbox threads of the control API's replays in an embedded process (the control service alone has one, too). */
const REPLAY_SANDBOX_WORKERS = 1;

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
    maxJsonDepth: config.MAX_JSON_DEPTH,
  };
}

/**
 * The waits each bot may hold in this process (BOT_MAX_WAITS): one count for the sync calls and the long
 * polls of the process, whichever routes serve them.
 */
export function waitLimit(base: ServiceBase): WaitLimit {
  let limit = waitLimits.get(base);
  if (!limit) {
    limit = new WaitLimit(base.config.BOT_MAX_WAITS, () => base.metrics.quotaRefusals.inc({ scope: 'bot', quota: 'maxWaits' }));
    waitLimits.set(base, limit);
  }
  return limit;
}

const waitLimits = new WeakMap<ServiceBase, WaitLimit>();

export function gatewayDeps(
  base: ServiceBase,
  bus: JobBus,
  tokens: TokenService,
  waiter: CompletionWaiter<CompletionEvent>,
  quotas: QuotaGate,
  unpublished?: UnpublishedJobs,
): GatewayDeps {
  const { config } = base;
  return {
    store: base.store,
    bus,
    tokens,
    waiter,
    clock: base.clock,
    logger: base.logger,
    uploads: {
      files: base.files,
      limits: uploadLimits(config),
      timeouts: uploadTimeouts(config),
      storage: new StorageGuard(base.files, { botQuotaBytes: config.BOT_STORAGE_QUOTA, freeReserveBytes: config.STORAGE_FREE_RESERVE }),
    },
    quotas,
    unpublished,
    secrets: secretVault(base),
    waits: waitLimit(base),
    afterPersist: config.FAULT_INJECTION === 'gateway-exit-after-persist' ? () => process.kill(process.pid, 'SIGKILL') : undefined,
    settings: {
      platformSegment: config.PLATFORM_SEGMENT,
      platformVersion: config.PLATFORM_VERSION,
      syncTimeoutMs: config.SYNC_TIMEOUT_SECONDS * 1000,
      maxBodyBytes: config.MAX_BODY_SIZE,
      bodyTimeouts: bodyTimeouts(config),
      maxJsonDepth: config.MAX_JSON_DEPTH,
      invocationTtlMs: config.INVOCATION_TTL_HOURS * 3600_000,
      idempotencyKeyTtlMs: config.IDEMPOTENCY_KEY_TTL_SECONDS * 1000,
      journalLimits: journalLimits(config),
      publicBaseUrl: config.PUBLIC_BASE_URL,
    },
  };
}

export function resultsDeps(base: ServiceBase, bus: JobBus, tokens: TokenService, waiter: CompletionWaiter<CompletionEvent>): ResultsDeps {
  const { config } = base;
  return {
    store: base.store,
    tokens,
    waiter,
    bus,
    clock: base.clock,
    waits: waitLimit(base),
    settings: { platformSegment: config.PLATFORM_SEGMENT, platformVersion: config.PLATFORM_VERSION, defaultWaitSeconds: config.POLL_DEFAULT_WAIT_SECONDS },
  };
}

export function controlDeps(base: ServiceBase, tokens: TokenService, runtime: Pick<ConnectorRuntime, 'compile' | 'run'>, bus: JobBus, adminToken: string): ControlDeps {
  const { config } = base;
  const diffs = new DiffThread();
  return {
    diffVersions: (from, to) => diffs.diffJson(from, to),
    store: base.store,
    tokens,
    secrets: secretVault(base),
    runtime,
    files: base.files,
    log: base.logger,
    bus,
    clock: base.clock,
    settings: {
      adminToken,
      platformSegment: config.PLATFORM_SEGMENT,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      maxBodyBytes: config.MAX_ADMIN_BODY_SIZE,
      bodyTimeouts: bodyTimeouts(config),
      maxJsonDepth: config.MAX_JSON_DEPTH,
      quotaDefaults: quotaDefaults(config),
    },
  };
}

/** How many jobs an executor of this process runs at once, and of them at most how many of one bot's. */
export function executorCapacity(config: ServiceConfig): { concurrency: number; perBot: number } {
  const concurrency = config.EXECUTOR_CONCURRENCY;
  return { concurrency, perBot: shareOfCapacity(concurrency, config.EXECUTOR_BOT_SHARE_PERCENT) };
}

/** What an executor pool of this process is given; `ownerId` names it as a lease owner. */
export function executorDeps(
  base: ServiceBase,
  parts: { bus: JobBus; runtime: ConnectorRuntime; callbacks: CallbackDispatcher; ownerId: string },
): Omit<ExecutorDeps, 'versions'> {
  const { config } = base;
  return {
    store: base.store,
    clock: base.clock,
    logger: base.logger,
    metrics: base.metrics,
    files: base.files,
    secrets: secretVault(base),
    leaseMs: config.LEASE_SECONDS * 1000,
    maxAttempts: config.MAX_ATTEMPTS,
    durable: durableSettings(config),
    ...parts,
    ...executorFaults(config),
  };
}

/** How durable runs behave (the settings of docs/operations.md, *Durable jobs*). */
export function durableSettings(config: ServiceConfig): DurableSettings {
  return {
    suspendAfterMs: config.SUSPEND_AFTER_SECONDS * 1000,
    maxLifetimeMs: config.INVOCATION_MAX_LIFETIME_DAYS * 86_400_000,
    invocationTtlMs: config.INVOCATION_TTL_HOURS * 3_600_000,
    limits: journalLimits(config),
  };
}

/** The limits of one invocation's journal, for the executors that write it and the gateways that send it events. */
export const journalLimits = (config: ServiceConfig): JournalLimits => ({
  maxSteps: config.JOURNAL_MAX_STEPS,
  maxResultBytes: config.STEP_RESULT_MAX_SIZE,
  maxJournalBytes: config.JOURNAL_MAX_SIZE,
  maxKeptEvents: config.JOURNAL_MAX_KEPT_EVENTS,
});

/**
 * The sender of callbacks of a process that runs executors. Its deliveries are claimed for twice the time
 * one POST may take (connecting, then the answer), so a sender that dies mid-attempt leaves it to another
 * soon after.
 */
export function callbackDispatcher(base: ServiceBase): CallbackDispatcher {
  const { config } = base;
  const timeoutMs = config.CALLBACK_TIMEOUT_SECONDS * 1000;
  const connectTimeoutMs = config.CALLBACK_CONNECT_TIMEOUT_SECONDS * 1000;
  return new CallbackDispatcher({
    store: base.store,
    sender: new HttpCallbackSender({ trustedAddresses: config.CALLBACK_TRUSTED_ADDRESSES ?? [], timeoutMs, connectTimeoutMs }),
    clock: base.clock,
    logger: base.logger,
    metrics: base.metrics,
    secrets: secretVault(base),
    settings: { maxAttempts: config.CALLBACK_MAX_ATTEMPTS, retryBaseMs: config.CALLBACK_RETRY_SECONDS * 1000, leaseMs: 2 * (connectTimeoutMs + timeoutMs) + 5_000 },
  });
}

/**
 * Files are swept once older than the longest an upload can take (the server's request timeout) plus
 * this margin, for clocks of different hosts that disagree: an upload still running is never touched.
 */
const FILE_SWEEP_MARGIN_MS = 60 * 60_000;

/**
 * The sweeper of a process that runs executors: the only one of its store (a single embedded process
 * recovers everything at start, then never), or one of many (sweeps in rounds; the first embedded
 * process of several also recovers what the previous run left).
 */
export function sweeperSettings(config: ServiceConfig, recovery: Pick<SweeperSettings, 'recoverAllAtStart' | 'recoverInRounds'>, pools: string[]): SweeperSettings {
  return {
    ...recovery,
    intervalMs: config.SWEEP_INTERVAL_SECONDS * 1000,
    republishAfterMs: config.REPUBLISH_AFTER_SECONDS * 1000,
    pools,
    expiryIntervalMs: EXPIRY_SWEEP_INTERVAL_MS,
    fileGraceMs: serverTimeouts(config).requestMs + FILE_SWEEP_MARGIN_MS,
  };
}

/**
 * What a process that runs executors does on a fatal error: the invocation whose handling threw it is
 * quarantined (recorded as Failed), so a restart does not run it, and crash, again.
 */
export function quarantineOnCrash(base: ServiceProcessBase): void {
  base.lifecycle.onFatal(async () => {
    const quarantined = quarantineInHand(base);
    if (!quarantined) return;
    const { ref, recorded } = quarantined;
    base.logger.fatal({ invocationId: ref.id, botId: ref.botId }, 'quarantined: its run crashed the executor');
    if (!(await recorded)) base.logger.error({ invocationId: ref.id, botId: ref.botId }, 'the quarantine could not be recorded; the invocation may run again');
  });
}

/** Fault injection for recovery tests only (FAULT_INJECTION=executor-crash-in-run): see ServiceConfig. */
function executorFaults(config: ServiceConfig): Pick<ExecutorDeps, 'beforeRun'> {
  if (config.FAULT_INJECTION !== 'executor-crash-in-run') return {};
  return {
    beforeRun: (invocation) => {
      if (new URLSearchParams((JSON.parse(invocation.entityJson) as WebhookEntity).RequestParams).get('fault') !== 'crash') return;
      setImmediate(() => {
        throw new Error('Injected fault: the executor crashes while handling this invocation.');
      });
    },
  };
}

/**
 * The jobs a gateway on RabbitMQ could not publish, published again as soon as its connection is back
 * (jobs kept longer than REPUBLISH_AFTER_SECONDS are left to the sweepers, which would publish them then).
 */
export function unpublishedJobs(base: ServiceBase, bus: AmqpJobBus): UnpublishedJobs {
  const unpublished = new UnpublishedJobs({ bus, clock: base.clock, logger: base.logger, maxAgeMs: base.config.REPUBLISH_AFTER_SECONDS * 1000 });
  bus.onReconnected(() => void unpublished.republish());
  return unpublished;
}

/** What the gateway and results services share: the store, the bus, tokens and a completion waiter. */
export async function openPublicApi(base: ServiceProcessBase, name: 'gateway' | 'results') {
  const bus = await openAmqpBus(base, name);
  const tokens = openTokenService(base);
  const waiter = await completionWaiter(bus);
  return { bus, tokens, waiter };
}
