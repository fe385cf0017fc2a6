import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import type { Server } from 'node:http';
import { loadOrCreateSecret, mongoUrlOf, parseServiceConfig, processEnvironment, RELEASE_VERSION, sqlitePathOf } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import { systemClock } from '@gi/domain';
import { createLogger, lendMetricsToPrimary } from '@gi/observability';
import type { Logger } from '@gi/observability';
import type { JobBus } from '@gi/contracts';
import { takeOverFrom } from '@gi/executor';
import { createSqliteStore } from '@gi/store-sqlite';
import { announceGenerated } from './announce-secret';
import { answerMetricsRequests, metricsFromPrimary } from './cluster-metrics';
import type { MetricsChannel } from './cluster-metrics';
import { isRelayNotice, relayNotices } from './completion-relay';
import type { EmbeddedRole } from './embedded.service';
import { processShare } from './embedded-shares';
import { withEmbeddedSecretsKey } from './open-store';
import type { ServiceProcessBase } from './open-store';

/** Tells a forked process its place: its index, and whether it recovers what a previous run left. */
const PROCESS_INDEX_ENV = 'GI_EMBEDDED_PROCESS';
const RECOVER_ENV = 'GI_EMBEDDED_RECOVER';
/** A process that ends this soon after it started is replaced only after a pause (no tight crash loop). */
const EARLY_EXIT_MS = 5_000;
const RESTART_PAUSE_MS = 1_000;

/** What a process of the cluster sends once it listens: the primary logs one `listening` for all. */
export interface ListeningNotice {
  kind: 'gi:listening';
  port: number;
  fields: Record<string, unknown>;
}

export function listeningNotice(server: Server, fields: Record<string, unknown>): ListeningNotice {
  const address = server.address();
  return { kind: 'gi:listening', port: typeof address === 'object' && address ? address.port : 0, fields };
}

/** What the primary sends a live process when another ended: take over the jobs that one was running. */
export interface TakeOverNotice {
  kind: 'gi:take-over';
  owner: string;
}

export const isTakeOverNotice = (message: unknown): message is TakeOverNotice =>
  typeof message === 'object' && message !== null && (message as TakeOverNotice).kind === 'gi:take-over' && typeof (message as TakeOverNotice).owner === 'string';

const isListeningNotice = (message: unknown): message is ListeningNotice => typeof message === 'object' && message !== null && (message as ListeningNotice).kind === 'gi:listening';

/**
 * A forked process that listens joins its cluster: it takes over the jobs of a process that ended when
 * the primary asks, tells the primary it listens, and lets go of the IPC channel once stopped (the
 * channel would hold the process up).
 */
export function joinCluster(base: ServiceProcessBase, { bus, ownerId, server, fields }: { bus: Pick<JobBus, 'publish'>; ownerId: string; server: Server; fields: Record<string, unknown> }): void {
  const { store, clock, logger, metrics } = base;
  // A scrape reaches whichever process gets the connection: each answers for all of them.
  lendMetricsToPrimary(metrics.registry);
  metrics.exposition = metricsFromPrimary(process as MetricsChannel);
  process.on('message', (message) => {
    if (!isTakeOverNotice(message)) return;
    takeOverFrom({ store, bus, clock }, message.owner).then(
      (taken) => taken.released > 0 && logger.info({ ...taken, from: message.owner }, 'took over the jobs of an ended process'),
      (err) => logger.warn({ err, from: message.owner }, 'could not take over the jobs of an ended process; the sweep will once their leases end'),
    );
  });
  process.send?.(listeningNotice(server, { ...fields, ownerId }));
  base.lifecycle.atLast(() => cluster.worker?.disconnect());
}

/** The role of a process the primary forked, from the environment it was given. */
export function embeddedWorkerRole(env: NodeJS.ProcessEnv): EmbeddedRole {
  return { kind: 'worker', index: Number(env[PROCESS_INDEX_ENV] ?? 0), recoverAtStart: env[RECOVER_ENV] === '1' };
}

/**
 * The primary of an embedded deployment of several processes (node:cluster, docs/decisions.md): it
 * prepares what must be made once (the schema, the generated secrets), then starts `processes` embedded
 * processes that share the port (connections handed out in turn) and the store. The first recovers what
 * a previous run left before the others start, so none of them can be running it. The primary relays
 * completion notices between them, gathers the metrics of all for the one a scrape reached, replaces a process that dies and has a live one take over the jobs
 * it was running (its queued ones are swept back later), logs one `listening`, and on SIGTERM/SIGINT
 * stops them all gracefully.
 */
export async function runEmbeddedCluster(processes: number): Promise<void> {
  const config = parseServiceConfig(processEnvironment());
  const logger = createLogger(config.LOG_LEVEL, 'generic-integration');
  logger.info({ version: RELEASE_VERSION, processes }, 'starting');
  await prepareOnce(config, logger);

  const share = processShare(config, processes);
  // Connections are handed to the processes in turn: left to the kernel, a few processes take most.
  cluster.schedulingPolicy = cluster.SCHED_RR;
  const slots = new Map<number, Worker>();
  const answerMetrics = answerMetricsRequests();
  /** The lease owner of each listening process, and the owners of ended ones no live process took over yet. */
  const owners = new Map<Worker, string>();
  const orphans: string[] = [];
  let stopping = false;
  const handOver = () => {
    const heir = [...slots.values()].find((worker) => owners.has(worker) && worker.isConnected());
    if (!heir) return;
    for (const owner of orphans.splice(0)) heir.send({ kind: 'gi:take-over', owner } satisfies TakeOverNotice, () => undefined);
  };

  const fork = (index: number, recoverAtStart: boolean): Promise<ListeningNotice> => {
    const startedAt = Date.now();
    const worker = cluster.fork({
      [PROCESS_INDEX_ENV]: String(index),
      [RECOVER_ENV]: recoverAtStart ? '1' : '0',
      EXECUTOR_CONCURRENCY: String(share.EXECUTOR_CONCURRENCY),
      SANDBOX_WORKERS: String(share.SANDBOX_WORKERS),
    });
    slots.set(index, worker);
    return new Promise<ListeningNotice>((resolve, reject) => {
      let listened = false;
      worker.on('message', (message: unknown) => {
        if (isRelayNotice(message)) relayNotices(worker.id, message, slots.values());
        else if (answerMetrics(worker, message)) return;
        else if (isListeningNotice(message) && !listened) {
          listened = true;
          if (typeof message.fields.ownerId === 'string') owners.set(worker, message.fields.ownerId);
          resolve(message);
          handOver();
        }
      });
      worker.once('exit', (code, signal) => {
        if (slots.get(index) === worker) slots.delete(index);
        if (!listened) reject(new Error(`Embedded process ${index} ended (${signal ?? `exit code ${code}`}) before it listened.`));
        const owner = owners.get(worker);
        owners.delete(worker);
        if (stopping || !listened) return;
        logger.error({ process: index, pid: worker.process.pid, code, signal }, 'an embedded process ended; starting another in its place');
        // It is gone for sure: the jobs it was running run again now, not once their leases end.
        if (owner) orphans.push(owner);
        handOver();
        setTimeout(() => replace(index), Date.now() - startedAt < EARLY_EXIT_MS ? RESTART_PAUSE_MS : 0).unref();
      });
    });
  };
  const replace = (index: number) => {
    if (stopping) return;
    fork(index, false).then(
      (notice) => logger.info({ process: index, port: notice.port }, 'embedded process replaced'),
      (err) => {
        logger.error({ err, process: index }, 'the replacement process did not start; trying again');
        setTimeout(() => replace(index), RESTART_PAUSE_MS).unref();
      },
    );
  };

  const stopAll = async (signal: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ version: RELEASE_VERSION, signal }, 'shutting down');
    const started = performance.now();
    // Each process stops like a sole one: no new connections, running jobs finish, waits answered.
    await Promise.all([...slots.values()].map((worker) => stopWorker(worker)));
    logger.info({ version: RELEASE_VERSION, signal, shutdownMs: Math.round(performance.now() - started) }, 'stopped');
    logger.flush();
    process.exit(exitCode);
  };
  process.once('SIGTERM', () => void stopAll('SIGTERM', 0));
  process.once('SIGINT', () => void stopAll('SIGINT', 0));

  try {
    const first = await fork(0, true);
    await Promise.all(Array.from({ length: processes - 1 }, (_, i) => fork(i + 1, false)));
    const { process: _index, ownerId: _owner, ...banner } = first.fields;
    logger.info({ port: first.port, version: RELEASE_VERSION, platformVersion: config.PLATFORM_VERSION.join('.'), processes, ...share, ...banner }, 'listening');
  } catch (err) {
    logger.fatal({ err }, 'the embedded processes did not start');
    await stopAll('startup failure', 1);
  }
}

function stopWorker(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    if (worker.isDead()) return resolve();
    worker.once('exit', () => resolve());
    worker.process.kill('SIGTERM');
  });
}

/**
 * What must be made once before the processes start: the SQLite schema (migrations are transactional,
 * but one migrating run keeps the others from waiting on its lock), and the generated admin token,
 * token-signing secret and SECRETS_KEY (made here once and said once; the processes read them).
 */
async function prepareOnce(config: ServiceConfig, logger: Logger): Promise<void> {
  if (!config.ADMIN_TOKEN) announceGenerated(config.DATA_DIR, 'admin-token', 'admin token');
  if (!config.TOKEN_SECRET) loadOrCreateSecret(config.DATA_DIR, 'token-secret');
  withEmbeddedSecretsKey(config, logger);
  if (!mongoUrlOf(config)) await createSqliteStore(sqlitePathOf(config), systemClock).close();
}

