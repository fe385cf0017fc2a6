import { join } from 'node:path';
import { embeddedSecretsKey, mongoUrlOf, parseServiceConfig, processEnvironment, RELEASE_VERSION, sqlitePathOf } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import { systemClock } from '@gi/domain';
import type { Clock, FileStore, Store } from '@gi/domain';
import { DiskFileStore } from '@gi/files-disk';
import { createLogger, createMetrics, startTracing, tracedStore } from '@gi/observability';
import type { Logger, Metrics } from '@gi/observability';
import { createSqliteStore } from '@gi/store-sqlite';
import { loggableSettings } from './loggable-settings';
import { ServiceLifecycle } from './service-lifecycle';
import { timedStore } from './timed-store';

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

/** A service process being started: its base, and how it ends (shutdown on SIGTERM/SIGINT, fatal errors). */
export interface ServiceProcessBase extends ServiceBase {
  lifecycle: ServiceLifecycle;
}

/**
 * The first step of every service: reads the configuration, then opens the store and the file store.
 * `embedded`: the process runs the invocations it accepts, so a SQLite store keeps what it created for
 * the claim that follows; and without SECRETS_KEY it uses (first generates) the key in the user's
 * configuration directory, saying where in its log. The distributed services never generate one.
 */
export async function openServiceBase(name: string, { embedded = false } = {}): Promise<ServiceProcessBase> {
  const parsed = parseServiceConfig(processEnvironment());
  const logger = createLogger(parsed.LOG_LEVEL, name);
  const config = embedded ? withEmbeddedSecretsKey(parsed, logger) : parsed;
  const claimsWhatItCreates = embedded;
  logger.info({ version: RELEASE_VERSION, settings: loggableSettings(config) }, 'starting');
  // Before anything is opened: from now on a signal shuts the service down in order.
  const lifecycle = new ServiceLifecycle(logger, { version: RELEASE_VERSION });
  // Before the store and the bus are opened, which it traces (OTEL_* variables; off when none is set).
  const tracing = await startTracing(processEnvironment(), serviceNameOf(name), logger);
  lifecycle.atLast(() => tracing.shutdown());
  lifecycle.onFatal(() => tracing.shutdown());
  const clock = systemClock;
  const metrics = createMetrics({
    version: RELEASE_VERSION,
    integrationLabels: { enabled: config.METRICS_INTEGRATION_LABELS, limit: config.METRICS_INTEGRATION_LIMIT },
  });
  // STORE_URL picks the store: a mongodb:// URL is MongoDB, anything else a SQLite file.
  const mongoUrl = mongoUrlOf(config);
  const opened = mongoUrl ? await openMongo(mongoUrl, clock, name) : openSqlite(config, clock, claimsWhatItCreates);
  const traced = tracing.enabled ? tracedStore(opened.store, mongoUrl ? 'mongodb' : 'sqlite') : opened.store;
  return { config, logger, metrics, clock, store: timedStore(traced, metrics.storeDuration), files: opened.files, lifecycle };
}

/** The configuration with the embedded deployment's SECRETS_KEY: the configured one, else the generated one, whose file is named in the log. */
export function withEmbeddedSecretsKey(config: ServiceConfig, logger: Logger): ServiceConfig {
  const key = embeddedSecretsKey(config, processEnvironment());
  if (key.path !== null) {
    logger.info({ path: key.path }, key.created ? 'generated SECRETS_KEY (no SECRETS_KEY was set); back this file up apart from DATA_DIR' : 'using the SECRETS_KEY generated before');
  }
  return { ...config, SECRETS_KEY: key.value };
}

/** The OpenTelemetry service name of a process (unless OTEL_SERVICE_NAME names one): gi-gateway, gi-executor, ... */
function serviceNameOf(name: string): string {
  return name.startsWith('gi-') || name === 'generic-integration' ? name : `gi-${name}`;
}

/**
 * MongoDB keeps the files too (GridFS, same connection), so services on any host share them with no volume.
 * The driver is loaded only then: it costs a SQLite deployment about 20 MB and a quarter of a second at start.
 */
async function openMongo(url: string, clock: Clock, name: string): Promise<{ store: Store; files: FileStore }> {
  const [{ createMongoStore }, { createGridFsFileStore }] = await Promise.all([import('@gi/store-mongo'), import('@gi/files-gridfs')]);
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
  return { store: createSqliteStore(sqlitePathOf(config), clock, { claimsWhatItCreates, synchronous: config.SQLITE_SYNCHRONOUS }), files: new DiskFileStore(join(config.DATA_DIR, 'files')) };
}
