import { z } from 'zod';
import { DEFAULT_MAX_JSON_DEPTH, MAX_STORED_ENTITY_BYTES, parsePlatformVersion, parseSecretKey } from '@gi/domain';
import { addressList as addresses } from './address-list';
import { defaultBotMaxWaits, defaultMaxConnections, openFileLimit } from './connection-limits';

/**
 * The service configuration, read once from the environment at start. Every problem is reported at
 * once; nothing else in the code base reads process.env.
 */
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bytes = z
  .string()
  .regex(/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/i, 'a size such as 1048576, 512kb or 1mb')
  .transform(parseBytes);
/** A key of connector secrets: base64 of 32 bytes. */
const secretsKey = z.string().refine(
  (v) => {
    try {
      return parseSecretKey(v).length > 0;
    } catch {
      return false;
    }
  },
  '32 random bytes in base64 (e.g. `openssl rand -base64 32`)',
);

const schema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  ADMIN_TOKEN: z.string().min(24, 'at least 24 characters').optional(),
  TOKEN_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  /**
   * The key connector secrets are encrypted with (AES-256-GCM); unset: secrets cannot be set. During a
   * key rotation SECRETS_KEY_PREVIOUS holds the old key, which still decrypts (docs/operations.md).
   */
  SECRETS_KEY: secretsKey.optional(),
  SECRETS_KEY_PREVIOUS: secretsKey.optional(),
  PLATFORM_SEGMENT: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only').default('Platform'),
  PLATFORM_VERSION: z
    .string()
    .default('9.19')
    .refine((v) => parsePlatformVersion(v) !== null, 'a version such as 9.19'),
  PUBLIC_BASE_URL: z.url().optional(),
  SYNC_TIMEOUT_SECONDS: int(1, 3600).default(300),
  POLL_DEFAULT_WAIT_SECONDS: int(0, 60).default(20),
  // An invocation keeps its request within MAX_STORED_ENTITY_BYTES (4 MiB) in every store: a larger body could never be stored.
  MAX_BODY_SIZE: bytes.refine((n) => n <= MAX_STORED_ENTITY_BYTES, 'at most 4mb (an invocation keeps its request within 4 MiB)').default(1024 ** 2),
  // A deploy carries up to 1 MiB of code and 1 MiB of sources, with room for their JSON escapes.
  MAX_ADMIN_BODY_SIZE: bytes.default(4 * 1024 ** 2),
  // GenericIntegrationFileTransfer (multipart) limits; breaking one answers 413.
  MAX_FILE_SIZE: bytes.default(100 * 1024 ** 2),
  MAX_FILES: int(0, 10_000).default(20),
  MAX_UPLOAD_SIZE: bytes.default(200 * 1024 ** 2),
  // Disk: the bytes of uploaded files one bot may hold, and the free space every upload leaves; past either, 507.
  BOT_STORAGE_QUOTA: bytes.default(1024 ** 3),
  STORAGE_FREE_RESERVE: bytes.default(256 * 1024 ** 2),
  MAX_FORM_FIELDS: int(0, 10_000).default(100),
  MAX_FIELD_SIZE: bytes.default(1024 ** 2),
  // The multipart parser reads part headers of at most 16 KiB, so the limit cannot be set higher.
  MAX_PART_HEADER_SIZE: bytes.refine((n) => n >= 256 && n <= 16 * 1024, 'between 256b and 16kb').default(8 * 1024),
  /** The deepest nesting of arrays and objects in a JSON body (webhook, JSON form field, control API); deeper: 400. */
  MAX_JSON_DEPTH: int(1, 1000).default(DEFAULT_MAX_JSON_DEPTH),
  // Slow clients: the request line and headers, a pause within a body, a whole text body, a whole upload. Over one: 408.
  HEADERS_TIMEOUT_SECONDS: int(1, 600).default(10),
  /** A new connection's time to send its first request (idle, before any byte of it); then it is closed. */
  FIRST_REQUEST_TIMEOUT_SECONDS: int(1, 600).default(5),
  /** Connections a process holds at once; past it a new one is answered 503 and closed. Unset: half the open-file limit. */
  MAX_CONNECTIONS: int(16, 1_000_000).optional(),
  /** Calls of one bot held waiting in a process at once (sync waits, long polls); past it 429. Unset: a quarter of MAX_CONNECTIONS. */
  BOT_MAX_WAITS: int(1, 1_000_000).optional(),
  BODY_IDLE_TIMEOUT_SECONDS: int(1, 600).default(10),
  BODY_TIMEOUT_SECONDS: int(1, 3600).default(60),
  UPLOAD_TIMEOUT_SECONDS: int(1, 24 * 3600).default(1800),
  EXECUTOR_CONCURRENCY: int(1, 1024).default(64),
  /**
   * The most of an executor's EXECUTOR_CONCURRENCY, and of its sandbox threads' runs, one bot's jobs take
   * at once, in percent, rounded up. The rest is always there for the other bots' first jobs.
   */
  EXECUTOR_BOT_SHARE_PERCENT: int(1, 100).default(75),
  /**
   * Processes of `gi up` sharing its port and its store (`--processes` overrides it); unset: the cores
   * available. With more than one, EXECUTOR_CONCURRENCY and SANDBOX_WORKERS are split between them.
   */
  EMBEDDED_PROCESSES: int(1, 256).optional(),
  /** Sandbox worker threads of a process that runs connectors; unset: as many as the cores, at most 4. */
  SANDBOX_WORKERS: int(1, 64).optional(),
  /**
   * How far V8 lets a service process's heap grow past what was live at its last full collection before
   * the next one, in percent (docs/operations.md, Memory). Lower keeps memory down for a little CPU; 0
   * leaves the growth to V8 (up to 4x, by its own speed heuristics).
   */
  HEAP_GROWTH_PERCENT: int(0, 1000).default(100),
  BOT_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).max(1_000_000).default(0),
  BOT_RATE_LIMIT_BURST: int(1, 10_000_000).optional(),
  /**
   * Invocations in flight (Queued or Running) a bot without a quota of its own may have; 0 is no limit.
   * On by default: it bounds what one bot can queue, and its count steers a flood into the bus's
   * backlog lane (docs/security.md, Tenant isolation).
   */
  BOT_MAX_IN_FLIGHT: int(0, 1_000_000).default(10_000),
  INVOCATION_TTL_HOURS: int(1, 24 * 365).default(72),
  /**
   * Durable runs (docs/connectors.md, Durable jobs): a sleep, retry delay or event wait with more than this
   * left frees its executor and sandbox (the run is suspended and resumed from its journal); a shorter one
   * waits in the sandbox. Event waits always suspend.
   */
  SUSPEND_AFTER_SECONDS: int(0, 3600).default(2),
  /** The longest an invocation may live, from its acceptance to its end, sleeps and event waits included. */
  INVOCATION_MAX_LIFETIME_DAYS: int(1, 365).default(30),
  /** One step's result (or one event's payload), as JSON text. */
  STEP_RESULT_MAX_SIZE: bytes.refine((n) => n >= 1024 && n <= 8 * 1024 ** 2, 'between 1kb and 8mb').default(1024 ** 2),
  /** Steps, sleeps and event waits in one invocation's journal. */
  JOURNAL_MAX_STEPS: int(1000, 10_000_000).default(100_000),
  /** All step results, errors and kept events of one invocation's journal together. */
  JOURNAL_MAX_SIZE: bytes.refine((n) => n >= 1024 ** 2, 'at least 1mb').default(256 * 1024 ** 2),
  /** Events kept for an invocation before a wait takes them. */
  JOURNAL_MAX_KEPT_EVENTS: int(1, 100_000).default(1000),
  /** How long an Idempotency-Key holds its request and outcome (never longer than the invocation itself). */
  IDEMPOTENCY_KEY_TTL_SECONDS: int(1, 365 * 24 * 3600).default(24 * 3600),
  STORE_URL: z
    .string()
    .refine(
      (v) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(v) || /^(sqlite|mongodb|mongodb\+srv):\/\//.test(v),
      'a SQLite file (sqlite:///path or a plain path) or a MongoDB URL (mongodb:// or mongodb+srv://)',
    )
    .optional(),
  /**
   * When a SQLite commit is on disk (docs/operations.md): normal (WAL, fsync at checkpoints) survives
   * a process crash and may lose the last commits on a power loss; full fsyncs the WAL at every commit.
   */
  SQLITE_SYNCHRONOUS: z.enum(['normal', 'full'], 'normal or full').default('normal'),
  /**
   * Disk pressure in readiness: a process that writes to local disk (a SQLite store, uploaded files on
   * disk) reports not ready while their file system has less free space than this; 0 turns the check off.
   */
  READY_MIN_FREE_DISK: bytes.default(64 * 1024 ** 2),
  AMQP_URL: z.string().regex(/^amqps?:\/\//, 'an amqp:// or amqps:// URL').optional(),
  BUS_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . -').default('gi'),
  EXECUTOR_POOLS: z.string().regex(/^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$/, 'comma-separated pool names').default('default'),
  LEASE_SECONDS: int(5, 3600).default(30),
  MAX_ATTEMPTS: int(1, 100).default(5),
  SWEEP_INTERVAL_SECONDS: int(1, 3600).default(15),
  REPUBLISH_AFTER_SECONDS: int(5, 24 * 3600).default(60),
  /**
   * On SIGTERM a process that runs connectors lets its runs finish for at most this long; then it hands
   * back those still going (stopped, lease released, job requeued) to run again elsewhere. Keep it below
   * the orchestrator's grace period (Kubernetes: 30 s by default) less a few seconds for the rest of the stop.
   */
  DRAIN_DEADLINE_SECONDS: int(0, 24 * 3600).default(20),
  /**
   * Private or loopback addresses connectors may call although Context.Http refuses such addresses by
   * default (an internal ERP, a local test server). The integration's allowedHosts still apply.
   */
  CONNECTOR_TRUSTED_ADDRESSES: addresses.optional(),
  // Callbacks: attempts per callback, the wait after the first failed one (4 times longer each time, at
  // most an hour), the time a receiver has to connect and then to answer, and private addresses they may
  // reach nevertheless.
  CALLBACK_MAX_ATTEMPTS: int(1, 50).default(8),
  CALLBACK_RETRY_SECONDS: int(1, 3600).default(5),
  CALLBACK_CONNECT_TIMEOUT_SECONDS: int(1, 60).default(3),
  CALLBACK_TIMEOUT_SECONDS: int(1, 120).default(10),
  CALLBACK_TRUSTED_ADDRESSES: addresses.optional(),
  /**
   * Fault injection for recovery tests only, refused unless ALLOW_FAULT_INJECTION=true (see
   * faultInjectionProblem). gateway-exit-after-persist: the gateway kills itself right after storing an
   * invocation. executor-crash-in-run: an executor crashes (an uncaught exception) while handling an
   * invocation whose query has `fault=crash`.
   */
  FAULT_INJECTION: z.enum(['gateway-exit-after-persist', 'executor-crash-in-run']).optional(),
  ALLOW_FAULT_INJECTION: z
    .enum(['true', 'false'], 'true or false')
    .default('false')
    .transform((v) => v === 'true'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The level of the one access line per HTTP request, or off (refusals and server errors are logged anyway). */
  ACCESS_LOG: z.enum(['info', 'debug', 'off']).default('info'),
  /** Label run metrics by bot and integration (tenant data: off unless asked for); at most METRICS_INTEGRATION_LIMIT pairs. */
  METRICS_INTEGRATION_LABELS: z
    .enum(['true', 'false'], 'true or false')
    .default('false')
    .transform((v) => v === 'true'),
  METRICS_INTEGRATION_LIMIT: int(1, 10_000).default(100),
});

export type ServiceConfig = Omit<z.infer<typeof schema>, 'PLATFORM_VERSION' | 'MAX_CONNECTIONS' | 'BOT_MAX_WAITS'> & {
  PLATFORM_VERSION: readonly [number, number];
  MAX_CONNECTIONS: number;
  BOT_MAX_WAITS: number;
};

/** What of the machine the defaults depend on (tests give their own). */
export interface SystemFacts {
  /** The process's limit on open files; null when unknown. */
  openFileLimit: () => number | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment; throws ConfigError listing every problem. Empty values count as unset.
 * MAX_CONNECTIONS and BOT_MAX_WAITS left unset follow the process's limit on open files.
 */
export function parseServiceConfig(env: NodeJS.ProcessEnv, system: SystemFacts = { openFileLimit: () => openFileLimit() }): ServiceConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  if (result.data.SECRETS_KEY_PREVIOUS && !result.data.SECRETS_KEY) {
    throw new ConfigError(['SECRETS_KEY_PREVIOUS: set only during a key rotation, with the new key as SECRETS_KEY']);
  }
  const faultProblem = faultInjectionProblem(result.data);
  if (faultProblem) throw new ConfigError([faultProblem]);
  const version = parsePlatformVersion(result.data.PLATFORM_VERSION);
  const maxConnections = result.data.MAX_CONNECTIONS ?? defaultMaxConnections(system.openFileLimit());
  return {
    ...result.data,
    PLATFORM_VERSION: version as readonly [number, number],
    MAX_CONNECTIONS: maxConnections,
    BOT_MAX_WAITS: result.data.BOT_MAX_WAITS ?? defaultBotMaxWaits(maxConnections),
  };
}

/**
 * The one rule for fault hooks in production code paths: a FAULT_INJECTION the service would act on
 * is refused unless ALLOW_FAULT_INJECTION=true says the process is a test's, so a stray variable in a
 * deployment stops the start instead of killing processes later.
 */
function faultInjectionProblem(config: { FAULT_INJECTION?: string; ALLOW_FAULT_INJECTION: boolean }): string | null {
  if (!config.FAULT_INJECTION || config.ALLOW_FAULT_INJECTION) return null;
  return `FAULT_INJECTION: ${config.FAULT_INJECTION} makes the service kill or crash its own processes, for recovery tests only; unset it (or set ALLOW_FAULT_INJECTION=true in a test)`;
}

/** The MongoDB URL when STORE_URL names one; null means the SQLite store. */
export function mongoUrlOf(config: Pick<ServiceConfig, 'STORE_URL'>): string | null {
  return config.STORE_URL && /^mongodb(\+srv)?:\/\//.test(config.STORE_URL) ? config.STORE_URL : null;
}

/** The SQLite file of the store: STORE_URL (`sqlite:///abs/path` or a path), else DATA_DIR/store.db. */
export function sqlitePathOf(config: Pick<ServiceConfig, 'STORE_URL' | 'DATA_DIR'>): string {
  if (!config.STORE_URL) return `${config.DATA_DIR.replace(/\/$/, '')}/store.db`;
  return config.STORE_URL.startsWith('sqlite://') ? config.STORE_URL.slice('sqlite://'.length) : config.STORE_URL;
}

export function parseBytes(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (!match) throw new Error(`not a size: ${text}`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  return Math.floor(Number(match[1]) * unit);
}
