import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { loadOrCreateSecret, mongoUrlOf, parseServiceConfig, processEnvironment, RELEASE_VERSION, sqlitePathOf } from '@gi/config';
import type { ServiceConfig } from '@gi/config';
import { systemClock } from '@gi/domain';
import { createLogger } from '@gi/observability';
import type { Logger } from '@gi/observability';
import { createSqliteStore } from '@gi/store-sqlite';
import { announceGenerated } from './announce-secret';
import { answerMetricsRequests } from './cluster-metrics';
import { relayNotices, isRelayNotice } from './completion-relay';
import { ConnectionHandoff } from './connection-handoff';
import { isListeningNotice, PORT_ENV, PROCESS_INDEX_ENV, RECOVER_ENV } from './embedded-roles';
import type { ListeningNotice, TakeOverNotice } from './embedded-roles';
import { processShare } from './embedded-shares';
import { withEmbeddedSecretsKey } from './open-store';

/** A process that ends this soon after it started is replaced only after a pause (no tight crash loop). */
const EARLY_EXIT_MS = 5_000;
const RESTART_PAUSE_MS = 1_000;

/**
 * The primary of an embedded deployment of several processes (node:cluster, docs/decisions.md): it
 * prepares what must be made once (the schema, the generated secrets), listens on the port, then starts
 * `processes` embedded processes that share the store and serve the connections it hands them in turn
 * (connection-handoff.ts: none is lost with a process that ends). The first recovers what
 * a previous run left before the others start, so none of them can be running it. The primary relays
 * completion notices between them, gathers the metrics of all for the one a scrape reached, replaces a process that dies and has a live one take over the jobs
 * it was running (its queued ones are swept back later), logs one `listening`, and on SIGTERM/SIGINT
 * stops them all gracefully.
 */
export async function runEmbeddedPrimary(processes: number): Promise<void> {
  const config = parseServiceConfig(processEnvironment());
  const logger = createLogger(config.LOG_LEVEL, 'generic-integration');
  logger.info({ version: RELEASE_VERSION, processes }, 'starting');
  await prepareOnce(config, logger);

  const share = processShare(config, processes);
  // Connections are handed to the processes in turn (left to the kernel, a few processes take most), by
  // the primary itself rather than node:cluster's round robin, which lost those handed to a process that
  // had just died.
  const handoff = new ConnectionHandoff();
  const port = await handoff.listen(config.PORT, config.HOST);
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
      [PORT_ENV]: String(port),
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
          handoff.add(worker);
          resolve(message);
          handOver();
        }
      });
      worker.once('exit', (code, signal) => {
        // What it was handed and had not taken goes to the others.
        handoff.remove(worker);
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
    // No new connections; then each process stops like a sole one: running jobs finish, waits answered.
    handoff.close();
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
    logger.info({ port, version: RELEASE_VERSION, platformVersion: config.PLATFORM_VERSION.join('.'), processes, ...share, ...banner }, 'listening');
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

